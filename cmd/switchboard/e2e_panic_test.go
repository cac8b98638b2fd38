package main_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// TestToolPanicEndsOnlyItsTurn: a tool that panics (the test build's
// SWITCHBOARD_TEST_PANIC_TOOL) ends its turn with a retryable
// session.error "internal error" and the panic in the log once, with its
// stack; another session's turn, in flight meanwhile, completes; serve
// stays up and runs a third session; a retry runs the failed turn again.
func TestToolPanicEndsOnlyItsTurn(t *testing.T) {
	ms, hs := modelserver.Start(t)
	env := modelEnv(hs.URL, modelserver.FormatAnthropic)
	env["SWITCHBOARD_TEST_PANIC_TOOL"] = "test_panic"
	srv := startServer(t, t.TempDir(), env)

	// The first request (the other session's) is held while the panic
	// happens; each later one takes the next step.
	ms.Push(
		modelserver.Step{ToolCalls: []modelserver.ToolCall{{Name: "test_panic"}}},
		modelserver.Step{Text: "The other session's answer."},
		modelserver.Step{Text: "The third session's answer."},
		modelserver.Step{Text: "Done on the retry."},
	)
	release := holdAnswer(t, ms)
	other := srv.createSession("take your time")
	waitRequests(t, ms, 1)

	start := time.Now()
	id := srv.createSession("call the tool that panics")
	st, evs := srv.waitFor(id, "the panicked turn", func(st sessionState, _ []event) bool { return st.Status == "failed" })
	t.Logf("the panicked turn ended %s after its session was created", time.Since(start).Round(time.Millisecond))
	if st.StopReason == nil || *st.StopReason != "error" {
		t.Fatalf("the panicked session: %+v", st)
	}
	var errors []string
	for _, e := range evs {
		if e.Type == "session.error" {
			errors = append(errors, string(e.Body))
		}
	}
	if len(errors) != 1 || errors[0] != `{"message":"internal error","retryable":true}` {
		t.Fatalf("session.error bodies %v; log %v", errors, types(evs))
	}
	if got := srv.session(other).Status; got != "running" {
		t.Fatalf("the other session is %s while its answer is held, want running", got)
	}

	release()
	st, evs = srv.waitIdle(other)
	if st.StopReason == nil || *st.StopReason != "completed" || srv.result(other).Text != "The other session's answer." {
		t.Fatalf("the other session: %+v, log %v", st, types(evs))
	}
	resp, err := http.Get(srv.url + "/healthz")
	if err != nil {
		t.Fatalf("healthz after the panic: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("healthz after the panic: %d", resp.StatusCode)
	}
	third := srv.createSession("are you still there?")
	if st, _ := srv.waitIdle(third); st.StopReason == nil || *st.StopReason != "completed" {
		t.Fatalf("a session after the panic: %+v", st)
	}

	out := srv.out.String()
	if n := strings.Count(out, "msg=panic "); n != 1 || !strings.Contains(out, "test tool test_panic panics as asked") || !strings.Contains(out, "goroutine ") {
		t.Fatalf("%d panic records, want one with its value and stack:\n%s", n, out)
	}

	srv.post(id, map[string]any{"type": "user.retry"})
	if st, _ := srv.waitIdle(id); st.StopReason == nil || *st.StopReason != "completed" {
		t.Fatalf("the retried session: %+v", st)
	}
	if got := srv.result(id).Text; got != "Done on the retry." {
		t.Fatalf("the retried session's result %q", got)
	}
}
