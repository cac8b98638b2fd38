package client

import (
	"context"
	"net/http"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
)

// EnvironmentParams is the body of environment create and update.
// Pointers tell given from absent: on update the given fields replace the
// stored ones.
type EnvironmentParams struct {
	Name               *string             `json:"name,omitempty"`
	Description        *string             `json:"description,omitempty"`
	Image              *string             `json:"image,omitempty"`
	Packages           *core.Packages      `json:"packages,omitempty"`
	Env                *map[string]string  `json:"env,omitempty"`
	Network            *core.NetworkPolicy `json:"network,omitempty"`
	Credentials        *[]string           `json:"credentials,omitempty"`
	Resources          *core.Resources     `json:"resources,omitempty"`
	IdleTimeoutSeconds *int                `json:"idle_timeout_seconds,omitempty"`
	Metadata           *map[string]string  `json:"metadata,omitempty"`
}

// CreateEnvironment creates an environment.
func (c *Client) CreateEnvironment(ctx context.Context, p EnvironmentParams) (*core.Environment, error) {
	var e core.Environment
	if err := c.do(ctx, request{method: http.MethodPost, path: "/v1/environments", body: p}, &e); err != nil {
		return nil, err
	}
	return &e, nil
}

// ListEnvironments returns one page of environments.
func (c *Client) ListEnvironments(ctx context.Context, p ListParams) (*web.Page[core.Environment], error) {
	var page web.Page[core.Environment]
	if err := c.do(ctx, request{method: http.MethodGet, path: "/v1/environments", query: p.query()}, &page); err != nil {
		return nil, err
	}
	return &page, nil
}

// GetEnvironment returns the environment with this id (or name).
func (c *Client) GetEnvironment(ctx context.Context, id string) (*core.Environment, error) {
	var e core.Environment
	if err := c.do(ctx, request{method: http.MethodGet, path: pathf("/v1/environments/%s", id)}, &e); err != nil {
		return nil, err
	}
	return &e, nil
}

// UpdateEnvironment replaces the given fields of p on the environment.
func (c *Client) UpdateEnvironment(ctx context.Context, id string, p EnvironmentParams) (*core.Environment, error) {
	var e core.Environment
	if err := c.do(ctx, request{method: http.MethodPost, path: pathf("/v1/environments/%s", id), body: p}, &e); err != nil {
		return nil, err
	}
	return &e, nil
}

// DeleteEnvironment deletes the environment; sessions that name it get a
// tool error naming it at their next sandbox start.
func (c *Client) DeleteEnvironment(ctx context.Context, id string) error {
	return c.do(ctx, request{method: http.MethodDelete, path: pathf("/v1/environments/%s", id)}, nil)
}
