package client

import (
	"context"
	"net/http"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
	"github.com/switchboardhq/switchboard/sessions/schedules"
)

// ScheduleParams is the body of schedule create, the server's own.
type ScheduleParams = schedules.Params

// CreateSchedule creates a schedule.
func (c *Client) CreateSchedule(ctx context.Context, p ScheduleParams) (*core.Schedule, error) {
	var out core.Schedule
	if err := c.do(ctx, request{method: http.MethodPost, path: "/v1/schedules", body: p}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListSchedules returns one page of schedules; session, when set, keeps
// a session's.
func (c *Client) ListSchedules(ctx context.Context, session string, p ListParams) (*web.Page[core.Schedule], error) {
	q := p.query()
	if session != "" {
		q.Set("session_id", session)
	}
	var page web.Page[core.Schedule]
	if err := c.do(ctx, request{method: http.MethodGet, path: "/v1/schedules", query: q}, &page); err != nil {
		return nil, err
	}
	return &page, nil
}

// GetSchedule returns a schedule.
func (c *Client) GetSchedule(ctx context.Context, id string) (*core.Schedule, error) {
	return c.scheduleCall(ctx, http.MethodGet, pathf("/v1/schedules/%s", id))
}

// PauseSchedule stops a schedule firing until it is resumed.
func (c *Client) PauseSchedule(ctx context.Context, id string) (*core.Schedule, error) {
	return c.scheduleCall(ctx, http.MethodPost, pathf("/v1/schedules/%s/", id)+"pause")
}

// ResumeSchedule makes a paused schedule due again from now.
func (c *Client) ResumeSchedule(ctx context.Context, id string) (*core.Schedule, error) {
	return c.scheduleCall(ctx, http.MethodPost, pathf("/v1/schedules/%s/", id)+"resume")
}

// DeleteSchedule deletes a schedule.
func (c *Client) DeleteSchedule(ctx context.Context, id string) error {
	return c.do(ctx, request{method: http.MethodDelete, path: pathf("/v1/schedules/%s", id)}, nil)
}

func (c *Client) scheduleCall(ctx context.Context, method, path string) (*core.Schedule, error) {
	var out core.Schedule
	if err := c.do(ctx, request{method: method, path: path}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
