package console_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/switchboardhq/switchboard/sessions/surfaces/page"
)

// fakeSession is the /v1 API of one session, ses_1, as the session page
// calls it: its view, its queued inputs, its log (as pages and as SSE),
// and what was posted to it.
type fakeSession struct {
	mu sync.Mutex
	// view is the answer to GET /v1/sessions/ses_1, as the API's JSON.
	view   map[string]any
	queued []map[string]any
	// posts are the bodies of POST …/events; archived counts archives.
	posts    []string
	archived int
	// refuse, when set, answers every POST …/events with this 409
	// message.
	refuse string
	// streams are the resume points (after, Last-Event-ID) of the SSE
	// requests.
	streams [][2]string
	// sse, when set, is the log the stream sends (after the resume
	// point); else seqs 7 and 8.
	sse []map[string]any
	// postedOne receives a value at each post.
	postedOne chan struct{}
}

func newFakeSession(e *env) *fakeSession {
	f := &fakeSession{postedOne: make(chan struct{}, 16), view: map[string]any{
		"id": "ses_1", "status": "awaiting_input", "stop_reason": "requires_action",
		"pending_action": map[string]any{"tool_use_ids": []string{"toolu_a", "toolu_c"}},
		"agent":          map[string]any{"id": "agt_1", "version": 3},
		"origin":         map[string]any{"provider": "github", "key": "github:acme/app#7", "tenant": "42"},
		"metadata":       map[string]any{}, "tenant": "github:acme/app",
		"usage":    map[string]any{"input_tokens": 1200, "output_tokens": 34},
		"last_seq": 6, "created_at": "2030-05-06T07:00:00Z", "updated_at": "2030-05-06T07:10:00Z",
	}}
	writeJSON := func(w http.ResponseWriter, status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
	notFound := func(w http.ResponseWriter) {
		writeJSON(w, 404, map[string]any{"error": map[string]any{"type": "not_found", "message": "no such session"}})
	}
	e.api.HandleFunc("GET /v1/sessions/{id}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("id") != "ses_1" {
			notFound(w)
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		writeJSON(w, 200, f.view)
	})
	e.api.HandleFunc("GET /v1/sessions/ses_1/pending", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		writeJSON(w, 200, map[string]any{"data": append([]map[string]any{}, f.queued...), "has_more": false})
	})
	e.api.HandleFunc("POST /v1/sessions/{id}/events", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("id") != "ses_1" {
			notFound(w)
			return
		}
		raw, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.refuse != "" {
			writeJSON(w, 409, map[string]any{"error": map[string]any{"type": "conflict", "message": f.refuse}})
			return
		}
		f.posts = append(f.posts, string(raw))
		f.postedOne <- struct{}{}
		writeJSON(w, 202, map[string]any{"data": []map[string]any{{"id": "evt_q", "type": "x", "queued_at": "2030-05-06T07:11:00Z"}}})
	})
	e.api.HandleFunc("POST /v1/sessions/ses_1", func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		defer f.mu.Unlock()
		f.posts = append(f.posts, string(raw))
		f.postedOne <- struct{}{}
		writeJSON(w, 200, f.view)
	})
	e.api.HandleFunc("/v1/sessions/ses_1/links", func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		defer f.mu.Unlock()
		f.posts = append(f.posts, strings.TrimSpace(r.Method+" "+r.URL.RawQuery+" "+string(raw)))
		f.postedOne <- struct{}{}
		writeJSON(w, 200, f.view)
	})
	e.api.HandleFunc("POST /v1/sessions/ses_1/archive", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.archived++
		writeJSON(w, 200, f.view)
	})
	e.api.HandleFunc("GET /v1/sessions/ses_1/events", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept") != "text/event-stream" {
			writeJSON(w, 200, map[string]any{"has_more": false, "data": []map[string]any{
				event(2, "agent.tool_use", `{"tool_use_id":"toolu_a","name":"mcp_docs_echo","input":{"text":"hi"}}`),
				event(3, "agent.custom_tool_use", `{"tool_use_id":"toolu_c","name":"lookup_order","input":{"id":7}}`),
			}})
			return
		}
		f.mu.Lock()
		f.streams = append(f.streams, [2]string{r.URL.Query().Get("after"), r.Header.Get("Last-Event-ID")})
		log := f.sse
		f.mu.Unlock()
		if log == nil {
			log = []map[string]any{event(7, "agent.message", `{"text":"m7"}`), event(8, "agent.message", `{"text":"m8"}`)}
		}
		after, _ := strconv.Atoi(r.URL.Query().Get("after"))
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		fmt.Fprint(w, "retry: 1000\n\n")
		for _, ev := range log {
			if ev["seq"].(int) <= after {
				continue
			}
			raw, _ := json.Marshal(ev)
			fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", ev["seq"], ev["type"], raw)
		}
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	return f
}

