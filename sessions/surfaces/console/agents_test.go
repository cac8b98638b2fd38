package console_test

import (
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// apiCall is one request the fake API saw.
type apiCall struct{ Method, Path, Query, Body string }

// fakeV1 answers "METHOD /path" (with "?query" when given) with a status
// and a body, as the real API would, and records every call.
type fakeV1 struct {
	mu      sync.Mutex
	calls   []apiCall
	answers map[string]fakeAnswer
}

type fakeAnswer struct {
	status int
	body   string
}

// fakeAPI registers a fake for the agent and environment endpoints on
// e's API.
func fakeAPI(e *env, answers map[string]fakeAnswer) *fakeV1 {
	f := &fakeV1{answers: answers}
	for _, p := range []string{"/v1/agents", "/v1/agents/", "/v1/environments", "/v1/environments/", "/v1/schedules", "/v1/schedules/"} {
		e.api.Handle(p, f)
	}
	return f
}

func (f *fakeV1) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.calls = append(f.calls, apiCall{r.Method, r.URL.Path, r.URL.RawQuery, string(raw)})
	a, ok := f.answers[r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery]
	if !ok {
		a, ok = f.answers[r.Method+" "+r.URL.Path]
	}
	f.mu.Unlock()
	if !ok {
		a = fakeAnswer{404, `{"error":{"type":"not_found","message":"not found"}}`}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(a.status)
	_, _ = io.WriteString(w, a.body)
}

// sent is the calls of method made so far.
func (f *fakeV1) sent(method string) []apiCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []apiCall
	for _, c := range f.calls {
		if c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

func agentJSON(version int, model, system string) string {
	b, _ := json.Marshal(core.Agent{ID: "agt_1", Name: "helper", Version: version, Model: model, System: system,
		Limits: core.Limits{MaxSteps: 8}, Metadata: map[string]string{"team": "ops"}})
	return string(b)
}

func sameJSON(t *testing.T, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("sent %q: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if string(gb) != string(wb) {
		t.Fatalf("sent %s\nwant %s", gb, wb)
	}
}

// fieldError is the text under a form field, by the field's error id.
func fieldError(body, id string) string {
	m := regexp.MustCompile(`<p class="field-error" role="alert" id="` + regexp.QuoteMeta(id) + `">([^<]*)</p>`).FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}

func TestAgentCreate(t *testing.T) {
	form := url.Values{
		"name": {"helper"}, "model": {"anthropic/claude-test"}, "system": {"Be brief.\nCite sources."},
		"max_steps": {"8"}, "tools": {`[{"type":"custom","name":"lookup","policy":"always_ask"}]`},
		"memory_stores": {`[{"id":"notes"}]`}, "metadata": {"team=ops\n"},
	}
	tests := []struct {
		name     string
		change   url.Values
		answer   fakeAnswer
		code     int
		wantSent string // the JSON posted; "" when nothing may be
		errorID  string // the field error shown
		errorHas string
	}{
		{
			name: "posts the form as JSON", answer: fakeAnswer{201, agentJSON(1, "anthropic/claude-test", "")}, code: 303,
			wantSent: `{"name":"helper","model":"anthropic/claude-test","system":"Be brief.\nCite sources.","limits":{"max_steps":8},
				"tools":[{"type":"custom","name":"lookup","policy":"always_ask"}],"mcp_servers":[],"skills":[],"memory_stores":[{"id":"notes"}],"metadata":{"team":"ops"}}`,
		},
		{
			name: "a refusal goes under its field", change: url.Values{"name": {"bad name"}}, code: 400,
			answer: fakeAnswer{400, `{"error":{"type":"invalid_request","message":"field \"name\" \"bad name\": want letters, digits, . _ -"}}`},
			wantSent: `{"name":"bad name","model":"anthropic/claude-test","system":"Be brief.\nCite sources.","limits":{"max_steps":8},
				"tools":[{"type":"custom","name":"lookup","policy":"always_ask"}],"mcp_servers":[],"skills":[],"memory_stores":[{"id":"notes"}],"metadata":{"team":"ops"}}`,
			errorID: "agent-name-error", errorHas: `field "name" "bad name"`,
		},
		{
			name: "JSON that does not parse is not sent", change: url.Values{"tools": {`[{"type":"custom","nmae":"x"}]`}}, code: 400,
			errorID: "agent-tools-error", errorHas: `unknown field "nmae"`,
		},
		{
			name: "a number that is not one is not sent", change: url.Values{"max_steps": {"ten"}}, code: 400,
			errorID: "agent-max-steps-error", errorHas: `"ten" is not a whole number`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, "")
			api := fakeAPI(e, map[string]fakeAnswer{"POST /v1/agents": tc.answer, "GET /v1/environments": {200, `{"data":[],"has_more":false}`}})
			c, csrf := e.signIn()
			f := url.Values{"csrf": {csrf}}
			for k, v := range form {
				f[k] = v
			}
			for k, v := range tc.change {
				f[k] = v
			}
			rec := e.do(req{method: "POST", path: "/console/agents", cookie: c, form: f})
			if rec.Code != tc.code {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.code, rec.Body)
			}
			posts := api.sent("POST")
			if tc.wantSent == "" {
				if len(posts) != 0 {
					t.Fatalf("posted %v", posts)
				}
			} else {
				if len(posts) != 1 {
					t.Fatalf("posted %d times", len(posts))
				}
				sameJSON(t, posts[0].Body, tc.wantSent)
			}
			if tc.code == 303 {
				if loc := rec.Header().Get("Location"); loc != "agents/agt_1" {
					t.Fatalf("redirect to %q", loc)
				}
				return
			}
			body := rec.Body.String()
			if got := fieldError(body, tc.errorID); !strings.Contains(got, tc.errorHas) {
				t.Fatalf("under the field %s: %q, want %q\n%s", tc.errorID, got, tc.errorHas, body)
			}
			// What was typed is kept.
			if !strings.Contains(body, `value="anthropic/claude-test"`) || !strings.Contains(body, "Cite sources.") {
				t.Fatal("the form lost what was typed")
			}
		})
	}
}

