package cli

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core/command"
)

// TestSessionListFilters: session list sends its filters as the API's
// query and tells where the next page starts, and when a search stopped
// at its bound.
func TestSessionListFilters(t *testing.T) {
	var query string
	answer := ""
	srv := httptest.NewServer(withAgents(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		query = r.URL.RawQuery
		_, _ = w.Write([]byte(answer))
	})))
	t.Cleanup(srv.Close)
	const session = `{"id":"ses_1","status":"idle","agent":{"id":"agt_1","version":1},"origin":{"provider":"slack","key":"slack:T1:C1:1.2"},"metadata":{},"usage":{},"last_seq":2,"created_at":"2026-11-22T10:00:00.000Z","updated_at":"2026-11-22T10:00:00.000Z"}`
	tests := []struct {
		name, answer string
		args         []string
		query        string
		stderr       string
	}{
		{"filters", `{"data":[` + session + `],"has_more":false}`,
			[]string{"--provider", "slack", "--tenant", "slack:T1", "--text", "deploy it"},
			"provider=slack&q=deploy+it&tenant=slack%3AT1", ""},
		{"more", `{"data":[` + session + `],"has_more":true,"next":"ses_1"}`,
			[]string{"--provider", "slack", "--limit", "1"},
			"limit=1&provider=slack", "more: --after ses_1\n"},
		{"capped", `{"data":[],"has_more":true,"next":"ses_7","capped":true}`,
			[]string{"--text", "deploy"},
			"q=deploy", "the search stopped at the sessions one page may read; go on with --after\nmore: --after ses_7\n"},
		{"a server without next", `{"data":[` + session + `],"has_more":true}`,
			nil, "", "more: --after ses_1\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			answer = tc.answer
			var out, errOut bytes.Buffer
			env := command.Env{Getenv: func(string) string { return "" }, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut}
			args := append([]string{"list", "--url", srv.URL, "--token", "t"}, tc.args...)
			if code := Session(Defaults{URL: srv.URL}).Run(context.Background(), env, args); code != 0 {
				t.Fatalf("exit %d: %s", code, errOut.String())
			}
			if query != tc.query || errOut.String() != tc.stderr {
				t.Fatalf("query %q, stderr %q; want %q, %q", query, errOut.String(), tc.query, tc.stderr)
			}
			if strings.Contains(tc.answer, "ses_1") && !strings.Contains(out.String(), "ses_1") {
				t.Fatalf("table:\n%s", out.String())
			}
		})
	}
}

// TestSessionResult: session result prints the last finished turn's text
// (its JSON with --json); a failed last turn and a session with no
// finished turn exit 1 with a reason on stderr.
func TestSessionResult(t *testing.T) {
	var answer string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(answer))
	}))
	t.Cleanup(srv.Close)
	session := func(result string) string {
		return `{"id":"ses_1","status":"idle","agent":{"id":"agt_1","version":1},"origin":null,"metadata":{},"usage":{},"result":` + result +
			`,"last_seq":9,"created_at":"2026-11-22T10:00:00.000Z","updated_at":"2026-11-22T10:00:00.000Z"}`
	}
	const done = `{"turn_id":"turn_1","yield_reason":"completed","text":"All green.\n","completed_at":"2026-11-22T10:00:05.000Z"}`
	const failed = `{"turn_id":"turn_2","yield_reason":"error","text":"the model rejected the key","completed_at":"2026-11-22T10:00:05.000Z"}`
	tests := []struct {
		name, answer   string
		json           bool
		code           int
		stdout, stderr string
	}{
		{"answer", session(done), false, 0, "All green.\n", ""},
		{"json", session(done), true, 0, `"yield_reason": "completed"`, ""},
		{"failed", session(failed), false, 1, "the model rejected the key\n", "the last turn (turn_2) failed"},
		{"none yet", session("null"), false, 1, "", "session ses_1 has no finished turn yet (status idle)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			answer = tc.answer
			var out, errOut bytes.Buffer
			env := command.Env{Getenv: func(string) string { return "" }, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut}
			args := []string{"result", "ses_1", "--url", srv.URL, "--token", "t"}
			if tc.json {
				args = append(args, "--json")
			}
			code := Session(Defaults{URL: srv.URL}).Run(context.Background(), env, args)
			if code != tc.code || !strings.Contains(out.String(), tc.stdout) || !strings.Contains(errOut.String(), tc.stderr) || tc.stdout == "" && out.Len() > 0 {
				t.Fatalf("exit %d, stdout %q, stderr %q; want %d, %q, %q", code, out.String(), errOut.String(), tc.code, tc.stdout, tc.stderr)
			}
		})
	}
}

