package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/mcpbridge"
)

func TestIdempotencyKey(t *testing.T) {
	e := newAPI(t)
	agent := e.agent(t)
	body := map[string]any{"agent": agent, "input": "hello"}
	c1, r1 := e.call(t, admin, "POST", "/v1/sessions", body, "Idempotency-Key", "k1")
	c2, r2 := e.call(t, admin, "POST", "/v1/sessions", body, "Idempotency-Key", "k1")
	if c1 != 201 || c2 != 201 || string(r1) != string(r2) {
		t.Fatalf("replay differs:\n%d %s\n%d %s", c1, r1, c2, r2)
	}
	if !strings.Contains(string(r2), `"client_token":"sbt_`) {
		t.Fatalf("replay lost the client token: %s", r2)
	}
	code, raw := e.call(t, admin, "POST", "/v1/sessions", map[string]any{"agent": agent, "input": "other"}, "Idempotency-Key", "k1")
	wantError(t, code, raw, 409, "conflict", "")
	_, list := e.call(t, admin, "GET", "/v1/sessions", nil)
	var page struct{ Data []json.RawMessage }
	_ = json.Unmarshal(list, &page)
	if len(page.Data) != 1 {
		t.Fatalf("%d sessions after a replay", len(page.Data))
	}

	var c created
	_ = json.Unmarshal(r1, &c)
	// The kept answer seals the token: the file holds no usable token.
	file, err := os.ReadFile(e.path)
	if err != nil {
		t.Fatal(err)
	}
	secret := c.ClientToken[strings.LastIndex(c.ClientToken, "_")+1:]
	if c.ClientToken == "" || bytes.Contains(file, []byte(secret)) {
		t.Fatalf("the store file holds the client token %q in clear", c.ClientToken)
	}
	ev := map[string]any{"events": []map[string]any{{"type": "user.message", "text": "again"}}}
	p1, a1 := e.call(t, admin, "POST", "/v1/sessions/"+c.ID+"/events", ev, "Idempotency-Key", "e1")
	p2, a2 := e.call(t, admin, "POST", "/v1/sessions/"+c.ID+"/events", ev, "Idempotency-Key", "e1")
	if p1 != 202 || p2 != 202 || string(a1) != string(a2) {
		t.Fatalf("events replay differs:\n%d %s\n%d %s", p1, a1, p2, a2)
	}
	code, raw = e.call(t, admin, "POST", "/v1/sessions/"+c.ID+"/events", map[string]any{"events": []map[string]any{{"type": "user.interrupt"}}}, "Idempotency-Key", "e1")
	wantError(t, code, raw, 409, "conflict", "")
	_, pend := e.call(t, admin, "GET", "/v1/sessions/"+c.ID+"/pending", nil)
	if n := strings.Count(string(pend), `"type":"user.message"`); n != 2 {
		t.Fatalf("%d queued inputs, want 2 (the input and one replayed message): %s", n, pend)
	}
}

