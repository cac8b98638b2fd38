package main_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// modelEnv points a child at the scripted model server in one format.
func modelEnv(hsURL, format string) map[string]string {
	if format == modelserver.FormatOpenAI {
		return map[string]string{
			"SWITCHBOARD_MODEL": "openai/gpt-test",
			"OPENAI_API_KEY":    "test-key",
			"OPENAI_BASE_URL":   modelserver.OpenAIBaseURL(hsURL),
		}
	}
	return map[string]string{
		"SWITCHBOARD_MODEL":  "anthropic/claude-test",
		"ANTHROPIC_API_KEY":  "test-key",
		"ANTHROPIC_BASE_URL": modelserver.AnthropicBaseURL(hsURL),
	}
}

// createSession creates a session of the default agent with input.
func (s *server) createSession(input string) string {
	s.t.Helper()
	code, raw := s.do("POST", "/v1/sessions", map[string]any{"agent": "default", "input": input})
	if code != 201 {
		s.t.Fatalf("create session: %d %s", code, raw)
	}
	var out struct {
		ID string `json:"id"`
	}
	mustJSON(s.t, raw, &out)
	return out.ID
}

func TestTurnInBothWireFormats(t *testing.T) {
	for _, format := range []string{modelserver.FormatAnthropic, modelserver.FormatOpenAI} {
		t.Run(format, func(t *testing.T) {
			ms, hs := modelserver.Start(t)
			ms.APIKey = "test-key"
			ms.Push(modelserver.Step{Text: "Hello from the model.", Usage: modelserver.Usage{Input: 21, Output: 7}})
			srv := startServer(t, t.TempDir(), modelEnv(hs.URL, format))
			id := srv.createSession("hi there")
			st, evs := srv.waitIdle(id)
			checkLog(t, evs)
			want := []string{"user.message", "session.status_changed", "turn.started", "agent.message", "turn.completed", "session.status_changed"}
			if strings.Join(types(evs), ",") != strings.Join(want, ",") {
				t.Fatalf("log %v, want %v", types(evs), want)
			}
			if st.StopReason == nil || *st.StopReason != "completed" || st.Usage.InputTokens != 21 || st.Usage.OutputTokens != 7 {
				t.Fatalf("session %+v", st)
			}
			var tc struct {
				YieldReason string `json:"yield_reason"`
				Usage       struct {
					InputTokens int64 `json:"input_tokens"`
				} `json:"usage"`
			}
			mustJSON(t, evs[4].Body, &tc)
			if tc.YieldReason != "completed" || tc.Usage.InputTokens != 21 {
				t.Fatalf("turn.completed body %s", evs[4].Body)
			}
			if !strings.Contains(string(evs[3].Body), "Hello from the model.") || evs[3].Level != "user" {
				t.Fatalf("agent.message %+v", evs[3])
			}
			reqs := ms.Requests()
			if len(reqs) != 1 || reqs[0].Format != format || reqs[0].Model == "" || len(reqs[0].Messages) != 1 {
				t.Fatalf("model requests %+v", reqs)
			}
			if got := reqs[0].Messages[0].Content[0].Text; got != "hi there" {
				t.Fatalf("model saw %q", got)
			}
		})
	}
}

// TestSteeringMidCall: a message posted while the model call is in flight
// is shown to the model at its next step and logged after the answer it
// did not see.
func TestSteeringMidCall(t *testing.T) {
	ms, hs := modelserver.Start(t)
	srv := startServer(t, t.TempDir(), modelEnv(hs.URL, modelserver.FormatAnthropic))
	ms.Push(modelserver.Step{Text: "working on X"}, modelserver.Step{Text: "X and Y done"})
	release := holdAnswer(t, ms)
	id := srv.createSession("do X")
	waitRequests(t, ms, 1)
	code, raw := srv.do("POST", "/v1/sessions/"+id+"/events", map[string]any{"events": []map[string]any{{"type": "user.message", "text": "also Y"}}})
	if code != 202 {
		t.Fatalf("steer: %d %s", code, raw)
	}
	release()
	_, evs := srv.waitIdle(id)
	checkLog(t, evs)
	want := "user.message,session.status_changed,turn.started,agent.message,user.message,agent.message,turn.completed,session.status_changed"
	if got := strings.Join(types(evs), ","); got != want {
		t.Fatalf("log %s\nwant %s", got, want)
	}
	reqs := ms.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests", len(reqs))
	}
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	if last.Content[len(last.Content)-1].Text != "also Y" {
		t.Fatalf("second request ends with %+v", last)
	}
}