// TestSessionLimits: session limits posts the flags given as the
// session's limits and shows the session it gets back, budget pause
// included; no flag is a usage error that posts nothing.
func TestSessionLimits(t *testing.T) {
	var posted []string
	srv := httptest.NewServer(withAgents(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		posted = append(posted, r.Method+" "+r.URL.Path+" "+string(body))
		_, _ = w.Write([]byte(`{"id":"ses_1","status":"awaiting_input","stop_reason":"budget_exceeded",` +
			`"pending_action":{"tool_use_ids":[],"budget":{"name":"max_session_cost_usd","limit":1,"spent":1.25}},` +
			`"agent":{"id":"agt_1","version":1},"origin":null,"metadata":{},"limits":{"max_session_cost_usd":5},"usage":{},"turns":3,` +
			`"last_seq":9,"created_at":"2026-11-22T10:00:00.000Z","updated_at":"2026-11-22T10:00:00.000Z"}`))
	})))
	t.Cleanup(srv.Close)
	run := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		env := command.Env{Getenv: func(string) string { return "" }, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut}
		code := Session(Defaults{URL: srv.URL}).Run(context.Background(), env, append(args, "--url", srv.URL, "--token", "t"))
		return code, out.String(), errOut.String()
	}
	code, out, errOut := run("limits", "ses_1", "--max-session-cost-usd", "5")
	if code != 0 || len(posted) != 1 || posted[0] != `POST /v1/sessions/ses_1 {"limits":{"max_session_cost_usd":5}}` {
		t.Fatalf("exit %d (%s), posted %q", code, errOut, posted)
	}
	for _, want := range []string{"budget max_session_cost_usd: spent $1.25 of $1.00", "max_session_cost_usd=5 (over the agent's)", "nightly (agt_1, version 1)"} {
		if !strings.Contains(out, want) {
			t.Fatalf("output lacks %q:\n%s", want, out)
		}
	}
	if !regexp.MustCompile(`(?m)^turns:\s+3$`).MatchString(out) {
		t.Fatalf("output lacks the session's turns:\n%s", out)
	}
	if code, _, errOut := run("limits", "ses_1", "--max-turns", "4"); code != 0 || len(posted) != 2 || posted[1] != `POST /v1/sessions/ses_1 {"limits":{"max_turns":4}}` {
		t.Fatalf("--max-turns: exit %d (%s), posted %q", code, errOut, posted)
	}
	if code, _, errOut := run("limits", "ses_1"); code != 2 || !strings.Contains(errOut, "give at least one limit") || len(posted) != 2 {
		t.Fatalf("no flags: exit %d, stderr %q, posted %q", code, errOut, posted)
	}
}

// TestScheduleCreate: schedule create posts the flags as the API's body
// and shows the schedule; a time that is not one is a usage error that
// posts nothing.
func TestScheduleCreate(t *testing.T) {
	var posted []string
	srv := httptest.NewServer(withAgents(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		posted = append(posted, r.Method+" "+r.URL.Path+" "+string(body))
		w.WriteHeader(201)
		_, _ = w.Write([]byte(`{"id":"sch_1","cron":"30 2 * * *","time_zone":"Europe/Berlin","target":{"agent":"agt_1","input":"triage"},` +
			`"paused":false,"next_at":"2026-03-29T01:00:00.000Z","last_fired_at":null,"fires":0,"created_by":"admin","created_at":"2026-03-28T12:00:00.000Z","updated_at":"2026-03-28T12:00:00.000Z"}`))
	})))
	t.Cleanup(srv.Close)
	run := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		env := command.Env{Getenv: func(string) string { return "" }, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut}
		code := Schedule(Defaults{URL: srv.URL}).Run(context.Background(), env, append(args, "--url", srv.URL, "--token", "t"))
		return code, out.String(), errOut.String()
	}
	code, out, errOut := run("create", "--cron", "30 2 * * *", "--time-zone", "Europe/Berlin", "--agent", "nightly", "--input", "triage")
	if code != 0 || len(posted) != 1 ||
		posted[0] != `POST /v1/schedules {"cron":"30 2 * * *","time_zone":"Europe/Berlin","target":{"agent":"nightly","input":"triage"}}` {
		t.Fatalf("exit %d (%s), posted %q", code, errOut, posted)
	}
	for _, want := range []string{"30 2 * * * (Europe/Berlin)", "new session of nightly", "2026-03-29T01:00:00Z", "active"} {
		if !strings.Contains(out, want) {
			t.Fatalf("output lacks %q:\n%s", want, out)
		}
	}
	if code, _, errOut := run("create", "--at", "tomorrow", "--session", "ses_1", "--input", "x"); code != 2 || !strings.Contains(errOut, "not an RFC 3339 time") || len(posted) != 1 {
		t.Fatalf("bad --at: exit %d, stderr %q, posted %d", code, errOut, len(posted))
	}
}

// recorder answers every request with status and answer, keeping each as
// "METHOD path body".
func recorder(t *testing.T, status int, answer string) (*httptest.Server, *[]string) {
	t.Helper()
	var posted []string
	srv := httptest.NewServer(withAgents(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		posted = append(posted, r.Method+" "+r.URL.Path+" "+string(body))
		w.WriteHeader(status)
		_, _ = w.Write([]byte(answer))
	})))
	t.Cleanup(srv.Close)
	return srv, &posted
}

