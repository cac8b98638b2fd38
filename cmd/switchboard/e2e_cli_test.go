package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// cliRunner runs the switchboard binary as a CLI with a fixed environment.
type cliRunner struct {
	t   *testing.T
	env []string
}

// newCLI points the CLI at url with token; no other SWITCHBOARD_* variable
// of the test's own environment leaks in.
func newCLI(t *testing.T, vars ...string) cliRunner {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SWITCHBOARD_") {
			env = append(env, kv)
		}
	}
	return cliRunner{t: t, env: append(env, vars...)}
}

// run runs one command to its end with stdin and returns its output and
// exit code.
func (c cliRunner) run(stdin string, args ...string) (stdout, stderr string, code int) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	cmd := exec.CommandContext(ctx, serveBinary(c.t), args...)
	cmd.Env = c.env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		c.t.Fatalf("switchboard %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), errOut.String(), code
}

// ok runs a command that must succeed and returns its stdout.
func (c cliRunner) ok(stdin string, args ...string) string {
	c.t.Helper()
	out, errOut, code := c.run(stdin, args...)
	if code != 0 {
		c.t.Fatalf("switchboard %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// okJSON runs a command that must succeed and decodes its JSON output.
func (c cliRunner) okJSON(v any, args ...string) {
	c.t.Helper()
	mustJSON(c.t, []byte(c.ok("", args...)), v)
}

// cliFollower is a running `session events --follow`.
type cliFollower struct {
	t      *testing.T
	cmd    *exec.Cmd
	lines  chan string
	stderr *syncBuffer
	done   chan struct{}
	err    error
}

func (c cliRunner) follow(args ...string) *cliFollower {
	c.t.Helper()
	f := &cliFollower{t: c.t, cmd: exec.Command(serveBinary(c.t), args...), lines: make(chan string, 1000), stderr: &syncBuffer{}, done: make(chan struct{})}
	f.cmd.Env = c.env
	f.cmd.Stderr = f.stderr
	stdout, err := f.cmd.StdoutPipe()
	if err != nil {
		c.t.Fatal(err)
	}
	if err := f.cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			f.lines <- sc.Text()
		}
		close(f.lines)
		f.err = f.cmd.Wait()
		close(f.done)
	}()
	c.t.Cleanup(func() {
		select {
		case <-f.done:
		default:
			_ = f.cmd.Process.Kill()
			<-f.done
		}
	})
	return f
}

// until collects lines up to and including the first that matches.
func (f *cliFollower) until(match func(string) bool) []string {
	f.t.Helper()
	var got []string
	timeout := time.After(patience)
	for {
		select {
		case l, ok := <-f.lines:
			if !ok {
				f.t.Fatalf("follow ended early after %q\nstderr: %s", got, f.stderr.String())
			}
			got = append(got, l)
			if match(l) {
				return got
			}
		case <-timeout:
			f.t.Fatalf("follow: no matching line in %v; got %q\nstderr: %s", patience, got, f.stderr.String())
		}
	}
}

// stop interrupts the follower the way a person does, with Ctrl-C, which
// must end it cleanly.
func (f *cliFollower) stop() {
	f.t.Helper()
	_ = f.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-f.done:
	case <-time.After(patience):
		f.t.Fatal("follow did not stop on SIGINT")
	}
	if f.err != nil || f.stderr.String() != "" {
		f.t.Fatalf("follow ended with %v, stderr %q", f.err, f.stderr.String())
	}
}

