package main_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

var timestamp = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)

// keys returns the sorted keys of a JSON object.
func keys(t *testing.T, obj map[string]any) []string {
	t.Helper()
	out := make([]string, 0, len(obj))
	for k := range obj {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// shape checks that raw is an object with exactly these keys.
func shape(t *testing.T, what string, raw []byte, want ...string) map[string]any {
	t.Helper()
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		t.Fatalf("%s: %s: %v", what, raw, err)
	}
	sort.Strings(want)
	if got := keys(t, obj); !slices.Equal(got, want) {
		t.Fatalf("%s keys %v, want %v\n%s", what, got, want, raw)
	}
	return obj
}

func sub(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func wantTime(t *testing.T, what string, v any) {
	t.Helper()
	if s, _ := v.(string); !timestamp.MatchString(s) {
		t.Fatalf("%s = %v, want a millisecond UTC timestamp", what, v)
	}
}

// TestAPIContract walks the §3 contract over raw HTTP: agent, session with
// input, the SSE stream of the turn, steering, and every shape on the way.
func TestAPIContract(t *testing.T) {
	ms, hs := modelserver.Start(t)
	ms.Push(
		modelserver.Step{Text: "First answer.", Usage: modelserver.Usage{Input: 10, Output: 4}},
		modelserver.Step{Text: "Steered answer.", Usage: modelserver.Usage{Input: 20, Output: 6}},
	)
	env := modelEnv(hs.URL, modelserver.FormatAnthropic)
	delete(env, "SWITCHBOARD_MODEL") // the agent comes from the API here
	srv := startServer(t, t.TempDir(), env)
	release := holdAnswer(t, ms) // the first answer waits for the steer

	// Agent.
	code, raw := srv.do("POST", "/v1/agents", map[string]any{
		"name": "helper", "model": "anthropic/claude-test", "system": "Be brief.",
		"limits": map[string]any{"max_steps": 5}, "metadata": map[string]string{"team": "core"},
	})
	if code != 201 {
		t.Fatalf("create agent: %d %s", code, raw)
	}
	agent := shape(t, "agent", raw, "id", "name", "version", "model", "system", "limits", "metadata", "created_at", "updated_at")
	agentID, _ := agent["id"].(string)
	if !strings.HasPrefix(agentID, "agt_") || agent["version"] != 1.0 || agent["name"] != "helper" {
		t.Fatalf("agent %v", agent)
	}
	shape(t, "agent.limits", sub(t, agent["limits"]), "max_steps")
	wantTime(t, "agent.created_at", agent["created_at"])

	// Session with input.
	code, raw = srv.do("POST", "/v1/sessions", map[string]any{"agent": agentID, "input": "Question one", "metadata": map[string]string{"ticket": "T-1"}})
	if code != 201 {
		t.Fatalf("create session: %d %s", code, raw)
	}
	created := shape(t, "created session", raw, "id", "status", "agent", "client_token", "origin", "metadata", "tenant", "created_at")
	id, _ := created["id"].(string)
	if !strings.HasPrefix(id, "ses_") || created["status"] != "queued" || created["origin"] != nil {
		t.Fatalf("created %v", created)
	}
	ref := shape(t, "agent ref", sub(t, created["agent"]), "id", "version")
	if ref["id"] != agentID || ref["version"] != 1.0 {
		t.Fatalf("agent ref %v", ref)
	}
	if tok, _ := created["client_token"].(string); !strings.HasPrefix(tok, "sbt_") {
		t.Fatalf("client_token %v", created["client_token"])
	}
	wantTime(t, "session.created_at", created["created_at"])

	// Follow the stream with raw HTTP; steer while the first call runs.
	req, _ := http.NewRequest("GET", srv.url+"/v1/sessions/"+id+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+adminToken)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("stream content type %q", ct)
	}
	waitRequests(t, ms, 1)
	code, raw = srv.do("POST", "/v1/sessions/"+id+"/events", map[string]any{"events": []map[string]any{{"type": "user.message", "text": "Also this"}}})
	if code != 202 {
		t.Fatalf("steer: %d %s", code, raw)
	}
	posted := shape(t, "posted events", raw, "data")
	queued := posted["data"].([]any)
	if len(queued) != 1 {
		t.Fatalf("posted %v", posted)
	}
	q := shape(t, "queued input", sub(t, queued[0]), "id", "type", "queued_at")
	if q["type"] != "user.message" || !strings.HasPrefix(q["id"].(string), "evt_") {
		t.Fatalf("queued %v", q)
	}
	wantTime(t, "queued_at", q["queued_at"])
	release()

	var streamed []map[string]any
	sc := bufio.NewScanner(resp.Body)
	var id_, typ string
	for sc.Scan() && len(streamed) < 8 {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id: "):
			id_ = line[4:]
		case strings.HasPrefix(line, "event: "):
			typ = line[7:]
		case strings.HasPrefix(line, "data: "):
			var ev map[string]any
			mustJSON(t, []byte(line[6:]), &ev)
			if ev["type"] != typ || jsonNum(ev["seq"]) != id_ {
				t.Fatalf("SSE framing: id %s event %s data %v", id_, typ, ev)
			}
			streamed = append(streamed, ev)
		}
	}
	var got []string
	for _, ev := range streamed {
		got = append(got, ev["type"].(string))
	}
	want := []string{"user.message", "session.status_changed", "turn.started", "agent.message", "user.message", "agent.message", "turn.completed", "session.status_changed"}
	if !slices.Equal(got, want) {
		t.Fatalf("streamed %v\nwant %v", got, want)
	}
	for i, ev := range streamed {
		wantKeys := []string{"id", "session_id", "seq", "type", "level", "actor", "turn_id", "created_at", "body"}
		if strings.HasPrefix(ev["type"].(string), "user.") {
			wantKeys = append(wantKeys, "queued_at", "processed_at")
			wantTime(t, "processed_at", ev["processed_at"])
		}
		shape(t, "event "+ev["type"].(string), sub(t, ev), wantKeys...)
		if ev["seq"] != float64(i+1) || ev["session_id"] != id {
			t.Fatalf("event %d: %v", i, ev)
		}
		wantTime(t, "event.created_at", ev["created_at"])
	}
	if streamed[4]["id"] != q["id"] {
		t.Fatalf("the steering message entered the log as %v, was queued as %v", streamed[4]["id"], q["id"])
	}
	answer := streamed[3]
	if answer["level"] != "user" || answer["actor"] != "agent" {
		t.Fatalf("answer %v", answer)
	}
	shape(t, "agent.message body", sub(t, answer["body"]), "text")
	done := shape(t, "turn.completed body", sub(t, streamed[6]["body"]), "yield_reason", "usage", "cost_usd")
	if done["cost_usd"] != nil { // the test model has no price
		t.Fatalf("turn.completed cost_usd %v, want null", done["cost_usd"])
	}
	shape(t, "status body", sub(t, streamed[7]["body"]), "status", "stop_reason")

	// The session at rest.
	st, _ := srv.waitIdle(id)
	_ = st
	code, raw = srv.do("GET", "/v1/sessions/"+id, nil)
	if code != 200 {
		t.Fatalf("get session: %d %s", code, raw)
	}
	sess := shape(t, "session", raw, "id", "status", "stop_reason", "agent", "origin", "metadata", "tenant", "links", "usage", "cost_usd", "turns", "result", "last_seq", "created_at", "updated_at")
	if sess["status"] != "idle" || sess["stop_reason"] != "completed" || sess["last_seq"] != 8.0 || sess["turns"] != 1.0 {
		t.Fatalf("session %v", sess)
	}
	shape(t, "result", sub(t, sess["result"]), "turn_id", "yield_reason", "text", "completed_at")
	usage := shape(t, "usage", sub(t, sess["usage"]), "input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
	if usage["input_tokens"] != 30.0 || usage["output_tokens"] != 10.0 {
		t.Fatalf("usage %v", usage)
	}
	if m := sess["metadata"].(map[string]any); m["ticket"] != "T-1" {
		t.Fatalf("metadata %v", m)
	}

	// Lists.
	for _, path := range []string{"/v1/sessions", "/v1/sessions?status=idle", "/v1/sessions?agent=" + agentID, "/v1/agents", "/v1/sessions/" + id + "/events?limit=3", "/v1/sessions/" + id + "/pending"} {
		code, raw := srv.do("GET", path, nil)
		if code != 200 {
			t.Fatalf("%s: %d %s", path, code, raw)
		}
		shape(t, path, raw, "data", "has_more")
	}
	_, raw = srv.do("GET", "/v1/sessions/"+id+"/events?limit=3", nil)
	var page struct {
		Data    []map[string]any `json:"data"`
		HasMore bool             `json:"has_more"`
	}
	mustJSON(t, raw, &page)
	if len(page.Data) != 3 || !page.HasMore {
		t.Fatalf("page of 3: %d has_more %v", len(page.Data), page.HasMore)
	}
	_, raw = srv.do("GET", "/v1/sessions/"+id+"/events?after=3&level=user", nil)
	mustJSON(t, raw, &page)
	if len(page.Data) != 3 || page.HasMore {
		t.Fatalf("user-level after 3: %v", page)
	}

	// Errors.
	code, raw = srv.do("GET", "/v1/sessions/ses_nope", nil)
	e := shape(t, "error", raw, "error")
	inner := shape(t, "error.error", sub(t, e["error"]), "type", "message")
	if code != 404 || inner["type"] != "not_found" {
		t.Fatalf("unknown session: %d %v", code, inner)
	}

	// Health and metrics.
	for _, path := range []string{"/healthz", "/readyz"} {
		if code, raw := doReq(t, "GET", srv.url+path, "", nil); code != 200 {
			t.Fatalf("%s: %d %s", path, code, raw)
		}
	}
	// The turn is counted a moment after the session shows it idle.
	metrics := srv.metricsWith(`switchboard_turns_total{reason="completed"} 1`)
	for _, want := range []string{`switchboard_sessions{status="idle"} 1`, `switchboard_turns_total{reason="completed"} 1`, `switchboard_model_tokens_total{direction="input",model="anthropic/claude-test"} 30`, "switchboard_model_request_seconds_bucket", "switchboard_sse_subscribers"} {
		if !strings.Contains(metrics, want) {
			t.Fatalf("/metrics lacks %q", want)
		}
	}
}

func jsonNum(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
