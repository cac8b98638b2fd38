package storetest

import (
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// testTurnsCounted: the record counts finished turns (retries are turns
// too), which limits.max_turns caps, and a turn paused at the cap waits
// like one a budget paused: inputs stay queued, a raise of max_turns
// queues it again, and the count survives a reload.
func testTurnsCounted(t *testing.T, s core.Store) {
	ctx := t.Context()
	sess := newSession(t, s, message("one"))
	for i, turn := range []string{"turn_1", "turn_2"} {
		appendEvents(t, s, sess.ID, core.AppendRequest{TakeInputs: true, TurnID: turn, Holder: "host-1",
			Events: []core.Event{statusEvent(core.StatusRunning, ""), turnStarted()}})
		appendEvents(t, s, sess.ID, core.AppendRequest{TurnID: turn,
			Events: []core.Event{turnCompleted(core.ReasonCompleted, core.Usage{}), statusEvent(core.StatusIdle, core.ReasonCompleted)}})
		if got := getSession(t, s, sess.ID); got.Turns != i+1 {
			t.Fatalf("after %s the session counts %d turns, want %d", turn, got.Turns, i+1)
		}
		if i == 0 {
			if _, err := s.QueueInputs(ctx, sess.ID, core.QueueRequest{Inputs: []core.Event{message("two")}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := s.SetSessionLimits(ctx, sess.ID, core.Limits{MaxTurns: 2}, core.ActorHuman); err != nil {
		t.Fatal(err)
	}
	if _, err := s.QueueInputs(ctx, sess.ID, core.QueueRequest{Inputs: []core.Event{message("three")}}); err != nil {
		t.Fatal(err)
	}
	appendEvents(t, s, sess.ID, core.AppendRequest{TakeInputs: true, TurnID: "turn_3", Holder: "host-1",
		Events: []core.Event{statusEvent(core.StatusRunning, ""), turnStarted()}})
	over := core.OverTurns(core.Limits{MaxTurns: 2}, 2)
	appendEvents(t, s, sess.ID, core.AppendRequest{TurnID: "turn_3", Events: []core.Event{core.NewEvent(core.TypeStatusChanged, core.LevelInternal, core.ActorSystem,
		core.StatusChangedBody{Status: core.StatusAwaitingInput, StopReason: core.ReasonMaxTurns,
			PendingAction: &core.PendingAction{Budget: over}, Turn: &core.TurnSoFar{}})}})
	got := getSession(t, s, sess.ID)
	if got.Status != core.StatusAwaitingInput || got.StopReason != core.ReasonMaxTurns || !got.BudgetPaused() || got.Turns != 2 ||
		got.PendingAction.Budget.Name != core.BudgetTurns {
		t.Fatalf("session paused at its turns cap %+v (pending %+v)", got, got.PendingAction)
	}
	if _, err := s.QueueInputs(ctx, sess.ID, core.QueueRequest{Inputs: []core.Event{message("four")}}); err != nil {
		t.Fatal(err)
	}
	if got := getSession(t, s, sess.ID); got.Status != core.StatusAwaitingInput {
		t.Fatalf("an input moved a session paused at its turns cap to %s", got.Status)
	}
	raised, err := s.SetSessionLimits(ctx, sess.ID, core.Limits{MaxTurns: 4}, core.ActorHuman)
	must(t, err)
	if raised.Status != core.StatusQueued || raised.PendingAction != nil || raised.TurnID != "turn_3" ||
		raised.Limits == nil || raised.Limits.MaxTurns != 4 || raised.Turns != 2 {
		t.Fatalf("session after raising max_turns %+v", raised)
	}
	checkCounts(t, s)
}
