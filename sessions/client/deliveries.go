package client

import (
	"context"
	"net/http"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
)

// DeliveryParams selects webhook deliveries: of one destination, of one
// session, in one state; empty fields select all.
type DeliveryParams struct {
	Destination string
	Session     string
	State       core.DeliveryState
	ListParams
}

// ListDeliveries returns one page of webhook deliveries in id order
// (oldest first).
func (c *Client) ListDeliveries(ctx context.Context, p DeliveryParams) (*web.Page[core.Delivery], error) {
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
