package main_test

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// hookEnvelope is a delivery body as a receiver reads it.
type hookEnvelope struct {
	Type      string            `json:"type"`
	SessionID string            `json:"session_id"`
	EventID   string            `json:"event_id"`
	Metadata  map[string]string `json:"metadata"`
	Event     event             `json:"event"`
}

// hookReceiver verifies every request with the Standard Webhooks library
// and records it per path; status decides the answer (0: 204). A request
// to a path whose secret the test does not know yet (it comes in the
// answer that creates the destination, and deliveries may start before
// the test reads it) waits for it.
type hookReceiver struct {
	t       *testing.T
	srv     *httptest.Server
	mu      sync.Mutex
	secrets map[string]string        // path → secret
	known   map[string]chan struct{} // path → closed once its secret is set
	status  int
	got     map[string][]hookEnvelope // path → accepted deliveries
	tries   map[string]string         // event id → webhook-id
}

func newHookReceiver(t *testing.T) *hookReceiver {
	h := &hookReceiver{t: t, secrets: map[string]string{}, known: map[string]chan struct{}{}, got: map[string][]hookEnvelope{}, tries: map[string]string{}}
	h.srv = httptest.NewServer(http.HandlerFunc(h.serve))
	t.Cleanup(h.srv.Close)
	return h
}

// secretKnown is closed once path's secret is set.
func (h *hookReceiver) secretKnown(path string) chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	ch := h.known[path]
	if ch == nil {
		ch = make(chan struct{})
		h.known[path] = ch
	}
	return ch
}

func (h *hookReceiver) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	select {
	case <-h.secretKnown(r.URL.Path):
	case <-r.Context().Done():
		return
	case <-time.After(patience):
		h.t.Errorf("a delivery to %s, whose secret the test never set", r.URL.Path)
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	wh, err := standardwebhooks.NewWebhook(h.secrets[r.URL.Path])
	if err == nil {
		err = wh.Verify(body, r.Header)
	}
	if err != nil {
		h.t.Errorf("delivery to %s does not verify: %v", r.URL.Path, err)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	var env hookEnvelope
	if err := json.Unmarshal(body, &env); err != nil {
		h.t.Errorf("delivery body %s: %v", body, err)
	}
	id := r.Header.Get("webhook-id")
	if prev, ok := h.tries[env.EventID]; (ok && prev != id) || id != env.EventID {
		h.t.Errorf("event %s delivered with webhook-id %q (before: %q)", env.EventID, id, prev)
	}
	h.tries[env.EventID] = id
	if h.status != 0 {
		w.WriteHeader(h.status)
		return
	}
	h.got[r.URL.Path] = append(h.got[r.URL.Path], env)
	w.WriteHeader(http.StatusNoContent)
}

func (h *hookReceiver) setStatus(code int) {
	h.mu.Lock()
	h.status = code
	h.mu.Unlock()
}

func (h *hookReceiver) setSecret(path, secret string) {
	known := h.secretKnown(path)
	h.mu.Lock()
	h.secrets[path] = secret
	h.mu.Unlock()
	close(known)
}

func (h *hookReceiver) received(path string) []hookEnvelope {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]hookEnvelope{}, h.got[path]...)
}

// hookEnv runs serve against the scripted model with quick retries.
func hookEnv(hsURL string) map[string]string {
	env := modelEnv(hsURL, modelserver.FormatAnthropic)
	env["SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE"] = "true"
	env["SWITCHBOARD_WEBHOOK_BACKOFF_BASE_MS"] = "20"
	env["SWITCHBOARD_WEBHOOK_BACKOFF_MAX_SECONDS"] = "1"
	return env
}

type createdDestination struct {
	ID     string `json:"id"`
	Secret string `json:"secret"`
	Level  string `json:"level"`
}

// createWithHooks creates a session whose body carries destinations.
func (s *server) createWithHooks(input string, meta map[string]string, dests []map[string]any, hdr ...string) (string, []createdDestination) {
	s.t.Helper()
	code, raw := s.do("POST", "/v1/sessions", map[string]any{"agent": "default", "input": input, "metadata": meta, "destinations": dests}, hdr...)
	if code != 201 {
		s.t.Fatalf("create session: %d %s", code, raw)
	}
	var out struct {
		ID           string               `json:"id"`
		Destinations []createdDestination `json:"destinations"`
	}
	mustJSON(s.t, raw, &out)
	return out.ID, out.Destinations
}

type deliveryView struct {
	ID           string `json:"id"`
	Seq          uint64 `json:"seq"`
	State        string `json:"state"`
	AttemptCount int    `json:"attempt_count"`
	Attempts     []struct {
		StatusCode int    `json:"status_code"`
		LatencyMS  int64  `json:"latency_ms"`
		Error      string `json:"error"`
	} `json:"attempts"`
}

