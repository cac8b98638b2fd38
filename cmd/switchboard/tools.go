package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/harness"
	"github.com/switchboardhq/switchboard/core/mcpbridge"
	"github.com/switchboardhq/switchboard/core/toolset"
	"github.com/switchboardhq/switchboard/providers"
	"github.com/switchboardhq/switchboard/sessions/runtime"
)

// toolsetFor builds each session's tools: the conversation tools, the
// hands tools when there is a sandbox, the agent's custom tools under their
// policies, the platform tools of the provider the session came from (an
// in-process MCP server), the tools of the agent's MCP servers, and, in
// builds with the switchboard_testtools tag, the test tools of
// testtools.go.
//
// It runs at the start of every cycle, before the harness: that is also
// where a new session gets its platform context (the thread before the
// mention), logged through appender before its first turn.
func toolsetFor(getenv func(string) string, handsTools []core.Tool, mcp *mcpbridge.Pool, gw *gateway, appender appender, log *slog.Logger) runtime.Toolset {
	base := append(append(harness.Conversation(), handsTools...), testTools(getenv)...)
	toolServers, primers := gw.toolServers(), gw.primers()
	return func(ctx context.Context, s *core.Session, a *core.Agent) (*toolset.Registry, error) {
		if err := prime(ctx, s, primers, appender); err != nil {
			return nil, err
		}
		reg, err := toolset.New(base...)
		if err != nil {
			return nil, err
		}
		for _, spec := range a.Tools {
			policy, err := core.ParsePolicy(spec.Policy)
			if err != nil {
				return nil, fmt.Errorf("agent %s tool %q: %w", a.ID, spec.Name, err)
			}
			if err := reg.Add(toolset.CustomTool{Spec: spec}, policy); err != nil {
				return nil, fmt.Errorf("agent %s: %w", a.ID, err)
			}
		}
		servers, err := platformServers(ctx, s, toolServers)
		if err != nil {
			return nil, err
		}
		if len(a.MCPServers) == 0 && len(servers) == 0 {
			return reg, nil
		}
		for _, spec := range a.MCPServers {
			servers = append(servers, mcpbridge.External(spec))
		}
		// A server that is down is left out here and its calls fail as tool
		// errors: it never fails the cycle.
		entries, err := mcp.Tools(ctx, s.ID, servers)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if err := reg.Add(e.Tool, e.Policy); err != nil {
				log.Warn("MCP tool not offered", "session_id", s.ID, "tool", e.Tool.Def().Name, "err", err)
			}
		}
		return reg, nil
	}
}

// noteModel adds a note to the system prompt of every request.
type noteModel struct {
	core.Model
	note string
}

func (m noteModel) Generate(ctx context.Context, req core.ModelRequest) (*core.ModelResponse, error) {
	if req.System == "" {
		req.System = m.note
	} else {
		req.System += "\n\n" + m.note
	}
	return m.Model.Generate(ctx, req)
}

// archivingStore releases what a session holds outside the store (its
// sandbox, its MCP connections) when the session is archived.
type archivingStore struct {
	core.Store
	release []func(ctx context.Context, sessionID string) error
	log     *slog.Logger
}

func (a archivingStore) Archive(ctx context.Context, sessionID string) (*core.Session, error) {
	s, err := a.Store.Archive(ctx, sessionID)
	if err != nil {
		return s, err
	}
	for _, release := range a.release {
		if err := release(ctx, sessionID); err != nil {
			// Leftovers are reaped at the next start.
			a.log.Warn("release an archived session's resources", "session_id", sessionID, "err", err)
		}
	}
	return s, nil
}

// appender logs events (the runtime's store).
type appender interface {
	Append(ctx context.Context, sessionID string, req core.AppendRequest) ([]core.Event, error)
}

// prime logs the platform context of a session that has not run yet.
func prime(ctx context.Context, s *core.Session, primers []providers.ContextPrimer, log appender) error {
	if s.Origin == nil || s.LastSeq != 0 {
		return nil
	}
	for _, p := range primers {
		if p.Name() != s.Origin.Provider {
			continue
		}
		evs, err := p.Prime(ctx, s)
		if err != nil || len(evs) == 0 {
			return err
		}
		_, err = log.Append(ctx, s.ID, core.AppendRequest{Events: evs})
		return err
	}
	return nil
}

// platformServers is the in-process MCP server of the provider the
// session came from, scoped to its installation and thread; it comes
// before the agent's servers, so its name wins.
func platformServers(ctx context.Context, s *core.Session, servers []providers.ToolServer) ([]mcpbridge.Server, error) {
	if s.Origin == nil {
		return nil, nil
	}
	for _, ts := range servers {
		if ts.Name() != s.Origin.Provider {
			continue
		}
		srv, err := ts.ToolServer(ctx, s)
		if err != nil || srv == nil {
			return nil, err
		}
		return []mcpbridge.Server{mcpbridge.InProcess{Name: ts.Name(), Server: srv}}, nil
	}
	return nil, nil
}