func event(seq int, typ, body string) map[string]any {
	return map[string]any{"id": fmt.Sprintf("evt_%d", seq), "session_id": "ses_1", "seq": seq, "type": typ,
		"level": "progress", "actor": "agent", "created_at": "2030-05-06T07:05:00Z", "body": json.RawMessage(body)}
}

func (f *fakeSession) set(k string, v any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.view[k] = v
}

func (f *fakeSession) posted() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string{}, f.posts...)
}

func TestSessionPage(t *testing.T) {
	e := newEnv(t, "")
	f := newFakeSession(e)
	c, _ := e.signIn()

	rec := e.do(req{method: "GET", path: "/console/sessions/ses_1", cookie: c})
	if rec.Code != http.StatusOK {
		t.Fatalf("page: %d %s", rec.Code, rec.Body)
	}
	body := rec.Body.String()
	for _, want := range []string{
		`<code id="session-id">ses_1</code>`,
		`<span id="status" class="status" data-status="awaiting_input">awaiting_input</span>`,
		`data-session="ses_1" data-stream="ses_1/stream" data-detail="full" data-last-seq="6"`,
		`<section id="log"`,
		// session.js listens for what page.js dispatches: it runs first.
		`<script src="../assets/session.js" defer></script>` + "\n" + `<script src="../assets/page.js" defer></script>`,
		`<a href="https://github.com/acme/app/issues/7" rel="noopener noreferrer">GitHub issue or pull request</a>`,
		`<span id="usage-in">1200</span> in, <span id="usage-out">34</span> out`,
		`<dd id="cost"><span class="dim">none: no turn of a priced model</span></dd>`,
		// The confirmation, named from the log, with Allow and Deny.
		`<li class="call" data-tool-use-id="toolu_a">`,
		`<strong>Tool mcp_docs_echo</strong>`,
		`<form class="confirm" method="post" action="ses_1/confirm">`,
		`<input type="hidden" name="tool_use_id" value="toolu_a">`,
		`<button type="submit" name="result" value="allow">Allow</button>`,
		`<button type="submit" name="result" value="deny" class="secondary">Deny</button>`,
		// The custom tool, with a result form.
		`<strong>Custom tool lookup_order</strong>`,
		`<form class="tool-result" method="post" action="ses_1/tool-result">`,
		`<input type="hidden" name="tool_use_id" value="toolu_c">`,
		`<form id="stop" method="post" action="ses_1/stop" hidden>`,
		`<form id="archive" method="post" action="ses_1/archive">`,
		`<input type="checkbox" id="archive-confirm" name="confirm" value="yes" required>`,
		`<a href="../sessions">`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	// What waits for an answer comes before the conversation, and the
	// composer right after it.
	pend, log, say := strings.Index(body, `<section id="pending"`), strings.Index(body, `<section id="log"`), strings.Index(body, `<form id="say"`)
	if pend < 0 || pend > log || log > say || strings.Contains(body[pend:log], "hidden>\n<h2") {
		t.Errorf("the calls waiting (%d) are not shown before the conversation (%d) and its composer (%d)", pend, log, say)
	}
	if n := strings.Count(body, `name="csrf"`); n < 5 {
		t.Errorf("%d forms carry the CSRF token", n)
	}

	t.Run("priced", func(t *testing.T) {
		f.set("cost_usd", 0.01234)
		defer f.set("cost_usd", nil)
		body := e.do(req{method: "GET", path: "/console/sessions/ses_1", cookie: c}).Body.String()
		if !strings.Contains(body, `<dd id="cost">$0.0123</dd>`) {
			t.Error("the session's cost is not shown")
		}
	})

	t.Run("last turn", func(t *testing.T) {
		for _, tt := range []struct {
			reason string
			retry  bool
		}{{"error", true}, {"max_steps", true}, {"completed", false}, {"requires_action", false}} {
			f.set("result", map[string]any{"turn_id": "turn_9", "yield_reason": tt.reason, "text": "it went " + tt.reason, "completed_at": "2030-05-06T07:10:00Z"})
			body := e.do(req{method: "GET", path: "/console/sessions/ses_1", cookie: c}).Body.String()
			if !strings.Contains(body, `<span class="status" data-status="`+tt.reason+`">`+tt.reason+`</span> <span class="result-text">it went `+tt.reason+`</span>`) {
				t.Errorf("%s: the last turn's result is not shown", tt.reason)
			}
			form := strings.Contains(body, `<form id="retry" method="post" action="ses_1/retry">`) && strings.Contains(body, `name="turn_id" value="turn_9"`)
			if form != tt.retry {
				t.Errorf("%s: Retry offered %v, want %v", tt.reason, form, tt.retry)
			}
		}
		f.set("result", nil)
	})

	t.Run("links", func(t *testing.T) {
		body := e.do(req{method: "GET", path: "/console/sessions/ses_1", cookie: c}).Body.String()
		if !strings.Contains(body, `id="no-links"`) || !strings.Contains(body, `<form method="post" action="ses_1/links" id="link-form">`) {
			t.Error("no empty links list or no link form")
		}
		f.set("links", []map[string]any{{"key": "github:acme/app#7", "added_by": "agent", "added_at": "2030-05-06T07:05:00Z", "url": "https://github.com/acme/app/pull/7"},
			{"key": "github:acme/app#8", "added_by": "admin", "added_at": "2030-05-06T07:05:00Z", "url": "javascript:alert(1)"}})
		defer f.set("links", nil)
		body = e.do(req{method: "GET", path: "/console/sessions/ses_1", cookie: c}).Body.String()
		for _, want := range []string{`<li data-link="github:acme/app#7"><code>github:acme/app#7</code> <a href="https://github.com/acme/app/pull/7">https://github.com/acme/app/pull/7</a> <span class="dim">by agent`,
			`<a href="#ZgotmplZ">javascript:alert(1)</a>`,
			`<form method="post" action="ses_1/unlink" class="inline">`, `name="key" value="github:acme/app#7"`} {
			if !strings.Contains(body, want) {
				t.Errorf("page lacks %s", want)
			}
		}
	})

	t.Run("budget", func(t *testing.T) {
		body := e.do(req{method: "GET", path: "/console/sessions/ses_1", cookie: c}).Body.String()
		if !strings.Contains(body, `<form id="budget" method="post" action="ses_1/budget">`) || strings.Contains(body, `id="budget-paused"`) {
			t.Error("no budget form, or a pause shown, for a session that is not paused")
		}
		f.set("stop_reason", "budget_exceeded")
		f.set("pending_action", map[string]any{"tool_use_ids": []string{}, "budget": map[string]any{"name": "max_session_cost_usd", "limit": 1, "spent": 1.25}})
		f.set("limits", map[string]any{"max_session_cost_usd": 1})
		defer f.set("pending_action", map[string]any{"tool_use_ids": []string{"toolu_a", "toolu_c"}})
		defer f.set("stop_reason", "requires_action")
		defer f.set("limits", nil)
		body = e.do(req{method: "GET", path: "/console/sessions/ses_1", cookie: c}).Body.String()
		for _, want := range []string{
			`<p class="notice" id="budget-paused">Paused: the session has used $1.25 of its $1.00 budget (<code>max_session_cost_usd</code>).`,
			`>Raise and continue</button>`, `name="max_session_cost_usd" inputmode="decimal" placeholder="1"`,
			// Said above the conversation, with the form unfolded.
			`<p class="notice" id="paused">The turn is paused at its <code>max_session_cost_usd</code> budget: <a href="#budget">raise it</a>`,
			`<details id="controls" class="session-side" open>`,
		} {
			if !strings.Contains(body, want) {
				t.Errorf("paused page lacks %s", want)
			}
		}
	})

	t.Run("running", func(t *testing.T) {
		f.set("status", "running")
		f.set("pending_action", nil)
		defer f.set("pending_action", map[string]any{"tool_use_ids": []string{"toolu_a", "toolu_c"}})
		defer f.set("status", "awaiting_input")
		body := e.do(req{method: "GET", path: "/console/sessions/ses_1", cookie: c}).Body.String()
		if !strings.Contains(body, `<form id="stop" method="post" action="ses_1/stop">`) {
			t.Error("no Stop form while running")
		}
		if strings.Contains(body, `data-tool-use-id`) || !strings.Contains(body, `id="no-pending" class="dim">`) {
			t.Error("calls shown, or the empty state hidden, with nothing pending")
		}
		// Nothing waits: the section makes no room above the conversation.
		if !strings.Contains(body, `data-result="ses_1/tool-result" hidden>`) {
			t.Error("the empty Waiting for you section is shown")
		}
	})
	t.Run("archived", func(t *testing.T) {
		f.set("status", "archived")
		defer f.set("status", "awaiting_input")
		body := e.do(req{method: "GET", path: "/console/sessions/ses_1", cookie: c}).Body.String()
		if strings.Contains(body, `id="stop"`) || strings.Contains(body, `id="archive"`) || !strings.Contains(body, `id="archived"`) {
			t.Error("an archived session offers Stop or Archive, or does not say it is archived")
		}
	})
	t.Run("answer queued", func(t *testing.T) {
		f.mu.Lock()
		f.queued = []map[string]any{{"id": "evt_q", "type": "user.tool_confirmation", "body": map[string]any{"tool_use_id": "toolu_a", "result": "allow"}}}
		f.mu.Unlock()
		defer func() { f.mu.Lock(); f.queued = nil; f.mu.Unlock() }()
		body := e.do(req{method: "GET", path: "/console/sessions/ses_1", cookie: c}).Body.String()
		if strings.Contains(body, `value="toolu_a"`) || !strings.Contains(body, "Answer sent") {
			t.Error("a call whose answer is queued offers Allow/Deny again")
		}
	})
	t.Run("unknown session", func(t *testing.T) {
		if rec := e.do(req{method: "GET", path: "/console/sessions/ses_nope", cookie: c}); rec.Code != http.StatusNotFound {
			t.Fatalf("unknown session: %d", rec.Code)
		}
	})
	t.Run("signed out", func(t *testing.T) {
		if rec := e.do(req{method: "GET", path: "/console/sessions/ses_1"}); rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "../sign-in" {
			t.Fatalf("signed out: %d %q", rec.Code, rec.Header().Get("Location"))
		}
	})
}

func TestSessionOrigin(t *testing.T) {
	e := newEnv(t, "")
	f := newFakeSession(e)
	c, _ := e.signIn()
	for _, tt := range []struct {
		name   string
		origin any
		want   string
	}{
		{"github key", map[string]any{"provider": "github", "key": "github:acme/app#7"}, `<a href="https://github.com/acme/app/issues/7" rel="noopener noreferrer">GitHub issue or pull request</a>`},
		{"github url", map[string]any{"provider": "github", "key": "github:acme/app#7", "url": "https://github.com/acme/app/pull/7"}, `<a href="https://github.com/acme/app/pull/7"`},
		{"slack key", map[string]any{"provider": "slack", "key": "slack:T1:C2:1700000000.000100"}, `<a href="https://app.slack.com/client/T1/C2/thread/C2-1700000000.000100" rel="noopener noreferrer">Slack thread</a>`},
		{"slack permalink", map[string]any{"provider": "slack", "key": "slack:T1:C2:1.2", "url": "https://acme.slack.com/archives/C2/p12"}, `<a href="https://acme.slack.com/archives/C2/p12"`},
		{"linear url", map[string]any{"provider": "linear", "key": "linear:org:as_1", "url": "https://linear.app/acme/issue/ENG-1"}, `<a href="https://linear.app/acme/issue/ENG-1" rel="noopener noreferrer">Linear issue</a>`},
		{"linear no url", map[string]any{"provider": "linear", "key": "linear:org:as_1"}, `<dd id="origin">Linear issue <code>linear:org:as_1</code></dd>`},
		{"not a web address", map[string]any{"provider": "slack", "key": "bad", "url": "javascript:alert(1)"}, `<dd id="origin">Slack thread <code>bad</code></dd>`},
		{"api", nil, `<dd id="origin">API</dd>`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f.set("origin", tt.origin)
			body := e.do(req{method: "GET", path: "/console/sessions/ses_1", cookie: c}).Body.String()
			if !strings.Contains(body, tt.want) {
				t.Fatalf("origin: want %s in\n%s", tt.want, body)
			}
		})
	}
}