func (s *server) deliveries(query string) []deliveryView {
	s.t.Helper()
	code, raw := s.do("GET", "/v1/deliveries?limit=1000&"+query, nil)
	if code != 200 {
		s.t.Fatalf("list deliveries: %d %s", code, raw)
	}
	var page struct {
		Data    []deliveryView `json:"data"`
		HasMore *bool          `json:"has_more"`
	}
	mustJSON(s.t, raw, &page)
	if page.HasMore == nil {
		s.t.Fatalf("deliveries page without has_more: %s", raw)
	}
	return page.Data
}

func waitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(patience); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func hookTypes(envs []hookEnvelope) string {
	out := make([]string, len(envs))
	for i, e := range envs {
		out[i] = e.Type
	}
	return strings.Join(out, ",")
}

// TestWebhooksFromSessionCreate: destinations given in the session create
// body see the session from its first event, signed, in order, filtered
// by level, with the session's metadata unchanged.
func TestWebhooksFromSessionCreate(t *testing.T) {
	ms, hs := modelserver.Start(t)
	ms.Push(modelserver.Step{Text: "Hello from the model."})
	rc := newHookReceiver(t)
	srv := startServer(t, t.TempDir(), hookEnv(hs.URL))
	meta := map[string]string{"ticket": "OPS-7", "note": `quotes " and <tags> & ünïcode`}
	id, dests := srv.createWithHooks("hi there", meta, []map[string]any{
		{"url": rc.srv.URL + "/all"},
		{"url": rc.srv.URL + "/user", "level": "user", "secret": "generate"},
	}, "Idempotency-Key", "create-with-hooks")
	if len(dests) != 2 || !strings.HasPrefix(dests[0].Secret, "whsec_") || !strings.HasPrefix(dests[1].Secret, "whsec_") || dests[1].Level != "user" {
		t.Fatalf("destinations in the answer: %+v", dests)
	}
	rc.setSecret("/all", dests[0].Secret)
	rc.setSecret("/user", dests[1].Secret)
	_, evs := srv.waitIdle(id)
	want := "user.message,session.status_changed,turn.started,agent.message,turn.completed,session.status_changed"
	waitUntil(t, "every event at /all", func() bool { return len(rc.received("/all")) == len(evs) })
	all := rc.received("/all")
	if got := hookTypes(all); got != want {
		t.Fatalf("/all received %s, want %s", got, want)
	}
	for i, env := range all {
		if env.Event.Seq != uint64(i+1) || env.EventID != evs[i].ID || env.SessionID != id || !maps.Equal(env.Metadata, meta) {
			t.Fatalf("delivery %d = %+v", i, env)
		}
	}
	waitUntil(t, "user-level events at /user", func() bool { return len(rc.received("/user")) == 2 })
	if got := hookTypes(rc.received("/user")); got != "user.message,agent.message" {
		t.Fatalf("/user received %s", got)
	}
	// An attempt is recorded after its answer arrived.
	waitUntil(t, "every delivery to /all recorded", func() bool {
		return len(srv.deliveries("state=delivered&destination="+dests[0].ID)) == len(evs)
	})
	for _, d := range srv.deliveries("destination=" + dests[0].ID) {
		if d.State != "delivered" || d.AttemptCount != 1 || d.Attempts[0].StatusCode != 204 {
			t.Fatalf("delivery %+v", d)
		}
	}
	// The destinations of a create body are checked strictly, by index.
	for _, bad := range []struct {
		dest    map[string]any
		mention string
	}{
		{map[string]any{"url": rc.srv.URL, "colour": "red"}, "colour"},
		{map[string]any{"url": "ftp://example.com/"}, `destinations[0].url`},
		{map[string]any{"url": rc.srv.URL, "level": "loud"}, `destinations[0].level`},
	} {
		code, raw := srv.do("POST", "/v1/sessions", map[string]any{"agent": "default", "destinations": []map[string]any{bad.dest}})
		if code != 400 || !strings.Contains(string(raw), "invalid_request") || !strings.Contains(string(raw), bad.mention) {
			t.Fatalf("bad destination %v: %d %s", bad.dest, code, raw)
		}
	}
	// A replay answers the same destinations, without their secrets.
	code, raw := srv.do("POST", "/v1/sessions", map[string]any{"agent": "default", "input": "hi there", "metadata": meta, "destinations": []map[string]any{
		{"url": rc.srv.URL + "/all"}, {"url": rc.srv.URL + "/user", "level": "user", "secret": "generate"},
	}}, "Idempotency-Key", "create-with-hooks")
	if code != 201 || strings.Contains(string(raw), "whsec_") || !strings.Contains(string(raw), dests[0].ID) {
		t.Fatalf("replay: %d %s", code, raw)
	}
	code, raw = srv.do("GET", "/v1/sessions/"+id+"/destinations", nil)
	if code != 200 || strings.Contains(string(raw), "whsec_") || !strings.Contains(string(raw), `"has_more":false`) {
		t.Fatalf("session destinations: %d %s", code, raw)
	}
}

