package client

import (
	"context"
	"net/http"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
)

// InstallationParams is the body of an installation update: only the
// given fields replace the installation's.
type InstallationParams struct {
	// Agent binds the agent with this id or name; a pointer to "" unbinds
	// it, so the agent named default serves the installation again.
	Agent *string `json:"agent,omitempty"`
	// Policy replaces who may trigger the agent; empty lists allow
	// everyone.
	Policy *core.AccessPolicy `json:"policy,omitempty"`
}

// ListInstallations returns one page of installations in id order, of one
// provider ("slack", "github", "linear") or of all when provider is "".
func (c *Client) ListInstallations(ctx context.Context, provider string, p ListParams) (*web.Page[core.Installation], error) {
	q := p.query()
	if provider != "" {
		q.Set("provider", provider)
	}
	var page web.Page[core.Installation]
	if err := c.do(ctx, request{method: http.MethodGet, path: "/v1/installations", query: q}, &page); err != nil {
		return nil, err
	}
	return &page, nil
}

// GetInstallation returns the installation with this id.
func (c *Client) GetInstallation(ctx context.Context, id string) (*core.Installation, error) {
	var in core.Installation
	if err := c.do(ctx, request{method: http.MethodGet, path: pathf("/v1/installations/%s", id)}, &in); err != nil {
		return nil, err
	}
	return &in, nil
}

// UpdateInstallation binds the installation to an agent or sets its
// trigger policy, as p gives.
func (c *Client) UpdateInstallation(ctx context.Context, id string, p InstallationParams) (*core.Installation, error) {
	var in core.Installation
	if err := c.do(ctx, request{method: http.MethodPost, path: pathf("/v1/installations/%s", id), body: p}, &in); err != nil {
		return nil, err
	}
	return &in, nil
}

// DeleteInstallation revokes the installation's tokens at the platform
// and forgets it, its agent binding and policy included.
func (c *Client) DeleteInstallation(ctx context.Context, id string) error {
	return c.do(ctx, request{method: http.MethodDelete, path: pathf("/v1/installations/%s", id)}, nil)
}
