package providers

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/mcpbridge"
	"github.com/switchboardhq/switchboard/core/toolset"
)

// Appender logs events (the store).
type Appender interface {
	Append(ctx context.Context, sessionID string, req core.AppendRequest) ([]core.Event, error)
}

// ToolsetConfig is what Toolset builds sessions' tools from.
type ToolsetConfig struct {
	// Base tools every session gets: the conversation tools, the hands
	// tools when there is a sandbox.
	Base []core.Tool
	// SessionTools add tools that depend on the session and its agent
	// (memory, skills without a sandbox).
	SessionTools []SessionTools
	// Primers give a session what its model knows before the first turn
	// (skills, repository instructions), after the platform's context.
	Primers []Primer
	MCP     *mcpbridge.Pool
	Log     Appender
	Logger  *slog.Logger
}

// Toolset builds each session's tools at the start of each cycle: the
// base tools, the session's own (SessionTools), the agent's custom tools
// under their policies, the platform tools of the provider the session
// came from (an in-process MCP server), and the tools of the agent's MCP
// servers. It is also where a new session is primed: its platform
// context (the thread before the mention) and the primers' instructions
// are logged before its first turn.
func (s *Set) Toolset(cfg ToolsetConfig) func(ctx context.Context, sess *core.Session, a *core.Agent) (*toolset.Registry, error) {
	mcp, logger := cfg.MCP, cfg.Logger
	return func(ctx context.Context, sess *core.Session, a *core.Agent) (*toolset.Registry, error) {
		if err := s.prime(ctx, sess, a, cfg); err != nil {
			return nil, err
		}
		base := cfg.Base
		for _, st := range cfg.SessionTools {
			more, err := st.Tools(ctx, sess, a)
			if err != nil {
				return nil, err
			}
			base = append(base[:len(base):len(base)], more...)
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
		servers, err := s.platformServers(ctx, sess)
		if err != nil {
			return nil, err
		}
		granted, err := s.grantedServer(ctx, sess, a)
		if err != nil {
			return nil, err
		}
		servers = append(servers, granted...)
		if len(a.MCPServers) == 0 && len(servers) == 0 {
			return reg, nil
		}
		for _, spec := range a.MCPServers {
			servers = append(servers, mcpbridge.External(spec))
		}
		// A server that is down is left out here and its calls fail as tool
		// errors: it never fails the cycle.
		entries, err := mcp.Tools(ctx, sess.ID, servers)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if err := reg.Add(e.Tool, e.Policy); err != nil {
				logger.Warn("MCP tool not offered", "session_id", sess.ID, "tool", e.Tool.Def().Name, "err", err)
			}
		}
		return reg, nil
	}
}

// prime logs, in one append, the platform context and the primers'
// instructions of a session that has not run yet.
func (s *Set) prime(ctx context.Context, sess *core.Session, a *core.Agent, cfg ToolsetConfig) error {
	if sess.LastSeq != 0 {
		return nil
	}
	var evs []core.Event
	if sess.Origin != nil {
		if p, ok := s.origin(sess.Origin.Provider).(ContextPrimer); ok {
			more, err := p.Prime(ctx, sess)
			if err != nil {
				return err
			}
			evs = append(evs, more...)
		}
		// Which granted repository the session is about, when its origin
		// chooses: the model is told, and the checkout clones it.
		c, err := s.chooseRepository(ctx, sess, a)
		if err != nil {
			return err
		}
		if c != nil {
			evs = append(evs, core.NewEvent(core.TypeUserMessage, core.LevelInternal, core.ActorSystem,
				core.MessageBody{Text: choiceNote(c), Kind: core.MessageKindInstructions}))
		}
	}
	for _, p := range cfg.Primers {
		more, err := p.Prime(ctx, sess, a)
		if err != nil {
			return err
		}
		evs = append(evs, more...)
	}
	if len(evs) == 0 {
		return nil
	}
	_, err := cfg.Log.Append(ctx, sess.ID, core.AppendRequest{Events: evs})
	return err
}

// platformServers is the in-process MCP server of the provider the
// session came from, scoped to its installation and thread; it comes
// before the agent's servers, so its name wins.
func (s *Set) platformServers(ctx context.Context, sess *core.Session) ([]mcpbridge.Server, error) {
	if sess.Origin == nil {
		return nil, nil
	}
	ts, ok := s.origin(sess.Origin.Provider).(ToolServer)
	if !ok {
		return nil, nil
	}
	srv, err := ts.ToolServer(ctx, sess)
	if err != nil || srv == nil {
		return nil, err
	}
	return []mcpbridge.Server{mcpbridge.InProcess{Name: ts.Name(), Server: srv}}, nil
}