func TestClientToken(t *testing.T) {
	e := newAPI(t)
	agent := e.agent(t)
	mine := e.session(t, agent, "")
	other := e.session(t, agent, "")
	tok := mine.ClientToken
	if code, raw := e.call(t, tok, "GET", "/v1/sessions/"+mine.ID, nil); code != 200 {
		t.Fatalf("read own session: %d %s", code, raw)
	}
	if code, raw := e.call(t, tok, "GET", "/v1/sessions/"+mine.ID+"/events", nil); code != 200 {
		t.Fatalf("read own events: %d %s", code, raw)
	}
	steer := map[string]any{"events": []map[string]any{{"type": "user.message", "text": "steer"}}}
	if code, raw := e.call(t, tok, "POST", "/v1/sessions/"+mine.ID+"/events", steer); code != 202 {
		t.Fatalf("steer own session: %d %s", code, raw)
	}
	tests := []struct {
		name, token, method, path string
		status                    int
		typ                       string
	}{
		{"other session", tok, "GET", "/v1/sessions/" + other.ID, 404, "not_found"},
		{"other session events", tok, "POST", "/v1/sessions/" + other.ID + "/events", 404, "not_found"},
		{"missing session looks the same", tok, "GET", "/v1/sessions/ses_01aaaaaaaaaaaaaaaaaaaaaaaa", 404, "not_found"},
		{"admin route: list sessions", tok, "GET", "/v1/sessions", 401, "unauthorized"},
		{"admin route: agents", tok, "GET", "/v1/agents", 401, "unauthorized"},
		{"admin route: archive", tok, "POST", "/v1/sessions/" + mine.ID + "/archive", 401, "unauthorized"},
		{"unknown token", "sbt_" + mine.ID + "_forged", "GET", "/v1/sessions/" + mine.ID, 401, "unauthorized"},
		{"no token", "", "GET", "/v1/sessions/" + mine.ID, 401, "unauthorized"},
		{"another session's token for its id", other.ClientToken + "x", "GET", "/v1/sessions/" + other.ID, 401, "unauthorized"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body any
			if tt.method == "POST" {
				body = steer
			}
			code, raw := e.call(t, tt.token, tt.method, tt.path, body)
			wantError(t, code, raw, tt.status, tt.typ, "")
		})
	}
}

func TestBadInputIsRefusedAndStoresNothing(t *testing.T) {
	e := newAPI(t)
	agent := e.agent(t)
	s := e.session(t, agent, "")
	big := `{"events":[{"type":"user.message","text":"` + strings.Repeat("x", 70<<10) + `"}]}`
	tests := []struct {
		name, method, path string
		body               any
		status             int
		typ, contains      string
	}{
		{"malformed JSON", "POST", "/v1/sessions", `{"agent":`, 400, "invalid_request", "malformed JSON"},
		{"unknown field", "POST", "/v1/sessions", `{"agent":"` + agent + `","colour":"red"}`, 400, "invalid_request", `"colour"`},
		{"unknown agent field", "POST", "/v1/agents", `{"name":"b","model":"anthropic/x","tempo":1}`, 400, "invalid_request", `"tempo"`},
		{"bad model", "POST", "/v1/agents", `{"name":"b","model":"gpt"}`, 400, "invalid_request", "anthropic/<model>"},
		{"wrong type", "POST", "/v1/sessions", `{"agent":"` + agent + `","input":5}`, 400, "invalid_request", "input"},
		{"empty body", "POST", "/v1/sessions", ``, 400, "invalid_request", "empty"},
		{"oversized", "POST", "/v1/sessions/" + s.ID + "/events", big, 413, "payload_too_large", "larger than"},
		{"unknown event type", "POST", "/v1/sessions/" + s.ID + "/events", `{"events":[{"type":"user.shout","text":"hi"}]}`, 400, "invalid_request", `"user.shout"`},
		{"unknown event field", "POST", "/v1/sessions/" + s.ID + "/events", `{"events":[{"type":"user.message","text":"hi","loud":true}]}`, 400, "invalid_request", `"loud"`},
		{"empty message", "POST", "/v1/sessions/" + s.ID + "/events", `{"events":[{"type":"user.message","text":" "}]}`, 400, "invalid_request", "text"},
		{"a bare event", "POST", "/v1/sessions/" + s.ID + "/events", `{"type":"user.message","text":"hi"}`, 400, "invalid_request", `send a list of them instead: {"events":[{"type":"user.message", …}]}`},
		{"bad confirmation", "POST", "/v1/sessions/" + s.ID + "/events", `{"events":[{"type":"user.tool_confirmation","tool_use_id":"t","result":"maybe"}]}`, 400, "invalid_request", "allow or deny"},
		{"no events", "POST", "/v1/sessions/" + s.ID + "/events", `{"events":[]}`, 400, "invalid_request", "events"},
		{"bad limit", "GET", "/v1/sessions?limit=5000", nil, 400, "invalid_request", "limit"},
		{"bad level", "GET", "/v1/sessions/" + s.ID + "/events?level=loud", nil, 400, "invalid_request", "level"},
		{"unknown agent", "POST", "/v1/sessions", `{"agent":"agt_nope"}`, 404, "not_found", "agt_nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, raw := e.call(t, admin, tt.method, tt.path, tt.body)
			wantError(t, code, raw, tt.status, tt.typ, tt.contains)
		})
	}
	// Nothing was stored by any of them.
	_, raw := e.call(t, admin, "GET", "/v1/sessions", nil)
	if n := strings.Count(string(raw), `"id":"ses_`); n != 1 {
		t.Fatalf("%d sessions stored", n)
	}
	_, raw = e.call(t, admin, "GET", "/v1/sessions/"+s.ID+"/pending", nil)
	if strings.Contains(string(raw), `"id"`) {
		t.Fatalf("inputs queued by refused requests: %s", raw)
	}
	_, raw = e.call(t, admin, "GET", "/v1/agents", nil)
	if n := strings.Count(string(raw), `"id":"agt_`); n != 1 {
		t.Fatalf("%d agents stored", n)
	}
}