// TestWebhooksSurviveSIGKILL: deliveries pending when the gateway is
// killed are delivered, in order, after the restart.
func TestWebhooksSurviveSIGKILL(t *testing.T) {
	ms, hs := modelserver.Start(t)
	ms.Push(modelserver.Step{Text: "first answer"})
	rc := newHookReceiver(t)
	rc.setStatus(http.StatusServiceUnavailable)
	srv := startServer(t, t.TempDir(), hookEnv(hs.URL))
	id, dests := srv.createWithHooks("hello", nil, []map[string]any{{"url": rc.srv.URL + "/h"}})
	rc.setSecret("/h", dests[0].Secret)
	_, evs := srv.waitIdle(id)
	waitUntil(t, "failed attempts", func() bool {
		ds := srv.deliveries("destination=" + dests[0].ID)
		return len(ds) == len(evs) && ds[0].AttemptCount >= 2
	})
	if n := len(srv.deliveries("state=pending&destination=" + dests[0].ID)); n != len(evs) {
		t.Fatalf("%d pending deliveries before the kill, want %d", n, len(evs))
	}
	srv.kill()
	rc.setStatus(0)
	srv = srv.restart()
	waitUntil(t, "deliveries after the restart", func() bool { return len(rc.received("/h")) == len(evs) })
	for i, env := range rc.received("/h") {
		if env.EventID != evs[i].ID || env.Event.Seq != uint64(i+1) {
			t.Fatalf("delivery %d after restart = %s seq %d, want %s", i, env.EventID, env.Event.Seq, evs[i].ID)
		}
	}
	waitUntil(t, "delivered state", func() bool {
		return len(srv.deliveries("state=delivered&destination="+dests[0].ID)) == len(evs)
	})
}

// TestWebhooksRefusePrivateByDefault: without SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE
// a hostname that resolves to loopback is refused at connect time.
func TestWebhooksRefusePrivateByDefault(t *testing.T) {
	ms, hs := modelserver.Start(t)
	ms.Push(modelserver.Step{Text: "x"})
	rc := newHookReceiver(t)
	env := modelEnv(hs.URL, modelserver.FormatAnthropic)
	env["SWITCHBOARD_WEBHOOK_HORIZON_SECONDS"] = "1"
	env["SWITCHBOARD_WEBHOOK_BACKOFF_BASE_MS"] = "50"
	srv := startServer(t, t.TempDir(), env)
	_, port, _ := net.SplitHostPort(rc.srv.Listener.Addr().String())
	code, raw := srv.do("POST", "/v1/destinations", map[string]any{"url": "http://127.0.0.1:" + port + "/h"})
	if code != 400 || !strings.Contains(string(raw), "loopback") {
		t.Fatalf("literal loopback destination: %d %s", code, raw)
	}
	id, dests := srv.createWithHooks("hello", nil, []map[string]any{{"url": "http://localhost:" + port + "/h", "types": []string{"agent.message"}}})
	srv.waitIdle(id)
	waitUntil(t, "dead letters", func() bool {
		ds := srv.deliveries("destination=" + dests[0].ID)
		for _, d := range ds {
			if d.State != "dead" {
				return false
			}
		}
		return len(ds) > 0
	})
	d := srv.deliveries("destination=" + dests[0].ID)[0]
	if !strings.Contains(d.Attempts[0].Error, "refused") || d.Attempts[0].StatusCode != 0 {
		t.Fatalf("attempt %+v", d.Attempts[0])
	}
	if n := len(rc.received("/h")); n != 0 {
		t.Fatalf("the receiver got %d deliveries", n)
	}
}

func TestWebhookMisconfiguration(t *testing.T) {
	tests := []struct{ name, value string }{
		{"SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE", "maybe"},
		{"SWITCHBOARD_WEBHOOK_WORKERS", "0"},
		{"SWITCHBOARD_WEBHOOK_BACKOFF_BASE_MS", "fast"},
		{"SWITCHBOARD_WEBHOOK_HORIZON_SECONDS", "0"},
		{"SWITCHBOARD_WEBHOOK_PAUSE_SECONDS", "-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name+"="+tt.value, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), patience)
			defer cancel()
			cmd := exec.CommandContext(ctx, serveBinary(t), "serve")
			cmd.Env = append(childEnviron(), "SWITCHBOARD_DATA_DIR="+t.TempDir(), "SWITCHBOARD_ADDR="+anyPort, tt.name+"="+tt.value)
			out, err := cmd.CombinedOutput()
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			if err == nil || len(lines) != 1 || !strings.Contains(lines[0], tt.name) {
				t.Fatalf("want a failure in one line naming %s, got %v:\n%s", tt.name, err, out)
			}
		})
	}
}