// TestCrashRecovery kills serve with SIGKILL at three points of a turn and
// restarts it: the session completes, seq is gap-free, nothing is logged
// twice, no input is lost, and a tool that was running is not run again.
func TestCrashRecovery(t *testing.T) {
	t.Run("model request in flight", func(t *testing.T) {
		ms, hs := modelserver.Start(t)
		ms.Push(modelserver.Step{Hang: true})
		srv := startServer(t, t.TempDir(), modelEnv(hs.URL, modelserver.FormatAnthropic))
		id := srv.createSession("survive this")
		waitRequests(t, ms, 1)
		srv.kill()
		ms.Push(modelserver.Step{Text: "survived"})
		srv = srv.restart()
		_, evs := srv.waitIdle(id)
		checkLog(t, evs)
		want := "user.message,session.status_changed,turn.started,agent.message,turn.completed,session.status_changed"
		if got := strings.Join(types(evs), ","); got != want {
			t.Fatalf("log %s\nwant %s", got, want)
		}
		if n := len(ms.Requests()); n != 2 {
			t.Fatalf("%d model requests, want 2", n)
		}
	})

	t.Run("tool running", func(t *testing.T) {
		ms, hs := modelserver.Start(t)
		ms.Push(modelserver.Step{ToolCalls: []modelserver.ToolCall{{ID: "toolu_block", Name: "test_block"}}})
		toolLog := filepath.Join(t.TempDir(), "tool.log")
		env := modelEnv(hs.URL, modelserver.FormatAnthropic)
		env["SWITCHBOARD_TEST_TOOL_LOG"] = toolLog
		srv := startServer(t, t.TempDir(), env)
		id := srv.createSession("run the tool")
		srv.waitFor(id, "agent.tool_use", func(_ sessionState, evs []event) bool { return count(evs, "agent.tool_use") == 1 })
		waitFile(t, toolLog)
		srv.kill()
		ms.Push(modelserver.Step{Text: "the tool was interrupted"})
		srv = srv.restart()
		_, evs := srv.waitIdle(id)
		checkLog(t, evs)
		if calls := strings.Count(readFile(t, toolLog), "toolu_block"); calls != 1 {
			t.Fatalf("the tool ran %d times", calls)
		}
		var res struct {
			ToolUseID string `json:"tool_use_id"`
			Output    string `json:"output"`
			IsError   bool   `json:"is_error"`
		}
		for _, e := range evs {
			if e.Type == "agent.tool_result" {
				mustJSON(t, e.Body, &res)
			}
		}
		if res.ToolUseID != "toolu_block" || !res.IsError || !strings.Contains(res.Output, "interrupted by restart") {
			t.Fatalf("tool result %+v", res)
		}
		if count(evs, "agent.tool_result") != 1 || count(evs, "turn.started") != 1 || count(evs, "turn.completed") != 1 {
			t.Fatalf("log %v", types(evs))
		}
		reqs := ms.Requests()
		last := reqs[len(reqs)-1].Messages
		if b := last[len(last)-1].Content[0]; b.ToolUseID != "toolu_block" || !strings.Contains(b.Output, "interrupted by restart") {
			t.Fatalf("the model was not shown the interrupted result: %+v", last)
		}
	})

	t.Run("answer logged before turn.completed", func(t *testing.T) {
		ms, hs := modelserver.Start(t)
		ms.Push(modelserver.Step{Text: "the answer"})
		env := modelEnv(hs.URL, modelserver.FormatAnthropic)
		env["SWITCHBOARD_TEST_PARK_AFTER_ANSWER"] = "1"
		srv := startServer(t, t.TempDir(), env)
		id := srv.createSession("question")
		srv.waitFor(id, "the answer", func(_ sessionState, evs []event) bool { return count(evs, "agent.message") == 1 })
		srv.waitParked("after_answer")
		srv.kill()
		delete(env, "SWITCHBOARD_TEST_PARK_AFTER_ANSWER")
		srv = srv.restart()
		_, evs := srv.waitIdle(id)
		checkLog(t, evs)
		want := "user.message,session.status_changed,turn.started,agent.message,turn.completed,session.status_changed"
		if got := strings.Join(types(evs), ","); got != want {
			t.Fatalf("log %s\nwant %s", got, want)
		}
		if n := len(ms.Requests()); n != 1 {
			t.Fatalf("the model was asked %d times; the logged answer should have been kept", n)
		}
	})
}

func TestSecondServeOnSameDataDirIsRefused(t *testing.T) {
	dir := t.TempDir()
	startServer(t, dir, nil)
	cmd := execServe(t, dir)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("a second serve started:\n%s", out)
	}
	if !strings.Contains(string(out), "already serving") || !strings.Contains(string(out), dir) {
		t.Fatalf("unclear refusal:\n%s", out)
	}
}

// TestSIGTERMCheckpointsAndResumes: a graceful stop leaves the turn in the
// log and the next start finishes it.
func TestSIGTERMCheckpointsAndResumes(t *testing.T) {
	ms, hs := modelserver.Start(t)
	ms.Push(modelserver.Step{Hang: true})
	// A stop that waited for the hung model call would take the hour it
	// may wait: term fails long before.
	env := modelEnv(hs.URL, modelserver.FormatAnthropic)
	env["SWITCHBOARD_SHUTDOWN_SECONDS"] = "3600"
	srv := startServer(t, t.TempDir(), env)
	id := srv.createSession("long work")
	waitRequests(t, ms, 1)
	if err := srv.term(); err != nil {
		t.Fatalf("serve exited with %v after SIGTERM:\n%s", err, srv.out.String())
	}
	ms.Push(modelserver.Step{Text: "finished after the restart"})
	srv = srv.restart()
	_, evs := srv.waitIdle(id)
	checkLog(t, evs)
	if count(evs, "turn.started") != 1 || count(evs, "turn.completed") != 1 {
		t.Fatalf("log %v", types(evs))
	}
}

// holdAnswer holds the model's answer to its next request until release
// is called (at the latest when the test ends), so that a test acts while
// a model call is in flight, however slow the machine, instead of betting
// on a delay. It takes the server's OnRequest.
func holdAnswer(t *testing.T, ms *modelserver.Server) (release func()) {
	gate := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(gate) }) }
	t.Cleanup(release)
	var held atomic.Bool
	ms.OnRequest = func(modelserver.Request) {
		if held.CompareAndSwap(false, true) {
			<-gate
		}
	}
	return release
}

func waitRequests(t testing.TB, ms *modelserver.Server, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	if err := ms.WaitRequests(ctx, n); err != nil {
		t.Fatalf("waiting for %d model requests: %v", n, err)
	}
}

func waitFile(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(patience); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
			return
		}
	}
	t.Fatalf("%s never written", path)
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
