package linear

import (
	"context"
	"time"

	"github.com/Khan/genqlient/graphql"
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
	return p.tools.Get(s.ID, in.ID, func() *server.MCPServer {
		return linearapi.ToolServer(Name, &budgetedClient{p: p, c: p.client(in), org: in.ExternalID})
	}), nil
}

// budgetedClient runs the model's calls to Linear inside the
// organization's budget (at prioTool), so they share it with the
// activities instead of spending Linear's rate limit behind its back; a
// RATELIMITED answer blocks the organization's calls until the reset, as
// the sink's do. The answer itself reaches the model as a tool error.
type budgetedClient struct {
	p   *Provider
	c   graphql.Client
	org string
}

func (b *budgetedClient) MakeRequest(ctx context.Context, req *graphql.Request, resp *graphql.Response) error {
	if err := b.p.budgets.wait(ctx, b.org, prioTool); err != nil {
		return err
	}
	err := b.c.MakeRequest(ctx, req, resp)
	if wait, limited := linearapi.RateLimited(err); limited {
		until := b.p.cfg.Now().Add(wait)
		if wait <= 0 || wait > time.Hour {
			until = b.p.cfg.Now().Add(5 * time.Second)
		}
		b.p.budgets.block(b.org, until)
	}
	return err
}

// forgetTools drops the tool servers of an installation whose tokens
// changed or went away.
func (p *Provider) forgetTools(installation string) {
	p.tools.Forget(func(k string) bool { return k == installation })
}
