package harness_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/toolset"
	"github.com/switchboardhq/switchboard/fixtures/fakemodel"
)

// budgetEnv is a session whose first model call runs the tool "grep" and
// uses 600 tokens, under a session budget of 500 tokens; the second
// answers.
func budgetEnv(t *testing.T) (*env, *echoTool) {
	t.Helper()
	e := newEnv(t,
		fakemodel.Step{Calls: []core.Block{fakemodel.ToolUse("c1", "grep", `{}`)}, Usage: core.Usage{InputTokens: 500, OutputTokens: 100}},
		fakemodel.Step{Text: "found it", Usage: core.Usage{InputTokens: 700, OutputTokens: 20}},
	)
	grep := &echoTool{name: "grep", output: "main.go:12"}
	e.cycle.Tools = registry(t, func(r *toolset.Registry) { _ = r.Add(grep, core.PolicyAllow) })
	e.cycle.Limits.MaxSessionTokens = 500
	e.say("find the bug")
	return e, grep
}

// TestBudgetPausesAndResumes: a session that reaches its token budget
// pauses before its next model call, the tool calls of the call that
// overshot having run; it waits (inputs queue) until the budget is raised,
// then the same turn carries on from its last step, and its
// turn.completed counts the whole turn once.
func TestBudgetPausesAndResumes(t *testing.T) {
	e, grep := budgetEnv(t)
	out := e.run(t, context.Background())
	if !out.Paused || out.Turns != 0 {
		t.Fatalf("outcome %+v, want paused with no turn completed", out)
	}
	wantStatus(t, e.log, core.StatusAwaitingInput, core.ReasonBudgetExceeded)
	s, _ := e.log.GetSession(context.Background(), "")
	if s.TurnID == "" || s.PendingAction == nil || s.PendingAction.Budget == nil ||
		*s.PendingAction.Budget != (core.BudgetPause{Name: core.BudgetTokens, Limit: 500, Spent: 600}) {
		t.Fatalf("paused session %+v pending %+v", s, s.PendingAction)
	}
	if e.log.last(core.TypeTurnCompleted).Type != "" {
		t.Fatal("a pause logged turn.completed")
	}
	if grep.calls.Load() != 1 {
		t.Fatalf("the overshooting call's tool ran %d times before the pause, want 1", grep.calls.Load())
	}
	var note core.MessageBody
	if err := e.log.last(core.TypeAgentMessage).Decode(&note); err != nil {
		t.Fatal(err)
	}
	if note.Kind != core.MessageKindBudget || !strings.Contains(note.Text, "600 tokens of its 500 tokens budget") {
		t.Fatalf("pause note %+v", note)
	}

	// An input while paused waits; the turn does not run.
	e.say("also check the tests")
	if out := e.run(t, context.Background()); !out.Paused {
		t.Fatalf("outcome %+v while paused", out)
	}
	if n := len(e.model.Requests()); n != 1 {
		t.Fatalf("%d model requests while paused, want 1", n)
	}
	if p, _ := e.log.Pending(context.Background(), ""); len(p) != 1 {
		t.Fatalf("%d inputs pending while paused, want 1", len(p))
	}
	wantStatus(t, e.log, core.StatusAwaitingInput, core.ReasonBudgetExceeded)

	// Raised: the same turn resumes from its last step.
	e.cycle.Limits.MaxSessionTokens = 10_000
	e.log.raise()
	if out := e.run(t, context.Background()); out.Paused || out.Turns != 1 || out.Reason != core.ReasonCompleted {
		t.Fatalf("outcome %+v after the raise", out)
	}
	if grep.calls.Load() != 1 {
		t.Fatalf("the tool ran %d times, want once: the resumed turn repeated a step", grep.calls.Load())
	}
	reqs := e.model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	var uses, results int
	var texts []string
	for _, m := range reqs[1].Messages {
		for _, b := range m.Content {
			switch b.Type {
			case core.BlockToolUse:
				uses++
			case core.BlockToolResult:
				results++
			case core.BlockText:
				texts = append(texts, b.Text)
			}
		}
	}
	if uses != 1 || results != 1 || !strings.Contains(strings.Join(texts, "|"), "also check the tests") ||
		strings.Contains(strings.Join(texts, "|"), "I paused") {
		t.Fatalf("resumed request: %d tool uses, %d results, texts %q", uses, results, texts)
	}
	var tc core.TurnCompletedBody
	done := e.log.last(core.TypeTurnCompleted)
	if err := done.Decode(&tc); err != nil {
		t.Fatal(err)
	}
	if done.TurnID != s.TurnID || tc.Usage.Total() != 1320 {
		t.Fatalf("turn.completed of %s with %d tokens, want the paused turn %s with 1320", done.TurnID, tc.Usage.Total(), s.TurnID)
	}
	started := 0
	for _, typ := range e.log.types() {
		if typ == core.TypeTurnStarted {
			started++
		}
	}
	if started != 1 {
		t.Fatalf("%d turns started, want the one that paused", started)
	}
	wantStatus(t, e.log, core.StatusIdle, core.ReasonCompleted)
}

