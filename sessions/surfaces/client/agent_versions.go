package client

import (
	"context"
	"net/http"

	"github.com/switchboardhq/switchboard/core"
)

// GetAgentVersion returns version n of the agent with this id (or name);
// the server answers 404 for a version it does not have.
func (c *Client) GetAgentVersion(ctx context.Context, id string, n int) (*core.Agent, error) {
	var a core.Agent
	if err := c.do(ctx, request{method: http.MethodGet, path: pathf("/v1/agents/%s", id), query: versionQuery(n)}, &a); err != nil {
		return nil, err
	}
	return &a, nil
}
