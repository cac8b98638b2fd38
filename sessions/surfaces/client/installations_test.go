package client_test

import (
	"context"
	"errors"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

const installationJSON = `{"id":"ins_1","provider":"slack","external_id":"T0ONE","name":"One","agent":"agt_1",
 "policy":{"channels":["C1"],"users":[]},"has_token":true,"token_expires_at":"2026-11-22T22:00:00.000Z",
 "created_at":"2026-11-22T10:00:00.000Z","updated_at":"2026-11-22T10:00:01.000Z"}`

func TestInstallations(t *testing.T) {
	f, c := newFake(t, map[string]answer{
		"GET /v1/installations":              {200, `{"data":[` + installationJSON + `],"has_more":false}`},
		"GET /v1/installations/ins_1":        {200, installationJSON},
		"POST /v1/installations/ins_1":       {200, installationJSON},
		"DELETE /v1/installations/ins_1":     {204, ``},
		"DELETE /v1/installations/ins_gone":  {404, `{"error":{"type":"not_found","message":"installation \"ins_gone\" not found"}}`},
		"POST /v1/installations/ins_refused": {400, `{"error":{"type":"invalid_request","message":"agent \"nope\" not found"}}`},
	})
	ctx := context.Background()

	page, err := c.ListInstallations(ctx, "slack", client.ListParams{Limit: 5})
	if err != nil || len(page.Data) != 1 || page.Data[0].Name != "One" || !page.Data[0].HasToken || page.Data[0].TokenExpiresAt == nil {
		t.Fatalf("list %+v %v", page, err)
	}
	if q := f.last(t).Query; q != "limit=5&provider=slack" {
		t.Fatalf("query %q", q)
	}
	in, err := c.GetInstallation(ctx, "ins_1")
	if err != nil || in.Agent != "agt_1" || len(in.Policy.Channels) != 1 {
		t.Fatalf("get %+v %v", in, err)
	}

	empty := ""
	tests := []struct {
		name string
		p    client.InstallationParams
		want string
	}{
		{"bind an agent", client.InstallationParams{Agent: new("helper")}, `{"agent":"helper"}`},
		{"unbind", client.InstallationParams{Agent: &empty}, `{"agent":""}`},
		{"policy alone", client.InstallationParams{Policy: &core.AccessPolicy{Users: []string{"U1"}}}, `{"policy":{"channels":[],"users":["U1"]}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := c.UpdateInstallation(ctx, "ins_1", tt.p); err != nil {
				t.Fatal(err)
			}
			r := f.last(t)
			if r.Method != "POST" || r.Path != "/v1/installations/ins_1" {
				t.Fatalf("request %+v", r)
			}
			jsonEq(t, r.Body, tt.want)
		})
	}
	_, err = c.UpdateInstallation(ctx, "ins_refused", client.InstallationParams{Agent: new("nope")})
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.Status != 400 || ae.Message != `agent "nope" not found` {
		t.Fatalf("refusal %#v", err)
	}

	if err := c.DeleteInstallation(ctx, "ins_1"); err != nil {
		t.Fatal(err)
	}
	if r := f.last(t); r.Method != "DELETE" || r.Path != "/v1/installations/ins_1" {
		t.Fatalf("request %+v", r)
	}
	if err := c.DeleteInstallation(ctx, "ins_gone"); !errors.As(err, &ae) || ae.Status != 404 {
		t.Fatalf("delete missing: %v", err)
	}
}

func TestDeliveries(t *testing.T) {
	dead := `{"id":"dlv_1","destination_id":"dst_1","session_id":"ses_1","event_id":"evt_1","event_type":"session.status_idle","seq":3,
	 "state":"dead","attempt_count":2,"attempts":[{"at":"2026-11-22T10:00:00.000Z","status_code":500,"latency_ms":12}],
	 "created_at":"2026-11-22T10:00:00.000Z","updated_at":"2026-11-22T10:05:00.000Z"}`
	f, c := newFake(t, map[string]answer{"GET /v1/deliveries": {200, `{"data":[` + dead + `],"has_more":true}`}})
	page, err := c.ListDeliveries(context.Background(), client.DeliveryListParams{State: core.DeliveryDead, ListParams: client.ListParams{After: "dlv_0", Limit: 1000}})
	if err != nil || len(page.Data) != 1 || !page.HasMore || page.Data[0].State != core.DeliveryDead || page.Data[0].Attempts[0].StatusCode != 500 {
		t.Fatalf("list %+v %v", page, err)
	}
	if q := f.last(t).Query; q != "after=dlv_0&limit=1000&state=dead" {
		t.Fatalf("query %q", q)
	}
}