// TestBudgetRaisedTooLittle: a raise that still does not fit pauses the
// turn again, without a model call.
func TestBudgetRaisedTooLittle(t *testing.T) {
	e, _ := budgetEnv(t)
	e.run(t, context.Background())
	e.cycle.Limits.MaxSessionTokens = 550
	e.log.raise()
	if out := e.run(t, context.Background()); !out.Paused {
		t.Fatalf("outcome %+v", out)
	}
	if n := len(e.model.Requests()); n != 1 {
		t.Fatalf("%d model requests, want 1", n)
	}
	s, _ := e.log.GetSession(context.Background(), "")
	if s.PendingAction == nil || s.PendingAction.Budget == nil || s.PendingAction.Budget.Limit != 550 {
		t.Fatalf("pending %+v", s.PendingAction)
	}
}

// TestBudgetPausedInterrupt: user.interrupt ends a paused turn canceled,
// counting what it used.
func TestBudgetPausedInterrupt(t *testing.T) {
	e, _ := budgetEnv(t)
	e.run(t, context.Background())
	e.log.queue(core.TypeUserInterrupt, struct{}{})
	if out := e.run(t, context.Background()); out.Reason != core.ReasonCanceled {
		t.Fatalf("outcome %+v", out)
	}
	wantStatus(t, e.log, core.StatusIdle, core.ReasonCanceled)
	var tc core.TurnCompletedBody
	if err := e.log.last(core.TypeTurnCompleted).Decode(&tc); err != nil || tc.Usage.Total() != 600 {
		t.Fatalf("turn.completed %+v (%v)", tc, err)
	}
	if n := len(e.model.Requests()); n != 1 {
		t.Fatalf("%d model requests, want 1", n)
	}
}

// TestCostBudget: a cost budget counts the session's finished turns and
// the open one at the table's prices; an unpriced model never reaches it.
func TestCostBudget(t *testing.T) {
	for _, tt := range []struct {
		name   string
		prices perToken
		paused bool
	}{
		{"priced", perToken{"anthropic/test": true}, true},
		{"unpriced", perToken{}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e, _ := budgetEnv(t)
			e.h.Prices = tt.prices
			e.cycle.Limits.MaxSessionTokens = 0
			e.cycle.Limits.MaxSessionCostUSD = 0.0005 // 500 tokens at a micro-dollar
			out := e.run(t, context.Background())
			if out.Paused != tt.paused {
				t.Fatalf("outcome %+v, want paused %v", out, tt.paused)
			}
			if !tt.paused {
				return
			}
			s, _ := e.log.GetSession(context.Background(), "")
			if b := s.PendingAction.Budget; b.Name != core.BudgetCostUSD || b.Limit != 0.0005 || b.Spent != 0.0006 {
				t.Fatalf("budget %+v", b)
			}
		})
	}
}

// TestBudgetPauseKeepsRunningTime: a resumed turn's time limit counts
// only the time it ran before the pause, not the time it was paused: a
// turn that paused with its time used up ends deadline_exceeded at once,
// one paused long after it started runs on.
func TestBudgetPauseKeepsRunningTime(t *testing.T) {
	for _, tt := range []struct {
		name     string
		activeMS int64
		want     core.Reason
	}{
		{"time used up before the pause", 30_000, core.ReasonDeadlineExceeded},
		{"paused for an hour", 10, core.ReasonCompleted},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e, _ := budgetEnv(t)
			e.run(t, context.Background())
			e.log.mu.Lock()
			for i, ev := range e.log.events {
				// The turn started an hour ago; it ran for activeMS.
				ev.CreatedAt = core.Time{Time: ev.CreatedAt.Add(-time.Hour)}
				var b core.StatusChangedBody
				if ev.Type == core.TypeStatusChanged && ev.Decode(&b) == nil && b.Turn != nil {
					b.Turn.ActiveMS = tt.activeMS
					ev.Body, _ = json.Marshal(b)
				}
				e.log.events[i] = ev
			}
			e.log.mu.Unlock()
			e.cycle.Limits.MaxSessionTokens = 10_000
			e.log.raise()
			if out := e.run(t, context.Background()); out.Reason != tt.want {
				t.Fatalf("resumed turn ended %s, want %s", out.Reason, tt.want)
			}
			if want := map[core.Reason]int{core.ReasonDeadlineExceeded: 1, core.ReasonCompleted: 2}[tt.want]; len(e.model.Requests()) != want {
				t.Fatalf("%d model requests, want %d", len(e.model.Requests()), want)
			}
		})
	}
}