// TestSessionActions: each form posts exactly its input to the API and
// returns to the page; without the CSRF token nothing is posted.
func TestSessionActions(t *testing.T) {
	for _, tt := range []struct {
		name, path string
		form       url.Values
		want       string
	}{
		{"allow", "confirm", url.Values{"tool_use_id": {"toolu_a"}, "result": {"allow"}, "message": {""}}, `{"events":[{"type":"user.tool_confirmation","tool_use_id":"toolu_a","result":"allow"}]}`},
		{"deny with a note", "confirm", url.Values{"tool_use_id": {"toolu_a"}, "result": {"deny"}, "message": {"not now"}}, `{"events":[{"type":"user.tool_confirmation","tool_use_id":"toolu_a","result":"deny","message":"not now"}]}`},
		{"custom tool result", "tool-result", url.Values{"tool_use_id": {"toolu_c"}, "output": {"shipped"}}, `{"events":[{"type":"user.custom_tool_result","tool_use_id":"toolu_c","output":"shipped"}]}`},
		{"custom tool error", "tool-result", url.Values{"tool_use_id": {"toolu_c"}, "output": {""}, "is_error": {"true"}}, `{"events":[{"type":"user.custom_tool_result","tool_use_id":"toolu_c","output":"","is_error":true}]}`},
		{"stop", "stop", url.Values{}, `{"events":[{"type":"user.interrupt"}]}`},
		{"message", "message", url.Values{"text": {"also Y"}}, `{"events":[{"type":"user.message","text":"also Y"}]}`},
		{"retry", "retry", url.Values{"turn_id": {"turn_9"}}, `{"events":[{"type":"user.retry","turn_id":"turn_9"}]}`},
		{"budget", "budget", url.Values{"max_session_tokens": {"5000"}, "max_session_cost_usd": {"$2.50"}}, `{"limits":{"max_session_tokens":5000,"max_session_cost_usd":2.5}}`},
		{"link", "links", url.Values{"key": {"github:acme/app#7"}}, `POST  {"key":"github:acme/app#7"}`},
		{"unlink", "unlink", url.Values{"key": {"github:acme/app#7"}}, `DELETE key=github%3Aacme%2Fapp%237`},
		{"cost budget only", "budget", url.Values{"max_session_tokens": {""}, "max_session_cost_usd": {"3"}}, `{"limits":{"max_session_cost_usd":3}}`},
		{"turn limit only", "budget", url.Values{"max_session_tokens": {""}, "max_turns": {"4"}}, `{"limits":{"max_turns":4}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, "")
			f := newFakeSession(e)
			c, csrf := e.signIn()
			path := "/console/sessions/ses_1/" + tt.path

			if rec := e.do(req{method: "POST", path: path, cookie: c, form: tt.form}); rec.Code != http.StatusForbidden {
				t.Fatalf("without CSRF: %d, want 403", rec.Code)
			}
			if p := f.posted(); len(p) != 0 {
				t.Fatalf("without CSRF the API got %v", p)
			}

			form := url.Values{"csrf": {csrf}}
			for k, v := range tt.form {
				form[k] = v
			}
			rec := e.do(req{method: "POST", path: path, cookie: c, form: form})
			if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "../../sessions/ses_1" {
				t.Fatalf("post: %d %q %s", rec.Code, rec.Header().Get("Location"), rec.Body)
			}
			if p := f.posted(); len(p) != 1 || strings.TrimSpace(p[0]) != tt.want {
				t.Fatalf("posted %q\nwant %s", p, tt.want)
			}
		})
	}
}

// TestSessionBudgetInvalid: a budget form that is empty or not a number
// is shown again with why, and nothing reaches the API.
func TestSessionBudgetInvalid(t *testing.T) {
	for _, tt := range []struct {
		name string
		form url.Values
		want string
	}{
		{"empty", url.Values{"max_session_tokens": {""}, "max_session_cost_usd": {" "}}, "fill in a token budget, a cost budget or a turn limit"},
		{"fractional turns", url.Values{"max_turns": {"2.5"}}, "the turn limit must be a whole number above 0"},
		{"words", url.Values{"max_session_tokens": {"lots"}}, "the token budget must be a whole number above 0"},
		{"negative cost", url.Values{"max_session_cost_usd": {"-2"}}, "the cost budget must be a number of US dollars above 0"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, "")
			f := newFakeSession(e)
			c, csrf := e.signIn()
			tt.form.Set("csrf", csrf)
			rec := e.do(req{method: "POST", path: "/console/sessions/ses_1/budget", cookie: c, form: tt.form})
			if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), tt.want) {
				t.Fatalf("%d, want 400 saying %q:\n%s", rec.Code, tt.want, rec.Body)
			}
			if p := f.posted(); len(p) != 0 {
				t.Fatalf("the API got %v", p)
			}
		})
	}
}

func TestSessionActionRefused(t *testing.T) {
	e := newEnv(t, "")
	f := newFakeSession(e)
	c, csrf := e.signIn()
	f.refuse = `tool_use_id "toolu_a" is not pending`
	rec := e.do(req{method: "POST", path: "/console/sessions/ses_1/message", cookie: c, form: url.Values{"csrf": {csrf}, "text": {"keep <me>"}}})
	if rec.Code != http.StatusConflict {
		t.Fatalf("refused: %d", rec.Code)
	}
	body := rec.Body.String()
	if !strings.Contains(body, `<p class="error" role="alert">tool_use_id &#34;toolu_a&#34; is not pending</p>`) || !strings.Contains(body, `>keep &lt;me&gt;</textarea>`) {
		t.Fatalf("the refusal or the text typed is not shown:\n%s", body)
	}
	if rec := e.do(req{method: "POST", path: "/console/sessions/ses_nope/stop", cookie: c, form: url.Values{"csrf": {csrf}}}); rec.Code != http.StatusNotFound {
		t.Fatalf("stop an unknown session: %d", rec.Code)
	}
}

func TestSessionArchive(t *testing.T) {
	e := newEnv(t, "")
	f := newFakeSession(e)
	c, csrf := e.signIn()
	path := "/console/sessions/ses_1/archive"
	for _, tt := range []struct {
		name string
		form url.Values
		code int
	}{
		{"without CSRF", url.Values{"confirm": {"yes"}}, http.StatusForbidden},
		{"not confirmed", url.Values{"csrf": {csrf}}, http.StatusBadRequest},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if rec := e.do(req{method: "POST", path: path, cookie: c, form: tt.form}); rec.Code != tt.code {
				t.Fatalf("%d, want %d", rec.Code, tt.code)
			}
			if f.archived != 0 {
				t.Fatal("archived")
			}
		})
	}
	rec := e.do(req{method: "POST", path: path, cookie: c, form: url.Values{"csrf": {csrf}, "confirm": {"yes"}}})
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "../../sessions/ses_1" || f.archived != 1 {
		t.Fatalf("archive: %d %q, archived %d", rec.Code, rec.Header().Get("Location"), f.archived)
	}
}