// runSession runs a session command against srv.
func runSession(srv *httptest.Server, args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	env := command.Env{Getenv: func(string) string { return "" }, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut}
	code := Session(Defaults{URL: srv.URL}).Run(context.Background(), env, append(args, "--url", srv.URL, "--token", "t"))
	return code, out.String(), errOut.String()
}

// TestSessionFork: session fork posts at_seq and shows the fork.
func TestSessionFork(t *testing.T) {
	srv, posted := recorder(t, 201, `{"id":"ses_2","status":"idle","agent":{"id":"agt_1","version":2},"client_token":"tok","origin":null,"metadata":{},`+
		`"tenant":"api","created_at":"2026-11-22T10:00:00.000Z","forked_from":{"session":"ses_1","seq":7}}`)
	code, out, errOut := runSession(srv, "fork", "ses_1", "--at-seq", "7")
	if code != 0 || len(*posted) != 1 || (*posted)[0] != `POST /v1/sessions/ses_1/fork {"at_seq":7}` ||
		!strings.Contains(out, "ses_1 at seq 7") || !strings.Contains(out, "tok  (shown once)") || !strings.Contains(out, "nightly (agt_1, version 2)") {
		t.Fatalf("exit %d (%s), posted %q, output:\n%s", code, errOut, *posted, out)
	}
}

// TestSessionCreateDefaultAgent: without --agent, session create runs the
// agent named default.
func TestSessionCreateDefaultAgent(t *testing.T) {
	srv, posted := recorder(t, 201, `{"id":"ses_3","status":"queued","agent":{"id":"agt_d","version":1},"client_token":"tok","origin":null,"metadata":{},`+
		`"tenant":"api","created_at":"2026-11-22T10:00:00.000Z"}`)
	code, _, errOut := runSession(srv, "create", "--input", "hi")
	if code != 0 || len(*posted) != 1 || !strings.HasPrefix((*posted)[0], `POST /v1/sessions {"agent":"default"`) {
		t.Fatalf("exit %d (%s), posted %q", code, errOut, *posted)
	}
}

// TestSessionListNames: session list names each session's agent, shows
// the start of its first message and its thread's title (else its key),
// and takes --agent as a name or an id; an unknown name posts nothing
// and names the closest agent.
func TestSessionListNames(t *testing.T) {
	var queries []string
	srv := httptest.NewServer(withAgents(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		queries = append(queries, r.URL.RawQuery)
		_, _ = w.Write([]byte(`{"data":[` +
			`{"id":"ses_1","status":"idle","agent":{"id":"agt_1","version":2},"origin":{"provider":"forge","key":"forge:o/r#7","title":"Flaky deploy on Fridays"},` +
			`"first_message":"please look at why the deploy fails every Friday afternoon when the release train leaves","metadata":{},"usage":{},"last_seq":2,"created_at":"2026-11-22T10:00:00.000Z","updated_at":"2026-11-22T10:00:00.000Z"},` +
			`{"id":"ses_2","status":"idle","agent":{"id":"agt_gone","version":1},"origin":{"provider":"chat","key":"chat:T1:C1:1.2"},` +
			`"metadata":{},"usage":{},"last_seq":0,"created_at":"2026-11-22T10:00:00.000Z","updated_at":"2026-11-22T10:00:00.000Z"}` +
			`],"has_more":false}`))
	})))
	t.Cleanup(srv.Close)
	code, out, errOut := runSession(srv, "list", "--agent", "nightly")
	if code != 0 || len(queries) != 1 || queries[0] != "agent=agt_1" {
		t.Fatalf("exit %d (%s), queries %q", code, errOut, queries)
	}
	rows := strings.Split(strings.TrimSpace(out), "\n")
	if len(rows) != 3 || !strings.Contains(rows[0], "FIRST_MESSAGE") {
		t.Fatalf("table:\n%s", out)
	}
	for _, want := range []string{"nightly@2", "Flaky deploy on Fridays", "please look at why the deploy fails ever…"} {
		if !strings.Contains(rows[1], want) {
			t.Fatalf("row lacks %q:\n%s", want, out)
		}
	}
	// An agent deleted since shows its id; a thread without a title, its key.
	for _, want := range []string{"agt_gone@1", "chat:T1:C1:1.2"} {
		if !strings.Contains(rows[2], want) {
			t.Fatalf("row lacks %q:\n%s", want, out)
		}
	}
	if code, _, errOut := runSession(srv, "list", "--agent", "agt_1"); code != 0 || queries[1] != "agent=agt_1" {
		t.Fatalf("by id: exit %d (%s), queries %q", code, errOut, queries)
	}
	if code, _, errOut := runSession(srv, "list", "--agent", "nighty"); code == 0 || len(queries) != 2 || !strings.Contains(errOut, `did you mean "nightly"?`) {
		t.Fatalf("unknown name: exit %d, stderr %q, queries %q", code, errOut, queries)
	}
}
