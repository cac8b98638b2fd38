package harness_test

import (
	"context"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakemodel"
)

// TestMaxTurnsPausesTheNextInput: under max_turns 2 the third message
// opens a turn that pauses with reason max_turns before any model call,
// the message taken into it; once the cap is raised the same turn answers
// it.
func TestMaxTurnsPausesTheNextInput(t *testing.T) {
	e := newEnv(t, fakemodel.Step{Text: "one"}, fakemodel.Step{Text: "two"}, fakemodel.Step{Text: "three"})
	e.cycle.Limits.MaxTurns = 2
	for _, msg := range []string{"first", "second"} {
		e.say(msg)
		if out := e.run(t, context.Background()); out.Paused || out.Turns != 1 || out.Reason != core.ReasonCompleted {
			t.Fatalf("outcome %+v for %q", out, msg)
		}
	}
	e.say("third")
	out := e.run(t, context.Background())
	if !out.Paused || out.Turns != 0 {
		t.Fatalf("outcome %+v for the third message, want paused", out)
	}
	wantStatus(t, e.log, core.StatusAwaitingInput, core.ReasonMaxTurns)
	s, _ := e.log.GetSession(context.Background(), "")
	if s.TurnID == "" || s.PendingAction == nil || s.PendingAction.Budget == nil ||
		*s.PendingAction.Budget != (core.BudgetPause{Name: core.BudgetTurns, Limit: 2, Spent: 2}) {
		t.Fatalf("paused session %+v pending %+v", s, s.PendingAction)
	}
	if n := len(e.model.Requests()); n != 2 {
		t.Fatalf("%d model requests at the cap, want 2", n)
	}
	if p, _ := e.log.Pending(context.Background(), ""); len(p) != 0 {
		t.Fatalf("%d inputs pending: the third message was not taken into the paused turn", len(p))
	}
	var note core.MessageBody
	if err := e.log.last(core.TypeAgentMessage).Decode(&note); err != nil {
		t.Fatal(err)
	}
	if note.Kind != core.MessageKindBudget || !strings.Contains(note.Text, "limit of 2 turns (max_turns)") || !strings.Contains(note.Text, "`budget 4 turns`") {
		t.Fatalf("pause note %+v", note)
	}

	e.cycle.Limits.MaxTurns = 3
	e.log.raise()
	if out := e.run(t, context.Background()); out.Paused || out.Turns != 1 || out.Reason != core.ReasonCompleted {
		t.Fatalf("outcome %+v after the raise", out)
	}
	reqs := e.model.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests after the raise, want 3", len(reqs))
	}
	last := reqs[2].Messages[len(reqs[2].Messages)-1]
	if len(last.Content) == 0 || last.Content[len(last.Content)-1].Text != "third" {
		t.Fatalf("the resumed turn's request ends with %+v, want the third message", last)
	}
	if done := e.log.last(core.TypeTurnCompleted); done.TurnID != s.TurnID {
		t.Fatalf("turn.completed of %s, want the paused turn %s", done.TurnID, s.TurnID)
	}
}