// TestSessionStream: the stream relays the API's messages, ids
// included, resumes from Last-Event-ID or ?after=, and needs a sign-in.
func TestSessionStream(t *testing.T) {
	e := newEnv(t, "")
	f := newFakeSession(e)
	srv := httptest.NewServer(e.mux)
	t.Cleanup(srv.Close)
	c, _ := e.signIn()

	t.Run("signed out", func(t *testing.T) {
		rq, _ := http.NewRequestWithContext(t.Context(), "GET", srv.URL+"/console/sessions/ses_1/stream", nil)
		resp, err := noFollow.Do(rq)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		f.mu.Lock()
		defer f.mu.Unlock()
		if resp.StatusCode != http.StatusSeeOther || len(f.streams) != 0 {
			t.Fatalf("signed out: %d, %d streams opened", resp.StatusCode, len(f.streams))
		}
	})
	for _, tt := range []struct {
		name, query, lastEventID, wantAfter string
	}{
		{"from the start", "", "", ""},
		{"after", "?after=6", "", "6"},
		{"Last-Event-ID", "?after=2", "6", "6"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rq, _ := http.NewRequestWithContext(t.Context(), "GET", srv.URL+"/console/sessions/ses_1/stream"+tt.query, nil)
			rq.AddCookie(c)
			if tt.lastEventID != "" {
				rq.Header.Set("Last-Event-ID", tt.lastEventID)
			}
			resp, err := http.DefaultClient.Do(rq)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			checkHeaders(t, "stream", resp)
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
				t.Fatalf("stream: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			r := bufio.NewReader(resp.Body)
			var ids []string
			for len(ids) < 2 {
				line, err := r.ReadString('\n')
				if err != nil {
					t.Fatalf("read: %v", err)
				}
				if id, ok := strings.CutPrefix(strings.TrimSpace(line), "id: "); ok {
					ids = append(ids, id)
				}
			}
			ev := readEvent(t, r)
			if fmt.Sprint(ids) != "[7 8]" || ev.name != "agent.message" || !strings.Contains(ev.data, `"text":"m8"`) {
				t.Fatalf("relayed ids %v, then %+v", ids, ev)
			}
			f.mu.Lock()
			got := f.streams[len(f.streams)-1]
			f.mu.Unlock()
			if got[0] != tt.wantAfter {
				t.Fatalf("the API was asked after %q, want %q", got[0], tt.wantAfter)
			}
		})
	}
	t.Run("bad resume point", func(t *testing.T) {
		rq, _ := http.NewRequestWithContext(t.Context(), "GET", srv.URL+"/console/sessions/ses_1/stream?after=x", nil)
		rq.AddCookie(c)
		resp, err := http.DefaultClient.Do(rq)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("after=x: %d", resp.StatusCode)
		}
	})
}

var noFollow = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// TestSessionScripts: the console serves the session page's own script,
// byte for byte, beside its own.
func TestSessionScripts(t *testing.T) {
	e := newEnv(t, "")
	want, err := fs.ReadFile(page.Assets(), "page.js")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"page.js", "session.js"} {
		rec := e.do(req{method: "GET", path: "/console/assets/" + name})
		if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/javascript") {
			t.Fatalf("%s: %d %q", name, rec.Code, rec.Header().Get("Content-Type"))
		}
		if name == "page.js" && rec.Body.String() != string(want) {
			t.Fatal("page.js differs from the session page's")
		}
	}
}