func TestAgentVersions(t *testing.T) {
	e := newAPI(t)
	agent := e.agent(t)
	s := e.session(t, agent, "")
	code, raw := e.call(t, admin, "POST", "/v1/agents/"+agent, map[string]any{"system": "v2 prompt", "version": 1})
	if code != 200 || !strings.Contains(string(raw), `"version":2`) || !strings.Contains(string(raw), `"v2 prompt"`) || !strings.Contains(string(raw), `"model":"anthropic/claude-x"`) {
		t.Fatalf("update: %d %s", code, raw)
	}
	code, raw = e.call(t, admin, "POST", "/v1/agents/"+agent, map[string]any{"system": "stale", "version": 1})
	wantError(t, code, raw, 409, "conflict", "")
	_, raw = e.call(t, admin, "GET", "/v1/agents/"+agent+"?version=1", nil)
	if !strings.Contains(string(raw), `"system":"s"`) {
		t.Fatalf("version 1 changed: %s", raw)
	}
	_, raw = e.call(t, admin, "GET", "/v1/sessions/"+s.ID, nil)
	if !strings.Contains(string(raw), `"agent":{"id":"`+agent+`","version":1}`) {
		t.Fatalf("the session lost its pinned version: %s", raw)
	}
	s2 := e.session(t, agent, "")
	_, raw = e.call(t, admin, "GET", "/v1/sessions/"+s2.ID, nil)
	if !strings.Contains(string(raw), `"version":2`) {
		t.Fatalf("a new session should pin the latest version: %s", raw)
	}
	code, raw = e.call(t, admin, "POST", "/v1/sessions", map[string]any{"agent": map[string]any{"id": agent, "version": 1}})
	if code != 201 || !strings.Contains(string(raw), `"version":1`) {
		t.Fatalf("pin version 1 explicitly: %d %s", code, raw)
	}
}

func TestArchiveMakesReadOnly(t *testing.T) {
	e := newAPI(t)
	s := e.session(t, e.agent(t), "")
	if code, raw := e.call(t, admin, "POST", "/v1/sessions/"+s.ID+"/archive", nil); code != 200 || !strings.Contains(string(raw), `"status":"archived"`) {
		t.Fatalf("archive: %d %s", code, raw)
	}
	code, raw := e.call(t, admin, "POST", "/v1/sessions/"+s.ID+"/events", map[string]any{"events": []map[string]any{{"type": "user.message", "text": "hi"}}})
	wantError(t, code, raw, http.StatusConflict, "conflict", "archived")
}