func TestAgentFormsNeedCSRF(t *testing.T) {
	for _, path := range []string{"/console/agents", "/console/agents/agt_1", "/console/environments", "/console/environments/env_1", "/console/environments/env_1/delete"} {
		t.Run(path, func(t *testing.T) {
			e := newEnv(t, "")
			api := fakeAPI(e, map[string]fakeAnswer{})
			c, _ := e.signIn()
			rec := e.do(req{method: "POST", path: path, cookie: c, form: url.Values{"name": {"x"}, "model": {"anthropic/x"}}})
			if rec.Code != http.StatusForbidden {
				t.Fatalf("status %d, want 403", rec.Code)
			}
			api.mu.Lock()
			defer api.mu.Unlock()
			if len(api.calls) != 0 {
				t.Fatalf("the API was called: %v", api.calls)
			}
		})
	}
}

// TestAgentEdit: a save sends the form whole, pinned to the version it
// was opened at, and keeps that version's limits the form does not show.
func TestAgentEdit(t *testing.T) {
	// budgeted is a version with the limits the form does not show.
	budgeted := func(version int, system string, l core.Limits) string {
		var a core.Agent
		if err := json.Unmarshal([]byte(agentJSON(version, "anthropic/claude-test", system)), &a); err != nil {
			t.Fatal(err)
		}
		a.Limits = l
		b, _ := json.Marshal(a)
		return string(b)
	}
	v2 := budgeted(2, "old", core.Limits{MaxSteps: 8, MaxSessionTokens: 1000, MaxSessionCostUSD: 2.5, MaxTurns: 4})
	tests := []struct {
		name     string
		update   fakeAnswer
		latest   string // GET answers after the save
		code     int
		want     []string
		wantForm string // the hidden version after the answer
	}{
		{"saves version 3", fakeAnswer{200, agentJSON(3, "anthropic/claude-test", "new")}, v2, 303, nil, ""},
		{
			"another save came first", fakeAnswer{409, `{"error":{"type":"conflict","message":"agent agt_1 is at version 3, not 2: conflict"}}`},
			budgeted(3, "theirs", core.Limits{MaxSteps: 8, MaxTurns: 9}), 409,
			[]string{`id="version-conflict"`, "Version 3 of this agent was saved after you opened this form at version 2", `agents/agt_1/diff?from=2&amp;to=3`, ">new</textarea>"},
			`name="version" value="3"`,
		},
		{
			"a name taken is not a version conflict", fakeAnswer{409, `{"error":{"type":"conflict","message":"agent name \"other\" is taken"}}`}, v2, 409,
			[]string{`agent name &#34;other&#34; is taken`}, `name="version" value="2"`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, "")
			api := fakeAPI(e, map[string]fakeAnswer{"GET /v1/agents/agt_1": {200, v2}, "POST /v1/agents/agt_1": tc.update,
				"GET /v1/environments": {200, `{"data":[{"id":"env_1","name":"tools"}],"has_more":false}`}})
			c, csrf := e.signIn()
			page := e.do(req{method: "GET", path: "/console/agents/agt_1", cookie: c}).Body.String()
			for _, want := range []string{`id="agent-form"`, `name="version" value="2"`, `<option value="tools">`, `>old</textarea>`, `>team=ops
</textarea>`} {
				if !strings.Contains(page, want) {
					t.Fatalf("the edit page lacks %q", want)
				}
			}
			api.answers["GET /v1/agents/agt_1"] = fakeAnswer{200, tc.latest}
			api.answers["GET /v1/agents/agt_1?version=2"] = fakeAnswer{200, v2}
			f := url.Values{"csrf": {csrf}, "version": {"2"}, "name": {"helper"}, "model": {"anthropic/claude-test"}, "system": {"new"}, "max_steps": {"8"}, "metadata": {"team=ops"}}
			rec := e.do(req{method: "POST", path: "/console/agents/agt_1", cookie: c, form: f})
			if rec.Code != tc.code {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.code, rec.Body)
			}
			posts := api.sent("POST")
			if len(posts) != 1 {
				t.Fatalf("posted %d times", len(posts))
			}
			sameJSON(t, posts[0].Body, `{"name":"helper","model":"anthropic/claude-test","system":"new","description":"","environment":"",
				"limits":{"max_steps":8,"max_session_tokens":1000,"max_session_cost_usd":2.5,"max_turns":4},"tools":[],"mcp_servers":[],"skills":[],"memory_stores":[],"metadata":{"team":"ops"},"version":2}`)
			body := rec.Body.String()
			for _, want := range append(tc.want, tc.wantForm) {
				if !strings.Contains(body, want) {
					t.Errorf("the answer lacks %q", want)
				}
			}
		})
	}
}

