package client_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

func TestDestinations(t *testing.T) {
	const paused = `{"id":"dst_1","url":"https://hooks.example.com/in","level":"user","types":[],"status":"paused",
	 "paused_at":"2026-11-22T10:00:00.000Z","created_at":"2026-11-22T09:00:00.000Z","updated_at":"2026-11-22T10:00:00.000Z"}`
	const active = `{"id":"dst_1","url":"https://hooks.example.com/in","level":"user","types":[],"status":"active",
	 "created_at":"2026-11-22T09:00:00.000Z","updated_at":"2026-11-22T10:01:00.000Z"}`
	f, c := newFake(t, map[string]answer{
		"POST /v1/destinations/dst_1/pause":       {200, paused},
		"POST /v1/destinations/dst_1/resume":      {200, active},
		"POST /v1/destinations/dst_missing/pause": {404, `{"error":{"type":"not_found","message":"destination \"dst_missing\" not found"}}`},
	})
	ctx := context.Background()
	d, err := c.PauseDestination(ctx, "dst_1")
	if err != nil || d.ID != "dst_1" || d.Status != core.DestinationPaused || d.PausedAt == nil {
		t.Fatalf("pause %+v %v", d, err)
	}
	if r := f.last(t); r.Method != "POST" || r.Path != "/v1/destinations/dst_1/pause" || r.Body != "" || r.Header.Get("Authorization") != "Bearer tok" {
		t.Fatalf("request %+v", r)
	}
	if d, err = c.ResumeDestination(ctx, "dst_1"); err != nil || d.Status != core.DestinationActive || d.PausedAt != nil {
		t.Fatalf("resume %+v %v", d, err)
	}
	if r := f.last(t); r.Path != "/v1/destinations/dst_1/resume" {
		t.Fatalf("request %+v", r)
	}
	_, err = c.PauseDestination(ctx, "dst_missing")
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.Status != 404 || ae.Type != "not_found" {
		t.Fatalf("err %#v", err)
	}
	// An id with a slash stays one path segment.
	if _, err = c.PauseDestination(ctx, "a/b"); !errors.As(err, &ae) || !strings.Contains(ae.Message, "/v1/destinations/a%2Fb/pause") {
		t.Fatalf("err %v", err)
	}
}
