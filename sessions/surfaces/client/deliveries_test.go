package client_test

import (
	"context"
	"errors"
	"net/url"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

func TestDestinationsAndDeliveries(t *testing.T) {
	const dest = `{"id":"dst_1","url":"https://hooks.example.com/in","level":"internal","types":[],"status":"active",
	 "created_at":"2030-01-02T03:04:05.000Z","updated_at":"2030-01-02T03:04:05.000Z"}`
	const dead = `{"id":"dlv_1","destination_id":"dst_1","session_id":"ses_1","event_id":"evt_1","event_type":"agent.message","seq":4,
	 "state":"dead","attempt_count":7,"attempts":[{"at":"2030-01-02T03:05:00.000Z","status_code":500,"latency_ms":12,"error":"HTTP 500"}],
	 "created_at":"2030-01-02T03:04:05.000Z","updated_at":"2030-01-02T03:05:00.000Z"}`
	const pending = `{"id":"dlv_1","destination_id":"dst_1","session_id":"ses_1","event_id":"evt_1","event_type":"agent.message","seq":4,
	 "state":"pending","attempt_count":7,"attempts":[],"created_at":"2030-01-02T03:04:05.000Z","updated_at":"2030-01-02T03:06:00.000Z"}`
	f, c := newFake(t, map[string]answer{
		"POST /v1/destinations":               {201, `{"id":"dst_1","url":"https://hooks.example.com/in","level":"internal","types":[],"status":"active","secret":"whsec_abc","created_at":"2030-01-02T03:04:05.000Z","updated_at":"2030-01-02T03:04:05.000Z"}`},
		"GET /v1/destinations":                {200, `{"data":[` + dest + `],"has_more":false}`},
		"GET /v1/destinations/dst_1":          {200, dest},
		"DELETE /v1/destinations/dst_1":       {204, ""},
		"GET /v1/deliveries":                  {200, `{"data":[` + dead + `],"has_more":true}`},
		"GET /v1/deliveries/dlv_1":            {200, dead},
		"POST /v1/deliveries/dlv_1/redeliver": {202, pending},
		"POST /v1/deliveries/dlv_2/redeliver": {409, `{"error":{"type":"conflict","message":"delivery \"dlv_2\" is pending"}}`},
	})
	ctx := context.Background()

	d, err := c.CreateDestination(ctx, core.DestinationSpec{URL: "https://hooks.example.com/in", Level: core.LevelUser})
	if err != nil || d.ID != "dst_1" || d.Secret != "whsec_abc" {
		t.Fatalf("create %+v %v", d, err)
	}
	jsonEq(t, f.last(t).Body, `{"url":"https://hooks.example.com/in","level":"user"}`)
	list, err := c.ListDestinations(ctx, client.DestinationListParams{Agent: "support", ListParams: client.ListParams{Limit: 10}})
	if err != nil || len(list.Data) != 1 {
		t.Fatalf("list %+v %v", list, err)
	}
	if q, _ := url.ParseQuery(f.last(t).Query); q.Get("agent") != "support" || q.Get("limit") != "10" || q.Has("session") {
		t.Fatalf("query %q", f.last(t).Query)
	}
	if got, err := c.GetDestination(ctx, "dst_1"); err != nil || got.Status != core.DestinationActive {
		t.Fatalf("get %+v %v", got, err)
	}
	if err := c.DeleteDestination(ctx, "dst_1"); err != nil || f.last(t).Method != "DELETE" {
		t.Fatalf("delete %v", err)
	}

	page, err := c.ListDeliveries(ctx, client.DeliveryListParams{State: core.DeliveryDead, Destination: "dst_1", ListParams: client.ListParams{After: "dlv_0"}})
	if err != nil || len(page.Data) != 1 || !page.HasMore || page.Data[0].Attempts[0].StatusCode != 500 {
		t.Fatalf("deliveries %+v %v", page, err)
	}
	if q, _ := url.ParseQuery(f.last(t).Query); q.Get("state") != "dead" || q.Get("destination") != "dst_1" || q.Get("after") != "dlv_0" || q.Has("session") {
		t.Fatalf("query %q", f.last(t).Query)
	}
	if got, err := c.GetDelivery(ctx, "dlv_1"); err != nil || got.EventType != "agent.message" || got.AttemptCount != 7 {
		t.Fatalf("get delivery %+v %v", got, err)
	}
	got, err := c.Redeliver(ctx, "dlv_1")
	if err != nil || got.State != core.DeliveryPending {
		t.Fatalf("redeliver %+v %v", got, err)
	}
	if r := f.last(t); r.Method != "POST" || r.Path != "/v1/deliveries/dlv_1/redeliver" || r.Body != "" {
		t.Fatalf("request %+v", r)
	}
	_, err = c.Redeliver(ctx, "dlv_2")
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.Status != 409 {
		t.Fatalf("pending redeliver %#v", err)
	}
}
