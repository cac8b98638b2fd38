package linear

import (
	"context"

	"github.com/mark3labs/mcp-go/server"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/providers/linear/linearapi"
)

// ToolServer is the session's in-process MCP server: linearapi's tools
// (one per operation marked @tool: get_issue, search_issues,
// create_comment, update_issue, create_issue, list_teams,
// list_workflow_states, list_users), offered as mcp_linear_<tool> and run
// as the installation's app user. The server is kept per session (the MCP
// bridge keys its connection on the pointer).
func (p *Provider) ToolServer(ctx context.Context, s *core.Session) (*server.MCPServer, error) {
	if s.Origin == nil || s.Origin.Provider != Name {
		return nil, nil
	}
	in, err := p.sessionInstallation(ctx, s)
	if err != nil || !in.HasToken {
		return nil, nil // not installed, or revoked: no platform tools
	}
	return p.tools.Get(s.ID, in.ID, func() *server.MCPServer { return linearapi.ToolServer(Name, p.client(in)) }), nil
}

// forgetTools drops the tool servers of an installation whose tokens
// changed or went away.
func (p *Provider) forgetTools(installation string) {
	p.tools.Forget(func(k string) bool { return k == installation })
}
