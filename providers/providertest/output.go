package providertest

import (
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// testAnswerOnce: a mention makes one session, and the agent's answer is
// posted once. With crash, the first process dies at that failpoint of
// the post (before it, or after it but before its position is saved) and
// a second process over the same store finishes the output: the answer
// is still there once, so the second one looked it up on the platform.
func testAnswerOnce(crash string) func(t *testing.T, w *world) {
	return func(t *testing.T, w *world) {
		const text = "The widgets are fixed: the gear was loose."
		s := w.mentioned()
		var parked <-chan struct{}
		if crash != "" {
			parked = w.parkAt(crash)
		}
		tn := w.turn(s.ID)
		tn.step(answer(text))
		tn.end(core.ReasonCompleted)
		if crash != "" {
			select {
			case <-parked:
			case <-time.After(patience):
				t.Fatalf("the sink never reached %s", crash)
			}
			// The first process is abandoned there, as by a kill; its
			// claim on the session's output expires, and a new process
			// starts over the same store.
			w.skew.Add(int64(2 * claimTTL))
			w.start()
		}
		w.settled(s.ID)
		if got := w.postsHolding(text); len(got) != 1 {
			t.Fatalf("the answer is posted %d times, want once: %q", len(got), w.p.Posts(t))
		}
		if n := len(w.sessions()); n != 1 {
			t.Fatalf("%d sessions for one mention", n)
		}
	}
}

// testConfirmation: a tool call the turn waits on is shown, and a
// person's answer by the platform's means (a button, a reply) is queued
// as the call's confirmation.
func testConfirmation(result string) func(t *testing.T, w *world) {
	return func(t *testing.T, w *world) {
		const tool, call = "widgetdeploy", "toolu_conformance"
		s := w.mentioned()
		tn := w.turn(s.ID)
		tn.step(toolUse(call, tool, map[string]string{"env": "staging"}))
		tn.end(core.ReasonRequiresAction, call)
		w.settled(s.ID)
		if !w.showing(tool) {
			t.Fatalf("the call waiting for a person is not shown: %q, %q", w.p.Posts(t), w.p.Status(t))
		}
		w.deliver(w.p.Answer(t, result), "the answer")
		var b core.ToolConfirmationBody
		if err := w.queued(s.ID, core.TypeUserToolConfirmation).Decode(&b); err != nil || b.ToolUseID != call || b.Result != result {
			t.Fatalf("confirmation %+v (%v), want %s of %s", b, err, result, call)
		}
	}
}

// testPlan: the agent's plan is shown while the turn runs (at least the
// step at work).
func testPlan(t *testing.T, w *world) {
	if lacking(t, w.p, LivePlan) {
		return
	}
	s := w.mentioned()
	tn := w.turn(s.ID)
	tn.step(core.NewEvent(core.TypeAgentPlan, core.LevelProgress, core.ActorAgent, core.PlanBody{Entries: []core.PlanEntry{
		{Content: "Survey the widget factory", Status: "in_progress", Priority: "high"},
		{Content: "Tighten the loose gear", Status: "pending", Priority: "medium"},
	}}))
	w.waitShown("the plan", "Survey the widget factory")
}

// testBudgetPause: a turn paused by a session budget (the harness's note
// and the pause) is shown, its note, which says how to raise the budget,
// posted once.
func testBudgetPause(t *testing.T, w *world) {
	const note = "⏸ I paused: this session has used its budget of 200000 tokens. Reply `budget 400000 tokens` to go on."
	s := w.mentioned()
	tn := w.turn(s.ID)
	tn.step(core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorSystem, core.MessageBody{Text: note, Kind: core.MessageKindBudget}),
		core.NewEvent(core.TypeStatusChanged, core.LevelInternal, core.ActorSystem, core.StatusChangedBody{Status: core.StatusAwaitingInput,
			StopReason: core.ReasonBudgetExceeded, PendingAction: &core.PendingAction{ToolUseIDs: []string{},
				Budget: &core.BudgetPause{Name: core.BudgetTokens, Limit: 200_000, Spent: 201_000}}}))
	w.waitShown("the pause", note)
	w.caughtUp(s.ID)
	if got := w.postsHolding(note); len(got) != 1 {
		t.Fatalf("the pause's note is posted %d times, want once: %q", len(got), w.p.Posts(t))
	}
}

// testMaxTurnsPause: a turn paused at the session's max_turns (its input
// taken, no model call) is shown like a budget's pause, its note, which
// names max_turns and how to raise it, posted once.
func testMaxTurnsPause(t *testing.T, w *world) {
	const note = "⏸ I paused: this session has run its limit of 2 turns (max_turns). Your message is kept: raise the limit and I answer it. " +
		"A budget approver can reply `budget 4 turns` here."
	s := w.mentioned()
	tn := w.turn(s.ID)
	tn.step(core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorSystem, core.MessageBody{Text: note, Kind: core.MessageKindBudget, Budget: core.BudgetTurns}),
		core.NewEvent(core.TypeStatusChanged, core.LevelInternal, core.ActorSystem, core.StatusChangedBody{Status: core.StatusAwaitingInput,
			StopReason: core.ReasonMaxTurns, PendingAction: &core.PendingAction{ToolUseIDs: []string{},
				Budget: core.OverTurns(core.Limits{MaxTurns: 2}, 2)}}))
	w.waitShown("the pause at max_turns", note)
	w.caughtUp(s.ID)
	if got := w.postsHolding(note); len(got) != 1 {
		t.Fatalf("the max_turns note is posted %d times, want once: %q", len(got), w.p.Posts(t))
	}
}
