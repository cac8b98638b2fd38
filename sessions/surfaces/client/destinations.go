package client

import (
	"context"
	"net/http"

	"github.com/switchboardhq/switchboard/core"
)

// PauseDestination stops the deliveries of the webhook destination with
// this id until it is resumed; its events keep queueing. A paused
// destination is returned as it is.
func (c *Client) PauseDestination(ctx context.Context, id string) (*core.Destination, error) {
	return c.destinationAction(ctx, id, "pause")
}

// ResumeDestination makes a paused webhook destination active again: its
// deliveries continue where they stopped.
func (c *Client) ResumeDestination(ctx context.Context, id string) (*core.Destination, error) {
	return c.destinationAction(ctx, id, "resume")
}

func (c *Client) destinationAction(ctx context.Context, id, action string) (*core.Destination, error) {
	var d core.Destination
	if err := c.do(ctx, request{method: http.MethodPost, path: pathf("/v1/destinations/%s/", id) + action}, &d); err != nil {
		return nil, err
	}
	return &d, nil
}