// TestAgentNameRule: a name outside ^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$ is a
// 400 naming the field and the rule, on create and rename, however long
// (past bbolt's 32 KiB key limit, which made it a 500; this server's body
// limit is 64 KiB).
func TestAgentNameRule(t *testing.T) {
	e := newAPI(t)
	id := e.agent(t)
	for _, name := range []string{strings.Repeat("n", 60<<10), "a\x00b", "ab\u202ecd", "../x", "-a", strings.Repeat("x", 65)} {
		code, raw := e.call(t, admin, "POST", "/v1/agents", map[string]any{"name": name, "model": "anthropic/x"})
		wantError(t, code, raw, 400, "invalid_request", `field "name"`)
		if !strings.Contains(string(raw), "[A-Za-z0-9._-]{0,63}") {
			t.Fatalf("the error does not give the rule: %s", raw)
		}
		code, raw = e.call(t, admin, "POST", "/v1/agents/"+id, map[string]any{"name": name})
		wantError(t, code, raw, 400, "invalid_request", `field "name"`)
	}
	code, raw := e.call(t, admin, "POST", "/v1/agents/"+id, map[string]any{"name": "renamed.v2"})
	if code != 200 {
		t.Fatalf("rename: %d %s", code, raw)
	}
}

// TestOrphanToolAnswers: a user.custom_tool_result or user.tool_confirmation
// whose tool_use_id the session's pending_action does not list is a 409
// naming it, and nothing is queued; one the session waits for is accepted.
func TestOrphanToolAnswers(t *testing.T) {
	e := newAPI(t)
	s := e.session(t, e.agent(t), "")
	post := func(events string) (int, []byte) {
		return e.call(t, admin, "POST", "/v1/sessions/"+s.ID+"/events", `{"events":`+events+`}`)
	}
	result := `{"type":"user.custom_tool_result","tool_use_id":"tu_ghost","output":"x"}`
	confirm := `{"type":"user.tool_confirmation","tool_use_id":"tu_ghost","result":"allow"}`
	for _, ev := range []string{result, confirm, `{"type":"user.message","text":"hi"},` + result} {
		code, raw := post("[" + ev + "]")
		wantError(t, code, raw, 409, "conflict", `"tu_ghost"`)
	}
	if p, _ := e.store.Pending(context.Background(), s.ID); len(p) != 0 {
		t.Fatalf("a refused post queued %d inputs", len(p))
	}
	ctx := context.Background()
	if _, err := e.store.Append(ctx, s.ID, core.AppendRequest{TurnID: "turn_1", Holder: "h", Events: []core.Event{core.NewEvent(core.TypeTurnStarted, core.LevelInternal, core.ActorSystem, struct{}{})}}); err != nil {
		t.Fatal(err)
	}
	done := core.NewEvent(core.TypeTurnCompleted, core.LevelInternal, core.ActorSystem, core.TurnCompletedBody{YieldReason: core.ReasonRequiresAction, PendingToolUseIDs: []string{"tu_c", "tu_ask"}})
	status := core.NewEvent(core.TypeStatusChanged, core.LevelInternal, core.ActorSystem, core.StatusChangedBody{Status: core.StatusAwaitingInput, StopReason: core.ReasonRequiresAction})
	if _, err := e.store.Append(ctx, s.ID, core.AppendRequest{TurnID: "turn_1", Events: []core.Event{done, status}}); err != nil {
		t.Fatal(err)
	}
	code, raw := post("[" + result + "]")
	wantError(t, code, raw, 409, "conflict", `"tu_ghost"`)
	code, raw = post(`[{"type":"user.custom_tool_result","tool_use_id":"tu_c","output":"x"},{"type":"user.tool_confirmation","tool_use_id":"tu_ask","result":"deny"}]`)
	if code != 202 {
		t.Fatalf("answers to the pending calls: %d %s", code, raw)
	}
}