// field returns the value of a "key: value" line of human output.
func field(t *testing.T, out, key string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(key) + `:\s+(.*)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no %q line in:\n%s", key, out)
	}
	return strings.TrimSpace(m[1])
}

func TestCLI(t *testing.T) {
	ms, hs := modelserver.Start(t)
	env := modelEnv(hs.URL, modelserver.FormatAnthropic)
	// Both providers have a client: the second agent is OpenAI's.
	env["OPENAI_API_KEY"], env["OPENAI_BASE_URL"] = "test-key", modelserver.OpenAIBaseURL(hs.URL)
	srv := startServer(t, t.TempDir(), env)
	sb := newCLI(t, "SWITCHBOARD_URL="+srv.url, "SWITCHBOARD_TOKEN="+adminToken, "SWITCHBOARD_DATA_DIR="+t.TempDir())

	// Agents: human output, then JSON.
	out := sb.ok("", "agent", "create", "--name", "helper", "--model", "anthropic/claude-test", "--system", "Be brief.", "--max-steps", "5")
	agentID := field(t, out, "id")
	if !strings.HasPrefix(agentID, "agt_") || field(t, out, "name") != "helper" || field(t, out, "version") != "1" ||
		field(t, out, "limits") != "max_steps=5" || field(t, out, "system") != "Be brief." {
		t.Fatalf("agent create printed:\n%s", out)
	}
	var other struct {
		ID      string `json:"id"`
		Name    string `json:"name"`
		Version int    `json:"version"`
		Model   string `json:"model"`
	}
	sb.okJSON(&other, "agent", "create", "--json", "--name", "other", "--model", "openai/gpt-test")
	if other.Name != "other" || other.Version != 1 || other.Model != "openai/gpt-test" {
		t.Fatalf("agent create --json: %+v", other)
	}
	// Only the given limit changes; the others are kept.
	var updated struct {
		Version     int    `json:"version"`
		Description string `json:"description"`
		Limits      struct {
			MaxSteps    int `json:"max_steps"`
			TurnSeconds int `json:"turn_seconds"`
		} `json:"limits"`
	}
	sb.okJSON(&updated, "agent", "update", "helper", "--description", "helps", "--turn-seconds", "60", "--json")
	if updated.Version != 2 || updated.Description != "helps" || updated.Limits.MaxSteps != 5 || updated.Limits.TurnSeconds != 60 {
		t.Fatalf("agent update: %+v", updated)
	}
	if _, errOut, code := sb.run("", "agent", "update", agentID, "--version", "1", "--description", "stale"); code != 1 ||
		!strings.HasPrefix(errOut, "switchboard: ") || !strings.Contains(errOut, "is at version 2, not 1") || strings.HasSuffix(strings.TrimSpace(errOut), ": conflict") {
		t.Fatalf("stale update: exit %d, stderr %q", code, errOut)
	}
	list := sb.ok("", "agent", "list")
	if !regexp.MustCompile(`(?m)^ID\s+NAME\s+VERSION\s+MODEL`).MatchString(list) ||
		!regexp.MustCompile(`(?m)^`+agentID+`\s+helper\s+2\s+anthropic/claude-test`).MatchString(list) ||
		!strings.Contains(list, other.ID) {
		t.Fatalf("agent list:\n%s", list)
	}
	if got := field(t, sb.ok("", "agent", "get", other.ID), "model"); got != "openai/gpt-test" {
		t.Fatalf("agent get model %q", got)
	}

	// A session with input, followed as NDJSON while its turn runs.
	ms.Push(modelserver.Step{Text: "Hello from the model.", Usage: modelserver.Usage{Input: 11, Output: 5}})
	release := holdAnswer(t, ms) // the answer waits until the follow shows the turn started
	var created struct {
		ID          string            `json:"id"`
		Status      string            `json:"status"`
		ClientToken string            `json:"client_token"`
		Metadata    map[string]string `json:"metadata"`
		Agent       struct {
			ID      string `json:"id"`
			Version int    `json:"version"`
		} `json:"agent"`
	}
	sb.okJSON(&created, "session", "create", "--agent", "helper", "--input", "hi there", "--metadata", "team=core", "--metadata", "ticket=7", "--json")
	id := created.ID
	if !strings.HasPrefix(id, "ses_") || created.Status != "queued" || created.ClientToken == "" ||
		created.Agent.ID != agentID || created.Agent.Version != 2 || created.Metadata["team"] != "core" || created.Metadata["ticket"] != "7" {
		t.Fatalf("session create: %+v", created)
	}
	f := sb.follow("session", "events", id, "--follow", "--json")
	lines := f.until(func(l string) bool { return strings.Contains(l, `"type":"turn.started"`) })
	release()
	lines = append(lines, f.until(func(l string) bool { return strings.Contains(l, `"type":"turn.completed"`) })...)
	f.stop()
	want := []string{"user.message", "session.status_changed", "turn.started", "agent.message", "turn.completed"}
	if len(lines) != len(want) {
		t.Fatalf("followed %d lines, want %d:\n%s", len(lines), len(want), strings.Join(lines, "\n"))
	}
	for i, l := range lines {
		var e event
		mustJSON(t, []byte(l), &e)
		if e.Type != want[i] || e.Seq != uint64(i+1) || e.SessionID != id {
			t.Fatalf("line %d: %s, want %s seq %d", i, l, want[i], i+1)
		}
		if e.Type == "agent.message" && !strings.Contains(string(e.Body), "Hello from the model.") {
			t.Fatalf("agent.message %s", e.Body)
		}
	}
	srv.waitIdle(id)

	// The same log for people, and filtered by level.
	human := sb.ok("", "session", "events", id)
	for _, re := range []string{
		`(?m)^#1 user\.message\s+hi there$`,
		`(?m)^#2 session\.status_changed\s+running$`,
		`(?m)^#3 turn\.started$`,
		`(?m)^#4 agent\.message\s+Hello from the model\.$`,
		`(?m)^#5 turn\.completed\s+completed\s+tokens in=11 out=5$`,
		`(?m)^#6 session\.status_changed\s+idle \(completed\)$`,
	} {
		if !regexp.MustCompile(re).MatchString(human) {
			t.Fatalf("session events: no line matching %s in:\n%s", re, human)
		}
	}
	if user := sb.ok("", "session", "events", "--level", "user", id); strings.Contains(user, "turn.started") || !strings.Contains(user, "#4 agent.message") {
		t.Fatalf("--level user:\n%s", user)
	}
	var page struct {
		Data    []event `json:"data"`
		HasMore bool    `json:"has_more"`
	}
	sb.okJSON(&page, "session", "events", id, "--after", "4", "--json")
	if len(page.Data) != 2 || page.Data[0].Seq != 5 || page.HasMore {
		t.Fatalf("events --after 4: %+v", page)
	}

	// session send, followed for people; an idempotency key queues once.
	last := page.Data[1].Seq
	ms.Push(modelserver.Step{Text: "Second answer.", Delay: 200 * time.Millisecond})
	hf := sb.follow("session", "events", id, "--follow", "--after", fmt.Sprint(last))
	sent := sb.ok("", "session", "send", "--idempotency-key", "k1", id, "second message")
	if !regexp.MustCompile(`^queued user\.message evt_\S+ for ` + id + "\n$").MatchString(sent) {
		t.Fatalf("session send printed %q", sent)
	}
	if again := sb.ok("", "session", "send", id, "second message", "--idempotency-key", "k1"); again != sent {
		t.Fatalf("replayed send printed %q, want %q", again, sent)
	}
	got := hf.until(func(l string) bool { return strings.Contains(l, "agent.message") })
	hf.stop()
	if !regexp.MustCompile(`^#7 user\.message\s+second message$`).MatchString(got[0]) ||
		!regexp.MustCompile(`agent\.message\s+Second answer\.$`).MatchString(got[len(got)-1]) {
		t.Fatalf("human follow:\n%s", strings.Join(got, "\n"))
	}
	srv.waitIdle(id)

	// TEXT "-" reads stdin.
	ms.Push(modelserver.Step{Text: "Third answer."})
	sb.ok("line one\nline two\n", "session", "send", id, "-")
	_, evs := srv.waitIdle(id)
	checkLog(t, evs)
	var msgs []string
	for _, e := range evs {
		if e.Type == "user.message" {
			var b struct {
				Text string `json:"text"`
			}
			mustJSON(t, e.Body, &b)
			msgs = append(msgs, b.Text)
		}
	}
	if strings.Join(msgs, "|") != "hi there|second message|line one\nline two" {
		t.Fatalf("user messages %q", msgs)
	}

	// Status, human and JSON.
	st := sb.ok("", "session", "status", id)
	if field(t, st, "status") != "idle" || field(t, st, "stop_reason") != "completed" || field(t, st, "origin") != "api" ||
		field(t, st, "metadata") != "team=core ticket=7" || field(t, st, "agent") != "helper ("+agentID+", version 2)" {
		t.Fatalf("session status:\n%s", st)
	}
	var view sessionState
	sb.okJSON(&view, "session", "status", id, "--json")
	if view.ID != id || view.Status != "idle" || view.LastSeq != uint64(len(evs)) || view.Usage.InputTokens < 11 {
		t.Fatalf("session status --json: %+v", view)
	}
	// Lists name the agent and show the first message; --agent takes the
	// agent's name or its id.
	for _, agent := range []string{"helper", agentID} {
		if l := sb.ok("", "session", "list", "--agent", agent, "--status", "idle"); !regexp.MustCompile(`(?m)^` + id + `\s+idle\s+completed\s+helper@2\s+api\s+hi there\s`).MatchString(l) {
			t.Fatalf("session list --agent %s:\n%s", agent, l)
		}
	}
	if _, errOut, code := sb.run("", "session", "list", "--agent", "helpr"); code != 1 || !strings.Contains(errOut, `did you mean "helper"?`) {
		t.Fatalf("session list --agent helpr: exit %d, stderr %q", code, errOut)
	}
	var sessions struct {
		Data []sessionState `json:"data"`
	}
	sb.okJSON(&sessions, "session", "list", "--status", "failed", "--json")
	if len(sessions.Data) != 0 {
		t.Fatalf("failed sessions: %+v", sessions.Data)
	}

	// The result: the last finished turn's answer, and exit 1 once a turn
	// failed.
	if out := sb.ok("", "session", "result", id); out != "Third answer.\n" {
		t.Fatalf("session result printed %q", out)
	}
	var res struct {
		TurnID      string `json:"turn_id"`
		YieldReason string `json:"yield_reason"`
		Text        string `json:"text"`
		CompletedAt string `json:"completed_at"`
	}
	sb.okJSON(&res, "session", "result", id, "--json")
	if res.YieldReason != "completed" || res.Text != "Third answer." || !strings.HasPrefix(res.TurnID, "turn_") || res.CompletedAt == "" {
		t.Fatalf("session result --json: %+v", res)
	}
	ms.Push(modelserver.Step{Status: 401, ErrorMessage: "invalid x-api-key"})
	sb.ok("", "session", "send", id, "one more")
	srv.waitFor(id, "the failed turn", func(st sessionState, _ []event) bool { return st.Status == "failed" })
	out, errOut, code := sb.run("", "session", "result", id)
	if code != 1 || !strings.Contains(out, "invalid x-api-key") || !strings.Contains(errOut, "failed") {
		t.Fatalf("session result after a failed turn: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}

	// Interrupt a turn stuck in a model call.
	ms.Push(modelserver.Step{Hang: true})
	n := len(ms.Requests())
	sb.ok("", "session", "send", id, "long work")
	waitRequests(t, ms, n+1)
	if out := sb.ok("", "session", "interrupt", id); !strings.HasPrefix(out, "queued user.interrupt ") {
		t.Fatalf("interrupt printed %q", out)
	}
	st2, evs := srv.waitFor(id, "the interrupt", func(st sessionState, evs []event) bool {
		return st.Status == "idle" && count(evs, "user.interrupt") == 1
	})
	if st2.StopReason == nil || *st2.StopReason != "canceled" {
		t.Fatalf("after interrupt: %+v, log %v", st2, types(evs))
	}
	if out := sb.ok("", "session", "wake", id); out != "woke "+id+" (status: idle)\n" {
		t.Fatalf("wake printed %q", out)
	}

	// Archive; the session is then read-only.
	if out := sb.ok("", "session", "archive", id); out != "archived "+id+"\n" {
		t.Fatalf("archive printed %q", out)
	}
	sb.okJSON(&view, "session", "status", id, "--json")
	if view.Status != "archived" {
		t.Fatalf("after archive: %+v", view)
	}
	if _, errOut, code := sb.run("", "session", "send", id, "too late"); code != 1 || !strings.Contains(errOut, "archived") {
		t.Fatalf("send to archived: exit %d, stderr %q", code, errOut)
	}

	// Errors: the API's message on stderr and a non-zero exit.
	_, apiRaw := srv.do("GET", "/v1/sessions/ses_nope", nil)
	var apiErr struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	mustJSON(t, apiRaw, &apiErr)
	if out, errOut, code := sb.run("", "session", "status", "ses_nope"); code != 1 || out != "" || errOut != "switchboard: "+apiErr.Error.Message+"\n" {
		t.Fatalf("unknown session: exit %d, stdout %q, stderr %q (API said %q)", code, out, errOut, apiErr.Error.Message)
	}
	if _, errOut, code := sb.run("", "session", "events", "ses_nope", "--follow"); code != 1 || !strings.Contains(errOut, apiErr.Error.Message) {
		t.Fatalf("following an unknown session: exit %d, stderr %q", code, errOut)
	}
	if _, errOut, code := sb.run("", "session", "list", "--token", "wrong"); code != 1 || !strings.HasPrefix(errOut, "switchboard: ") {
		t.Fatalf("bad token: exit %d, stderr %q", code, errOut)
	}
	if _, errOut, code := sb.run("", "session", "send", id); code != 2 || !strings.Contains(errOut, "usage: switchboard session send") {
		t.Fatalf("missing argument: exit %d, stderr %q", code, errOut)
	}

	// Without a token anywhere else, <data dir>/admin-token is read.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "admin-token"), []byte(adminToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	local := newCLI(t, "SWITCHBOARD_URL="+srv.url, "SWITCHBOARD_DATA_DIR="+dir)
	if got := field(t, local.ok("", "session", "status", id), "status"); got != "archived" {
		t.Fatalf("status with the token file: %q", got)
	}
	var decoded map[string]json.RawMessage
	local.okJSON(&decoded, "agent", "get", "helper", "--json")
	if string(decoded["name"]) != `"helper"` {
		t.Fatalf("agent get --json: %s", decoded["name"])
	}
}
