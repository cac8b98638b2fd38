package harness_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/toolset"
	"github.com/switchboardhq/switchboard/fixtures/fakemodel"
	"github.com/switchboardhq/switchboard/fixtures/panictest"
	"github.com/switchboardhq/switchboard/sessions/engine/harness"
)

// panicTool panics when called.
type panicTool struct{}

func (panicTool) Def() core.ToolDef {
	return core.ToolDef{Name: "explode", Description: "panics", InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func (panicTool) Call(context.Context, core.ToolCall) (core.ToolResult, error) {
	var m map[string]int
	//lint:ignore SA5000 a nil map is the kind of bug a panic is: this one is on purpose
	m["boom"]++
	return core.ToolResult{}, nil
}

// wantInternalError checks the turn's end after a panic: a retryable
// session.error "internal error" and the turn failed.
func wantInternalError(t *testing.T, l *memLog) {
	t.Helper()
	wantStatus(t, l, core.StatusFailed, core.ReasonError)
	var eb core.ErrorBody
	if err := l.last(core.TypeError).Decode(&eb); err != nil || eb.Message != "internal error" || !eb.Retryable {
		t.Fatalf("session.error %+v (%v)", eb, err)
	}
}

// resultOf is the logged result of call id.
func resultOf(t *testing.T, l *memLog, id string) core.ToolResultBody {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.events {
		var b core.ToolResultBody
		if e.Type == core.TypeAgentToolResult && e.Decode(&b) == nil && b.ToolUseID == id {
			return b
		}
	}
	t.Fatalf("no result for %s", id)
	return core.ToolResultBody{}
}

// TestToolPanicEndsTheTurn: a tool that panics, run at once or once a
// person allowed it, ends its turn with a retryable internal error; the
// calls of the step not run yet are closed without running, and a
// user.retry runs the turn again with the model told why.
func TestToolPanicEndsTheTurn(t *testing.T) {
	for _, tt := range []struct {
		name   string
		policy core.Policy
		answer func(l *memLog) // the person's answer to an ask-first call
	}{
		{"run at once", core.PolicyAllow, nil},
		{"run once allowed", core.PolicyAsk, func(l *memLog) {
			l.queue(core.TypeUserToolConfirmation, core.ToolConfirmationBody{ToolUseID: "tu_p", Result: "allow"})
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			echo := &echoTool{name: "echo", output: "echoed"}
			e := newEnv(t,
				fakemodel.Step{Calls: []core.Block{fakemodel.ToolUse("tu_p", "explode", `{}`), fakemodel.ToolUse("tu_e", "echo", `{}`)}},
				fakemodel.Step{Text: "done this time"},
			)
			logged := panictest.New()
			e.cycle.Logger = logged.Logger()
			e.cycle.Tools = registry(t, func(r *toolset.Registry) {
				_ = r.Add(panicTool{}, tt.policy)
				_ = r.Add(echo, core.PolicyAllow)
			})
			e.say("go")
			out := e.run(t, context.Background())
			if tt.answer != nil {
				if out.Reason != core.ReasonRequiresAction {
					t.Fatalf("before the answer: %s", out.Reason)
				}
				tt.answer(e.log)
				out = e.run(t, context.Background())
			}
			if out.Reason != core.ReasonError {
				t.Fatalf("reason %s, log %v", out.Reason, e.log.types())
			}
			wantInternalError(t, e.log)
			logged.WantOne(t, "panicTool.Call", "session_id=ses_test", "tool=explode", "tool_use_id=tu_p")
			if r := resultOf(t, e.log, "tu_p"); !r.IsError || !strings.Contains(r.Output, "internal error") {
				t.Fatalf("the panicked call's result %+v", r)
			}
			if tt.answer == nil {
				// The allowed step's other call ran before the person
				// answered; here it comes after the panic and never runs.
				if r := resultOf(t, e.log, "tu_e"); echo.calls.Load() != 0 || !r.IsError || !strings.Contains(r.Output, "not finished") {
					t.Fatalf("the call after the panic ran %d times, result %+v", echo.calls.Load(), r)
				}
			}

			e.log.queue(core.TypeUserRetry, core.RetryBody{TurnID: "turn_x"})
			if out := e.run(t, context.Background()); out.Reason != core.ReasonCompleted {
				t.Fatalf("after the retry: %s", out.Reason)
			}
			reqs := e.model.Requests()
			last := reqs[len(reqs)-1].Messages
			note := last[len(last)-1].Content[len(last[len(last)-1].Content)-1].Text
			if !strings.Contains(note, "failed with this error: internal error") {
				t.Fatalf("the retried turn's note: %q", note)
			}
		})
	}
}

// TestEndPanicked: after a panic stopped a cycle, the runtime ends the
// open turn (its open calls closed), or a turn that takes the inputs
// that were pending; with nothing open or pending, or an archived
// session, nothing is logged.
func TestEndPanicked(t *testing.T) {
	for _, tt := range []struct {
		name    string
		prepare func(t *testing.T, e *env)
		ended   bool
	}{
		{"open turn with a call running", func(t *testing.T, e *env) {
			e.say("go")
			turn, _, err := harness.OpenTurn(context.Background(), e.cycle)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = e.log.Append(context.Background(), "", core.AppendRequest{TurnID: turn, Events: []core.Event{
				core.NewEvent(core.TypeAgentToolUse, core.LevelProgress, core.ActorAgent, core.ToolUseBody{ToolUseID: "tu_r", Name: "echo", Input: json.RawMessage(`{}`)}),
			}})
		}, true},
		{"inputs pending", func(t *testing.T, e *env) { e.say("go") }, true},
		{"interrupt then input pending", func(t *testing.T, e *env) {
			e.log.queue(core.TypeUserInterrupt, struct{}{})
			e.say("go")
		}, true},
		{"nothing pending", func(t *testing.T, e *env) {}, false},
		{"archived", func(t *testing.T, e *env) {
			e.say("go")
			e.log.mu.Lock()
			e.log.sess.Status = core.StatusArchived
			e.log.mu.Unlock()
		}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			tt.prepare(t, e)
			before := len(e.log.types())
			ended, err := harness.EndPanicked(context.Background(), e.cycle)
			if err != nil || ended != tt.ended {
				t.Fatalf("ended %v, %v; want %v", ended, err, tt.ended)
			}
			if !tt.ended {
				if n := len(e.log.types()); n != before {
					t.Fatalf("logged %d events with nothing to end: %v", n-before, e.log.types())
				}
				return
			}
			wantInternalError(t, e.log)
			if e.log.last(core.TypeUserMessage).TurnID == "" {
				t.Fatalf("the input was not taken into the ended turn: %v", e.log.types())
			}
			if s, _ := e.log.GetSession(context.Background(), ""); s.TurnID != "" {
				t.Fatalf("turn %s still open", s.TurnID)
			}
			if tt.name == "open turn with a call running" {
				if r := resultOf(t, e.log, "tu_r"); !r.IsError || !strings.Contains(r.Output, "effects, if it ran, are unknown") {
					t.Fatalf("the open call's result %+v", r)
				}
			}
		})
	}
}
