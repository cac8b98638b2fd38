package client

import (
	"context"
	"net/http"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
)

// DestinationListParams selects destinations: a session's, the global
// ones limited to an agent (id or name), or all of them (both empty).
type DestinationListParams struct {
	Session string
	Agent   string
	ListParams
}

// DeliveryListParams selects deliveries (all of them when empty), in the
// order they were made.
type DeliveryListParams struct {
	Destination string
	Session     string
	State       core.DeliveryState
	ListParams
}

// CreateDestination creates a global destination. When the server
// generated its secret the answer carries it, the only time it is shown.
func (c *Client) CreateDestination(ctx context.Context, spec core.DestinationSpec) (*core.CreatedDestination, error) {
	var d core.CreatedDestination
	if err := c.do(ctx, request{method: http.MethodPost, path: "/v1/destinations", body: spec}, &d); err != nil {
		return nil, err
	}
	return &d, nil
}

// ListDestinations returns one page of destinations.
func (c *Client) ListDestinations(ctx context.Context, p DestinationListParams) (*web.Page[core.Destination], error) {
	q := p.query()
	if p.Session != "" {
		q.Set("session", p.Session)
	}
	if p.Agent != "" {
		q.Set("agent", p.Agent)
	}
	var page web.Page[core.Destination]
	if err := c.do(ctx, request{method: http.MethodGet, path: "/v1/destinations", query: q}, &page); err != nil {
		return nil, err
	}
	return &page, nil
}

// GetDestination returns the destination with this id.
func (c *Client) GetDestination(ctx context.Context, id string) (*core.Destination, error) {
	var d core.Destination
	if err := c.do(ctx, request{method: http.MethodGet, path: pathf("/v1/destinations/%s", id)}, &d); err != nil {
		return nil, err
	}
	return &d, nil
}

// DeleteDestination deletes a destination; its pending deliveries end
// dead.
func (c *Client) DeleteDestination(ctx context.Context, id string) error {
	return c.do(ctx, request{method: http.MethodDelete, path: pathf("/v1/destinations/%s", id)}, nil)
}

// ListDeliveries returns one page of deliveries.
func (c *Client) ListDeliveries(ctx context.Context, p DeliveryListParams) (*web.Page[core.Delivery], error) {
	q := p.query()
	for k, v := range map[string]string{"destination": p.Destination, "session": p.Session, "state": string(p.State)} {
		if v != "" {
			q.Set(k, v)
		}
	}
	var page web.Page[core.Delivery]
	if err := c.do(ctx, request{method: http.MethodGet, path: "/v1/deliveries", query: q}, &page); err != nil {
		return nil, err
	}
	return &page, nil
}

// GetDelivery returns a delivery with its recent attempts.
func (c *Client) GetDelivery(ctx context.Context, id string) (*core.Delivery, error) {
	var d core.Delivery
	if err := c.do(ctx, request{method: http.MethodGet, path: pathf("/v1/deliveries/%s", id)}, &d); err != nil {
		return nil, err
	}
	return &d, nil
}

// Redeliver makes a delivered or dead delivery pending again, due at
// once; a pending one is refused (409 conflict).
func (c *Client) Redeliver(ctx context.Context, id string) (*core.Delivery, error) {
	var d core.Delivery
	if err := c.do(ctx, request{method: http.MethodPost, path: pathf("/v1/deliveries/%s/redeliver", id)}, &d); err != nil {
		return nil, err
	}
	return &d, nil
}
