package mcpbridge

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/settings"
)

// StdioAllowEnv names the setting that lists the executables stdio MCP
// servers may run. A stdio server runs as the gateway's user, so naming a
// command on an agent is running it on the host: the admin decides which
// ones, once, at start.
const StdioAllowEnv = "SWITCHBOARD_MCP_STDIO_ALLOW"

// StdioAllow is the set of executables stdio servers may run, matched
// exactly against a spec's command. The zero value allows none.
type StdioAllow struct {
	paths map[string]bool
}

// NewStdioAllow allows the given absolute, clean paths.
func NewStdioAllow(paths ...string) (StdioAllow, error) {
	a := StdioAllow{paths: map[string]bool{}}
	for _, p := range paths {
		if !filepath.IsAbs(p) || filepath.Clean(p) != p {
			return StdioAllow{}, fmt.Errorf("%s: %q: want an absolute, clean path of an executable", StdioAllowEnv, p)
		}
		a.paths[p] = true
	}
	return a, nil
}

// LoadStdioAllow reads StdioAllowEnv: comma-separated paths, empty for none.
func LoadStdioAllow(v settings.Values) (StdioAllow, error) {
	var paths []string
	for _, p := range strings.Split(v[StdioAllowEnv], ",") {
		if p = strings.TrimSpace(p); p != "" {
			paths = append(paths, p)
		}
	}
	return NewStdioAllow(paths...)
}

// Allows reports whether command may be run.
func (a StdioAllow) Allows(command string) bool { return a.paths[command] }

// Check refuses, as core.ErrInvalid, the first stdio server of specs whose
// command is not allowed.
func (a StdioAllow) Check(specs []core.MCPServerSpec) error {
	for i, s := range specs {
		if s.Transport == core.TransportStdio && !a.Allows(s.Command) {
			return fmt.Errorf("mcp_servers[%d] %q: command %q is not in %s, the absolute paths of the executables stdio servers may run: %w",
				i, s.Name, s.Command, StdioAllowEnv, core.ErrInvalid)
		}
	}
	return nil
}

// AgentLister pages through the stored agents.
type AgentLister interface {
	ListAgents(ctx context.Context, after string, limit int) ([]*core.Agent, bool, error)
}

// WarnDisallowed logs one warning per stored agent that names a stdio
// server the allowlist refuses: such agents were created before the list
// or under another one, and their servers will not be started.
func WarnDisallowed(ctx context.Context, agents AgentLister, a StdioAllow, log *slog.Logger) error {
	after := ""
	for {
		page, more, err := agents.ListAgents(ctx, after, 100)
		if err != nil {
			return fmt.Errorf("list agents: %w", err)
		}
		for _, ag := range page {
			if err := a.Check(ag.MCPServers); err != nil {
				log.Warn("agent names a stdio MCP server that will not be started", "agent_id", ag.ID, "agent", ag.Name, "err", err)
			}
		}
		if !more || len(page) == 0 {
			return nil
		}
		after = page[len(page)-1].ID
	}
}
