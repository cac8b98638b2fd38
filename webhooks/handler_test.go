package webhooks

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

type apiError struct {
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

func TestHandlerRefusals(t *testing.T) {
	e := newEnv(t, Config{AllowPrivate: false})
	sess := e.session(nil)
	if _, err := e.store.Archive(t.Context(), sess.ID); err != nil {
		t.Fatal(err)
	}
	live := e.session(nil)
	agent, err := e.store.CreateAgent(t.Context(), &core.Agent{Name: "bot", Model: "anthropic/x"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, method, path string
		body               any
		token              string
		status             int
		typ, mention       string
	}{
		{"client token", "GET", "/v1/destinations", nil, "client", 401, "unauthorized", "admin token"},
		{"unknown field", "POST", "/v1/destinations", `{"url":"https://x.example/","colour":"red"}`, "", 400, "invalid_request", "colour"},
		{"empty body", "POST", "/v1/destinations", "", "", 400, "invalid_request", "empty"},
		{"no url", "POST", "/v1/destinations", map[string]any{"level": "user"}, "", 400, "invalid_request", `"url" is required`},
		{"relative url", "POST", "/v1/destinations", map[string]any{"url": "/hook"}, "", 400, "invalid_request", "absolute"},
		{"private literal", "POST", "/v1/destinations", map[string]any{"url": "http://10.0.0.8/"}, "", 400, "invalid_request", "private address"},
		{"metadata literal", "POST", "/v1/destinations", map[string]any{"url": "http://169.254.169.254/"}, "", 400, "invalid_request", "link-local"},
		{"bad level", "POST", "/v1/destinations", map[string]any{"url": "https://x.example/", "level": "all"}, "", 400, "invalid_request", "level"},
		{"unknown type", "POST", "/v1/destinations", map[string]any{"url": "https://x.example/", "types": []string{"agent.mesage"}}, "", 400, "invalid_request", "agent.mesage"},
		{"bad secret", "POST", "/v1/destinations", map[string]any{"url": "https://x.example/", "secret": "hunter2"}, "", 400, "invalid_request", "whsec_"},
		{"short secret", "POST", "/v1/destinations", map[string]any{"url": "https://x.example/", "secret": "whsec_c2hvcnQ="}, "", 400, "invalid_request", "bytes"},
		{"unknown agent", "POST", "/v1/destinations", map[string]any{"url": "https://x.example/", "agent": "nobody"}, "", 404, "not_found", "nobody"},
		{"agent on a session", "POST", "/v1/sessions/" + live.ID + "/destinations", map[string]any{"url": "https://x.example/", "agent": "a"}, "", 400, "invalid_request", "agent"},
		{"missing session", "POST", "/v1/sessions/ses_missing/destinations", map[string]any{"url": "https://x.example/"}, "", 404, "not_found", "ses_missing"},
		{"archived session", "POST", "/v1/sessions/" + sess.ID + "/destinations", map[string]any{"url": "https://x.example/"}, "", 409, "conflict", "archived"},
		{"missing destination", "GET", "/v1/destinations/dst_missing", nil, "", 404, "not_found", "dst_missing"},
		{"delete missing", "DELETE", "/v1/destinations/dst_missing", nil, "", 404, "not_found", "dst_missing"},
		{"resume missing", "POST", "/v1/destinations/dst_missing/resume", nil, "", 404, "not_found", "dst_missing"},
		{"pause missing", "POST", "/v1/destinations/dst_missing/pause", nil, "", 404, "not_found", "dst_missing"},
		{"pause with a client token", "POST", "/v1/destinations/dst_missing/pause", nil, "client", 401, "unauthorized", "admin token"},
		{"bad state", "GET", "/v1/deliveries?state=lost", nil, "", 400, "invalid_request", "state"},
		{"bad limit", "GET", "/v1/deliveries?limit=0", nil, "", 400, "invalid_request", "limit"},
		{"missing delivery", "GET", "/v1/deliveries/dlv_missing", nil, "", 404, "not_found", "dlv_missing"},
		{"redeliver missing", "POST", "/v1/deliveries/dlv_missing/redeliver", nil, "", 404, "not_found", "dlv_missing"},
		{"two filters", "GET", "/v1/destinations?session=" + live.ID + "&agent=" + agent.ID, nil, "", 400, "invalid_request", "give one"},
		{"unknown agent filter", "GET", "/v1/destinations?agent=nobody", nil, "", 404, "not_found", "nobody"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			token := tc.token
			if token == "" {
				token = "admin"
			}
			var got apiError
			code := e.callAs(token, tc.method, tc.path, tc.body, &got)
			if code != tc.status || got.Error.Type != tc.typ || !strings.Contains(got.Error.Message, tc.mention) {
				t.Fatalf("%d %+v; want %d %s mentioning %q", code, got.Error, tc.status, tc.typ, tc.mention)
			}
		})
	}
}

func TestHandlerLifecycle(t *testing.T) {
	e := newEnv(t, fastConfig())
	sess := e.session(nil)
	agent, err := e.store.CreateAgent(t.Context(), &core.Agent{Name: "bot", Model: "anthropic/x"})
	if err != nil {
		t.Fatal(err)
	}
	global := e.destination("/v1/destinations", map[string]any{"url": "https://a.example/in", "secret": "generate", "level": "progress", "types": []string{"agent.message", "agent.message"}})
	if global.Secret == "" || global.Level != core.LevelProgress || len(global.Types) != 1 || global.SessionID != "" {
		t.Fatalf("global = %+v", global)
	}
	forBot := e.destination("/v1/destinations", map[string]any{"url": "https://b.example/in", "agent": "bot"})
	mine := e.destination("/v1/sessions/"+sess.ID+"/destinations", map[string]any{"url": "https://c.example/in"})
	type page struct {
		Data    []core.Destination `json:"data"`
		HasMore bool               `json:"has_more"`
	}
	all := slices.Sorted(slices.Values([]string{global.ID, forBot.ID, mine.ID})) // lists are in id order
	tests := []struct {
		path string
		want []string
		more bool
	}{
		{"/v1/destinations", all, false},
		{"/v1/destinations?limit=2", all[:2], true},
		{"/v1/destinations?after=" + all[1], all[2:], false},
		{"/v1/destinations?agent=bot", []string{forBot.ID}, false},
		{"/v1/destinations?agent=" + agent.ID, []string{forBot.ID}, false},
		{"/v1/destinations?session=" + sess.ID, []string{mine.ID}, false},
		{"/v1/sessions/" + sess.ID + "/destinations", []string{mine.ID}, false},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			var p page
			if code := e.call("GET", tc.path, nil, &p); code != 200 {
				t.Fatalf("%d", code)
			}
			var ids []string
			for _, d := range p.Data {
				ids = append(ids, d.ID)
			}
			if strings.Join(ids, ",") != strings.Join(tc.want, ",") || p.HasMore != tc.more {
				t.Fatalf("got %v more=%v, want %v more=%v", ids, p.HasMore, tc.want, tc.more)
			}
		})
	}
	var raw struct {
		Data []map[string]any `json:"data"`
	}
	e.call("GET", "/v1/sessions/"+sess.ID+"/destinations", nil, &raw)
	if len(raw.Data) != 1 || raw.Data[0]["id"] != mine.ID {
		t.Fatalf("list page = %v", raw)
	}
	if _, ok := raw.Data[0]["secret"]; ok {
		t.Fatalf("a list shows the secret: %v", raw.Data[0])
	}
	if code := e.call("DELETE", "/v1/destinations/"+mine.ID, nil, nil); code != http.StatusNoContent {
		t.Fatalf("delete: %d", code)
	}
	if code := e.call("GET", "/v1/destinations/"+mine.ID, nil, nil); code != 404 {
		t.Fatalf("get after delete: %d", code)
	}
	var resumed core.Destination
	if code := e.call("POST", "/v1/destinations/"+global.ID+"/resume", nil, &resumed); code != 200 || resumed.Status != core.DestinationActive {
		t.Fatalf("resume of an active destination: %d %+v", code, resumed)
	}
	var paused, again, stored core.Destination
	if code := e.call("POST", "/v1/destinations/"+global.ID+"/pause", nil, &paused); code != 200 || paused.Status != core.DestinationPaused || paused.PausedAt == nil || paused.ID != global.ID {
		t.Fatalf("pause: %d %+v", code, paused)
	}
	if code := e.call("POST", "/v1/destinations/"+global.ID+"/pause", nil, &again); code != 200 || again.Status != core.DestinationPaused || !again.PausedAt.Equal(paused.PausedAt.Time) {
		t.Fatalf("pause of a paused destination: %d %+v, want it as it was: %+v", code, again, paused)
	}
	if e.call("GET", "/v1/destinations/"+global.ID, nil, &stored); stored.Status != core.DestinationPaused {
		t.Fatalf("after pause = %+v", stored)
	}
	resumed = core.Destination{}
	if code := e.call("POST", "/v1/destinations/"+global.ID+"/resume", nil, &resumed); code != 200 || resumed.Status != core.DestinationActive || resumed.PausedAt != nil {
		t.Fatalf("resume after a pause: %d %+v", code, resumed)
	}
	var empty struct {
		Data    []core.Delivery `json:"data"`
		HasMore bool            `json:"has_more"`
	}
	if code := e.call("GET", "/v1/deliveries?session="+sess.ID, nil, &empty); code != 200 || empty.Data == nil || len(empty.Data) != 0 {
		t.Fatalf("empty deliveries page: %d %+v", code, empty)
	}
}