func TestAgentVersionPins(t *testing.T) {
	e := newEnv(t, "")
	fakeAPI(e, map[string]fakeAnswer{"GET /v1/agents/agt_1": {200, agentJSON(3, "anthropic/claude-test", "")}})
	pinned := func(id string, v int, st core.Status) *core.Session {
		return &core.Session{ID: id, Status: st, Agent: core.AgentRef{ID: "agt_1", Version: v}}
	}
	e.store.list = core.SessionList{Sessions: []*core.Session{
		pinned("ses_1", 1, core.StatusArchived), pinned("ses_2", 3, core.StatusRunning), pinned("ses_3", 3, core.StatusIdle), pinned("ses_4", 1, core.StatusIdle),
	}}
	c, _ := e.signIn()
	body := e.do(req{method: "GET", path: "/console/agents/agt_1", cookie: c}).Body.String()
	rows := regexp.MustCompile(`(?s)<tr data-version="(\d)">\s*<td>[^<]*</td>\s*<td>(\d+)</td>\s*<td>(\d+)</td>`).FindAllStringSubmatch(body, -1)
	var got []string
	for _, r := range rows {
		got = append(got, r[1]+":"+r[2]+"/"+r[3])
	}
	if strings.Join(got, " ") != "3:2/2 2:0/0 1:2/1" {
		t.Fatalf("versions and their sessions %v\n%s", got, body)
	}
	if !strings.Contains(body, `href="../sessions?agent=agt_1"`) || strings.Contains(body, `id="pins-capped"`) {
		t.Fatal("no link to the agent's sessions, or a cap said")
	}
	_, filters := e.store.calls()
	if len(filters) != 1 || filters[0].AgentID != "agt_1" {
		t.Fatalf("listed %+v", filters)
	}
}

func TestAgentDiff(t *testing.T) {
	e := newEnv(t, "")
	fakeAPI(e, map[string]fakeAnswer{
		"GET /v1/agents/agt_1":           {200, agentJSON(2, "anthropic/claude-new", "Be brief.\nCite sources.")},
		"GET /v1/agents/agt_1?version=1": {200, agentJSON(1, "anthropic/claude-old", "Be brief.\nBe kind.")},
	})
	c, _ := e.signIn()
	for _, path := range []string{"/console/agents/agt_1/diff", "/console/agents/agt_1/diff?from=1&to=2"} {
		rec := e.do(req{method: "GET", path: path, cookie: c})
		body := rec.Body.String()
		if rec.Code != 200 {
			t.Fatalf("%s: %d %s", path, rec.Code, body)
		}
		for _, want := range []string{
			`id="agent-diff"`,
			`<del class="diff-line"><span class="diff-mark" aria-hidden="true">−</span><span class="visually-hidden">removed: </span>  &#34;model&#34;: &#34;anthropic/claude-old&#34;,</del>`,
			`<ins class="diff-line"><span class="diff-mark" aria-hidden="true">+</span><span class="visually-hidden">added: </span>  &#34;model&#34;: &#34;anthropic/claude-new&#34;,</ins>`,
			`<span class="visually-hidden">removed: </span>Be kind.</del>`,
			`<span class="visually-hidden">added: </span>Cite sources.</ins>`,
			`<span class="diff-line"><span class="diff-mark" aria-hidden="true"> </span>Be brief.</span>`,
		} {
			if !strings.Contains(body, want) {
				t.Errorf("%s lacks %q", path, want)
			}
		}
		if strings.Contains(body, "updated_at") || strings.Contains(body, `"version"`) {
			t.Errorf("%s compares what always differs", path)
		}
	}
	if rec := e.do(req{method: "GET", path: "/console/agents/agt_1/diff?to=9", cookie: c}); rec.Code != 400 {
		t.Fatalf("a version past the latest: %d", rec.Code)
	}
}