// TestQueryTokenOnlyOnTheEventStream: ?token= is for EventSource, which
// cannot send a header; anywhere else a token in the address (which proxy
// logs keep) is refused, the admin token included.
func TestQueryTokenOnlyOnTheEventStream(t *testing.T) {
	e := newAPI(t)
	s := e.session(t, e.agent(t), "")
	sse := []string{"Accept", "text/event-stream"}
	for _, c := range []struct {
		name, method, path string
		hdr                []string
		status             int
	}{
		{"client token on the stream", "GET", "/v1/sessions/" + s.ID + "/events?token=" + s.ClientToken, sse, 200},
		{"admin token on the stream", "GET", "/v1/sessions/" + s.ID + "/events?token=" + admin, sse, 200},
		{"client token on the events page", "GET", "/v1/sessions/" + s.ID + "/events?token=" + s.ClientToken, nil, 401},
		{"client token on the session", "GET", "/v1/sessions/" + s.ID + "?token=" + s.ClientToken, nil, 401},
		{"admin token on the session", "GET", "/v1/sessions/" + s.ID + "?token=" + admin, nil, 401},
		{"admin token on the list", "GET", "/v1/sessions?token=" + admin, nil, 401},
		{"admin token on an agent create", "POST", "/v1/agents?token=" + admin, nil, 401},
		{"admin token posting events", "POST", "/v1/sessions/" + s.ID + "/events?token=" + admin, sse, 401},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, c.method, e.srv.URL+c.path, strings.NewReader(`{}`))
			for i := 0; i+1 < len(c.hdr); i += 2 {
				req.Header.Set(c.hdr[i], c.hdr[i+1])
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != c.status {
				t.Errorf("status %d, want %d", resp.StatusCode, c.status)
			}
		})
	}
}

// TestStdioServersOnlyFromTheAllowlist: naming a stdio command is running
// it on the host, so only the executables the admin listed at start are
// accepted, on create and on update.
func TestStdioServersOnlyFromTheAllowlist(t *testing.T) {
	e := newAPI(t)
	stdio := func(cmd string) []map[string]any {
		return []map[string]any{{"name": "local", "transport": "stdio", "command": cmd}}
	}
	id := e.agent(t)
	for _, c := range []struct {
		name, method, path string
		body               map[string]any
		status             int
	}{
		{"create, allowed", "POST", "/v1/agents", map[string]any{"name": "ok", "model": "anthropic/claude-x", "mcp_servers": stdio(allowedStdio)}, 201},
		{"create, a shell", "POST", "/v1/agents", map[string]any{"name": "sh", "model": "anthropic/claude-x", "mcp_servers": stdio("/bin/sh")}, 400},
		{"create, relative name", "POST", "/v1/agents", map[string]any{"name": "rel", "model": "anthropic/claude-x", "mcp_servers": stdio("allowed-server")}, 400},
		{"create, http server", "POST", "/v1/agents", map[string]any{"name": "http", "model": "anthropic/claude-x", "mcp_servers": []map[string]any{{"name": "h", "url": "https://mcp.example.com/mcp"}}}, 201},
		{"update, a shell", "POST", "/v1/agents/" + id, map[string]any{"mcp_servers": stdio("/bin/bash")}, 400},
		{"update, allowed", "POST", "/v1/agents/" + id, map[string]any{"mcp_servers": stdio(allowedStdio)}, 200},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, raw := e.call(t, admin, c.method, c.path, c.body)
			if code != c.status {
				t.Fatalf("status %d, want %d: %s", code, c.status, raw)
			}
			if code == 400 && !strings.Contains(string(raw), mcpbridge.StdioAllowEnv) {
				t.Errorf("the error does not name %s: %s", mcpbridge.StdioAllowEnv, raw)
			}
		})
	}
}

// TestErrorsSayWhatToChange: an error names the problem without the
// gateway's own wrapping or the type repeated.
func TestErrorsSayWhatToChange(t *testing.T) {
	e := newAPI(t)
	for range 2 {
		e.call(t, admin, "POST", "/v1/agents", map[string]any{"name": "helper", "model": "anthropic/x"})
	}
	code, raw := e.call(t, admin, "POST", "/v1/agents", map[string]any{"name": "helper", "model": "anthropic/x"})
	var eb errorBody
	if err := json.Unmarshal(raw, &eb); err != nil || code != 409 || eb.Error.Message != `agent name "helper" is taken` {
		t.Fatalf("a name taken: %d %s", code, raw)
	}
}
