package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

// recorded is one request the fake server saw.
type recorded struct {
	Method, Path, Query string
	Header              http.Header
	Body                string
}

// fakeAPI answers each "METHOD /path" with a canned status and body and
// records what it was sent.
type fakeAPI struct {
	mu      sync.Mutex
	reqs    []recorded
	answers map[string]answer
}

type answer struct {
	status int
	body   string
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.reqs = append(f.reqs, recorded{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone(), string(raw)})
	a, ok := f.answers[r.Method+" "+r.URL.Path]
	f.mu.Unlock()
	if !ok {
		a = answer{404, `{"error":{"type":"not_found","message":"no endpoint ` + r.Method + " " + r.URL.EscapedPath() + `"}}`}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(a.status)
	io.WriteString(w, a.body)
}

func (f *fakeAPI) last(t *testing.T) recorded {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.reqs) == 0 {
		t.Fatal("no request")
	}
	return f.reqs[len(f.reqs)-1]
}

func newFake(t *testing.T, answers map[string]answer) (*fakeAPI, *client.Client) {
	f := &fakeAPI{answers: answers}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, client.New(srv.URL+"/", "tok", srv.Client())
}

// jsonEq compares two JSON texts by value.
func jsonEq(t *testing.T, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("got %q: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want %q: %v", want, err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if string(gb) != string(wb) {
		t.Fatalf("body %s\nwant %s", gb, wb)
	}
}

const agentJSON = `{"id":"agt_1","name":"helper","version":2,"model":"anthropic/claude-test","system":"be brief",
 "limits":{"max_steps":5},"created_at":"2026-11-22T10:00:00.123Z","updated_at":"2026-11-22T10:00:01.000Z"}`

const sessionJSON = `{"id":"ses_1","status":"idle","stop_reason":"completed","agent":{"id":"agt_1","version":2},
 "origin":null,"metadata":{"k":"v"},"usage":{"input_tokens":21,"output_tokens":7},"last_seq":6,
 "created_at":"2026-11-22T10:00:00.123Z","updated_at":"2026-11-22T10:00:01.000Z"}`

func TestAgents(t *testing.T) {
	f, c := newFake(t, map[string]answer{
		"POST /v1/agents":       {201, agentJSON},
		"GET /v1/agents":        {200, `{"data":[` + agentJSON + `],"has_more":true}`},
		"GET /v1/agents/agt_1":  {200, agentJSON},
		"POST /v1/agents/agt_1": {200, agentJSON},
	})
	ctx := context.Background()
	name, model, sys := "helper", "anthropic/claude-test", "be brief"
	a, err := c.CreateAgent(ctx, client.AgentParams{Name: &name, Model: &model, System: &sys, Limits: &core.Limits{MaxSteps: 5}})
	if err != nil {
		t.Fatal(err)
	}
	if a.ID != "agt_1" || a.Version != 2 || a.Limits.MaxSteps != 5 || a.CreatedAt.IsZero() {
		t.Fatalf("agent %+v", a)
	}
	r := f.last(t)
	if r.Header.Get("Authorization") != "Bearer tok" || r.Header.Get("Content-Type") != "application/json" || r.Path != "/v1/agents" {
		t.Fatalf("request %+v", r)
	}
	jsonEq(t, r.Body, `{"name":"helper","model":"anthropic/claude-test","system":"be brief","limits":{"max_steps":5}}`)

	page, err := c.ListAgents(ctx, client.ListParams{After: "agt_0", Limit: 1})
	if err != nil || len(page.Data) != 1 || !page.HasMore || page.Data[0].Name != "helper" {
		t.Fatalf("list %+v %v", page, err)
	}
	if q := f.last(t).Query; q != "after=agt_0&limit=1" {
		t.Fatalf("query %q", q)
	}

	if a, err = c.GetAgent(ctx, "agt_1"); err != nil || a.System != "be brief" {
		t.Fatalf("get %+v %v", a, err)
	}

	v := 2
	desc := "new"
	if _, err = c.UpdateAgent(ctx, "agt_1", client.AgentParams{Description: &desc, Version: &v}); err != nil {
		t.Fatal(err)
	}
	jsonEq(t, f.last(t).Body, `{"description":"new","version":2}`)
}

func TestSessions(t *testing.T) {
	created := `{"id":"ses_1","status":"queued","agent":{"id":"agt_1","version":2},"client_token":"sbt_x",
	 "origin":null,"metadata":{},"created_at":"2026-11-22T10:00:00.123Z"}`
	queued := `{"data":[{"id":"in_1","type":"user.message","queued_at":"2026-11-22T10:00:00.123Z"}]}`
	f, c := newFake(t, map[string]answer{
		"POST /v1/sessions":               {201, created},
		"GET /v1/sessions":                {200, `{"data":[` + sessionJSON + `],"has_more":true,"next":"ses_9","capped":true}`},
		"GET /v1/sessions/ses_1":          {200, sessionJSON},
		"POST /v1/sessions/ses_1/events":  {202, queued},
		"GET /v1/sessions/ses_1/events":   {200, `{"data":[{"id":"evt_1","session_id":"ses_1","seq":3,"type":"agent.message","level":"user","actor":"agent","created_at":"2026-11-22T10:00:00.123Z","body":{"text":"hi"}}],"has_more":false}`},
		"GET /v1/sessions/ses_1/pending":  {200, `{"data":[{"id":"in_2","session_id":"ses_1","seq":0,"type":"user.message","level":"user","actor":"human","created_at":null,"queued_at":"2026-11-22T10:00:00.123Z","body":{"text":"later"}}],"has_more":false}`},
		"POST /v1/sessions/ses_1/wake":    {202, sessionJSON},
		"POST /v1/sessions/ses_1/archive": {200, strings.Replace(sessionJSON, `"idle"`, `"archived"`, 1)},
	})
	ctx := context.Background()
	in := "hello"
	cs, err := c.CreateSession(ctx, client.SessionParams{Agent: "agt_1", AgentVersion: 2, Input: &in, Metadata: map[string]string{"k": "v"}, Tenant: "customer:acme", IdempotencyKey: "idem-1"})
	if err != nil || cs.ClientToken != "sbt_x" || cs.Status != core.StatusQueued {
		t.Fatalf("create %+v %v", cs, err)
	}
	r := f.last(t)
	if r.Header.Get("Idempotency-Key") != "idem-1" {
		t.Fatalf("headers %v", r.Header)
	}
	jsonEq(t, r.Body, `{"agent":{"id":"agt_1","version":2},"input":"hello","metadata":{"k":"v"},"tenant":"customer:acme"}`)
	if _, err := c.CreateSession(ctx, client.SessionParams{Agent: "default"}); err != nil {
		t.Fatal(err)
	}
	if r := f.last(t); r.Header.Get("Idempotency-Key") != "" {
		t.Fatalf("unexpected idempotency key %v", r.Header)
	} else {
		jsonEq(t, r.Body, `{"agent":"default"}`)
	}

	page, err := c.ListSessions(ctx, client.SessionFilter{Status: "idle", Agent: "agt_1", OriginKey: "slack:T1:C1:1.2"})
	if err != nil || len(page.Data) != 1 || page.Data[0].Usage.InputTokens != 21 || page.Data[0].StopReason != core.ReasonCompleted {
		t.Fatalf("list %+v %v", page, err)
	}
	if q := f.last(t).Query; q != "agent=agt_1&origin_key=slack%3AT1%3AC1%3A1.2&status=idle" {
		t.Fatalf("query %q", q)
	}
	page, err = c.ListSessions(ctx, client.SessionFilter{Provider: "slack", Tenant: "slack:T1", Text: "Deploy it", After: "ses_0"})
	if err != nil || !page.HasMore || page.Next != "ses_9" || !page.Capped {
		t.Fatalf("search %+v %v", page, err)
	}
	if q := f.last(t).Query; q != "after=ses_0&provider=slack&q=Deploy+it&tenant=slack%3AT1" {
		t.Fatalf("search query %q", q)
	}

	s, err := c.GetSession(ctx, "ses_1")
	if err != nil || s.LastSeq != 6 || s.Metadata["k"] != "v" || s.Origin != nil {
		t.Fatalf("get %+v %v", s, err)
	}

	q, err := c.SendMessage(ctx, "ses_1", "more", "idem-2")
	if err != nil || q.ID != "in_1" || q.Type != "user.message" {
		t.Fatalf("send %+v %v", q, err)
	}
	r = f.last(t)
	jsonEq(t, r.Body, `{"events":[{"type":"user.message","text":"more"}]}`)
	if r.Header.Get("Idempotency-Key") != "idem-2" {
		t.Fatalf("headers %v", r.Header)
	}
	if _, err := c.Interrupt(ctx, "ses_1"); err != nil {
		t.Fatal(err)
	}
	jsonEq(t, f.last(t).Body, `{"events":[{"type":"user.interrupt"}]}`)
	out := ""
	if _, err := c.SendEvents(ctx, "ses_1", []client.Input{{Type: "user.custom_tool_result", ToolUseID: "tu_1", Output: &out}}, ""); err != nil {
		t.Fatal(err)
	}
	jsonEq(t, f.last(t).Body, `{"events":[{"type":"user.custom_tool_result","tool_use_id":"tu_1","output":""}]}`)

	evs, err := c.Events(ctx, "ses_1", client.EventsQuery{After: 2, Limit: 10, Level: "user"})
	if err != nil || len(evs.Data) != 1 || evs.Data[0].Seq != 3 || string(evs.Data[0].Body) != `{"text":"hi"}` {
		t.Fatalf("events %+v %v", evs, err)
	}
	if q := f.last(t).Query; q != "after=2&level=user&limit=10" {
		t.Fatalf("query %q", q)
	}
	if r := f.last(t); r.Header.Get("Accept") != "application/json" {
		t.Fatalf("accept %q", r.Header.Get("Accept"))
	}

	pend, err := c.Pending(ctx, "ses_1")
	if err != nil || len(pend) != 1 || pend[0].QueuedAt == nil || pend[0].Seq != 0 {
		t.Fatalf("pending %+v %v", pend, err)
	}
	if _, err := c.Wake(ctx, "ses_1"); err != nil {
		t.Fatal(err)
	}
	s, err = c.Archive(ctx, "ses_1")
	if err != nil || s.Status != core.StatusArchived {
		t.Fatalf("archive %+v %v", s, err)
	}
}

func TestAPIError(t *testing.T) {
	_, c := newFake(t, map[string]answer{
		"GET /v1/sessions/ses_x":    {404, `{"error":{"type":"not_found","message":"session ses_x: not found"}}`},
		"POST /v1/agents/agt_1":     {409, `{"error":{"type":"conflict","message":"agent agt_1 is at version 3, not 2: conflict"}}`},
		"GET /v1/sessions/ses_html": {502, `<html>bad gateway</html>`},
	})
	ctx := context.Background()
	_, err := c.GetSession(ctx, "ses_x")
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.Status != 404 || ae.Type != "not_found" || ae.Error() != "session ses_x: not found" {
		t.Fatalf("err %#v", err)
	}
	_, err = c.UpdateAgent(ctx, "agt_1", client.AgentParams{})
	if !errors.As(err, &ae) || ae.Status != 409 || ae.Type != "conflict" {
		t.Fatalf("err %#v", err)
	}
	_, err = c.GetSession(ctx, "ses_html")
	if !errors.As(err, &ae) || ae.Status != 502 || ae.Type != "" || !strings.Contains(ae.Message, "502") || !strings.Contains(ae.Message, "bad gateway") {
		t.Fatalf("err %#v", err)
	}
	// An id with a slash stays one path segment.
	if _, err = c.GetSession(ctx, "a/b"); !errors.As(err, &ae) || !strings.Contains(ae.Message, "/v1/sessions/a%2Fb") {
		t.Fatalf("err %v", err)
	}
}

func TestTransportError(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	_, err := client.New(url, "", nil).GetSession(context.Background(), "ses_1")
	var ae *client.APIError
	if err == nil || errors.As(err, &ae) || !strings.Contains(err.Error(), "GET /v1/sessions/ses_1") {
		t.Fatalf("err %v", err)
	}
}
