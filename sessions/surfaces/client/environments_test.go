package client_test

import (
	"context"
	"errors"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

const environmentJSON = `{"id":"env_1","name":"tools","packages":{"apt":["jq"]},"network":{"mode":"allowlist","allowed_hosts":["api.github.com"]},
 "resources":{"memory_mb":512},"created_at":"2026-11-22T10:00:00.123Z","updated_at":"2026-11-22T10:00:01.000Z"}`

func TestEnvironments(t *testing.T) {
	f, c := newFake(t, map[string]answer{
		"POST /v1/environments":         {201, environmentJSON},
		"GET /v1/environments":          {200, `{"data":[` + environmentJSON + `],"has_more":false}`},
		"GET /v1/environments/tools":    {200, environmentJSON},
		"POST /v1/environments/env_1":   {200, environmentJSON},
		"DELETE /v1/environments/env_1": {204, ``},
		"DELETE /v1/environments/gone":  {404, `{"error":{"type":"not_found","message":"environment \"gone\" not found"}}`},
	})
	ctx := context.Background()
	name := "tools"
	e, err := c.CreateEnvironment(ctx, client.EnvironmentParams{Name: &name, Packages: &core.Packages{Apt: []string{"jq"}},
		Network: &core.NetworkPolicy{Mode: "allowlist", AllowedHosts: []string{"api.github.com"}}})
	if err != nil || e.ID != "env_1" || e.Resources.MemoryMB != 512 || e.CreatedAt.IsZero() {
		t.Fatalf("create %+v %v", e, err)
	}
	jsonEq(t, f.last(t).Body, `{"name":"tools","packages":{"apt":["jq"]},"network":{"mode":"allowlist","allowed_hosts":["api.github.com"]}}`)

	page, err := c.ListEnvironments(ctx, client.ListParams{Limit: 10})
	if err != nil || len(page.Data) != 1 || page.Data[0].Network.Mode != "allowlist" {
		t.Fatalf("list %+v %v", page, err)
	}
	if q := f.last(t).Query; q != "limit=10" {
		t.Fatalf("query %q", q)
	}
	if e, err = c.GetEnvironment(ctx, "tools"); err != nil || e.Packages.Apt[0] != "jq" {
		t.Fatalf("get %+v %v", e, err)
	}
	idle := 60
	if _, err = c.UpdateEnvironment(ctx, "env_1", client.EnvironmentParams{IdleTimeoutSeconds: &idle}); err != nil {
		t.Fatal(err)
	}
	jsonEq(t, f.last(t).Body, `{"idle_timeout_seconds":60}`)
	if err := c.DeleteEnvironment(ctx, "env_1"); err != nil {
		t.Fatal(err)
	}
	var ae *client.APIError
	if err := c.DeleteEnvironment(ctx, "gone"); !errors.As(err, &ae) || ae.Status != 404 {
		t.Fatalf("delete of a missing one: %v", err)
	}
}

func TestGetAgentVersion(t *testing.T) {
	f, c := newFake(t, map[string]answer{"GET /v1/agents/helper": {200, agentJSON}})
	a, err := c.GetAgentVersion(context.Background(), "helper", 2)
	if err != nil || a.Version != 2 {
		t.Fatalf("get %+v %v", a, err)
	}
	if r := f.last(t); r.Query != "version=2" {
		t.Fatalf("query %q", r.Query)
	}
}
