package storetest

import (
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

func pauseEvent(budget core.BudgetPause, so core.TurnSoFar) core.Event {
	return core.NewEvent(core.TypeStatusChanged, core.LevelInternal, core.ActorSystem, core.StatusChangedBody{
		Status: core.StatusAwaitingInput, StopReason: core.ReasonBudgetExceeded,
		PendingAction: &core.PendingAction{Budget: &budget}, Turn: &so})
}

// testBudgetPause: a turn paused by a session budget stays open without a
// lease (a restart does not resume it), awaits input with the budget as
// its pending action, and keeps inputs queued without leaving
// awaiting_input; a raise merges the limits, logs the queueing of the
// turn, wakes it and announces it; the turn's resumption under a holder
// takes the lease again.
func testBudgetPause(t *testing.T, s core.Store) {
	ctx := t.Context()
	sess := newSession(t, s, message("go"))
	appendEvents(t, s, sess.ID, core.AppendRequest{TakeInputs: true, TurnID: "turn_p", Holder: "host-1",
		Events: []core.Event{statusEvent(core.StatusRunning, ""), turnStarted()}})
	budget := core.BudgetPause{Name: core.BudgetTokens, Limit: 500, Spent: 600}
	appendEvents(t, s, sess.ID, core.AppendRequest{TurnID: "turn_p", Events: []core.Event{pauseEvent(budget, core.TurnSoFar{Steps: 1})}})
	got := getSession(t, s, sess.ID)
	if got.Status != core.StatusAwaitingInput || got.StopReason != core.ReasonBudgetExceeded || got.TurnID != "turn_p" ||
		got.PendingAction == nil || got.PendingAction.Budget == nil || *got.PendingAction.Budget != budget || !got.BudgetPaused() {
		t.Fatalf("paused session %+v (pending %+v)", got, got.PendingAction)
	}
	open, err := s.OpenTurns(ctx)
	must(t, err)
	if _, ok := open[sess.ID]; ok {
		t.Fatalf("a paused turn is an open turn to resume: %v", open)
	}
	if _, err := s.QueueInputs(ctx, sess.ID, core.QueueRequest{Inputs: []core.Event{message("meanwhile")}}); err != nil {
		t.Fatal(err)
	}
	if got := getSession(t, s, sess.ID); got.Status != core.StatusAwaitingInput || !got.BudgetPaused() {
		t.Fatalf("an input moved a paused session to %s", got.Status)
	}
	must(t, s.ClearWake(ctx, sess.ID, 0))

	sub := s.Subscribe("test", 64)
	defer sub.Close()
	raised, err := s.SetSessionLimits(ctx, sess.ID, core.Limits{MaxSessionTokens: 5000}, core.ActorHuman)
	must(t, err)
	if raised.Status != core.StatusQueued || raised.PendingAction != nil || raised.TurnID != "turn_p" ||
		raised.Limits == nil || raised.Limits.MaxSessionTokens != 5000 {
		t.Fatalf("raised session %+v", raised)
	}
	if got := getSession(t, s, sess.ID); got.Status != core.StatusQueued || got.Limits == nil || got.Limits.MaxSessionTokens != 5000 {
		t.Fatalf("stored after the raise %+v", got)
	}
	ch := nextChange(t, sub)
	if ch.SessionID != sess.ID || ch.Status != core.StatusQueued || len(ch.Events) != 1 {
		t.Fatalf("raise change %+v", ch)
	}
	var b core.StatusChangedBody
	if err := ch.Events[0].Decode(&b); err != nil || ch.Events[0].Type != core.TypeStatusChanged || ch.Events[0].Actor != core.ActorHuman || b.Status != core.StatusQueued {
		t.Fatalf("raise logged %+v (%v)", ch.Events[0], err)
	}
	due, err := s.DueWakes(ctx, time.Now().Add(time.Minute), 0)
	must(t, err)
	if len(due) != 1 || due[0] != sess.ID {
		t.Fatalf("due after the raise %v", due)
	}
	if p, err := s.Pending(ctx, sess.ID); err != nil || len(p) != 1 {
		t.Fatalf("pending after the raise %v (%v)", p, err)
	}
	appendEvents(t, s, sess.ID, core.AppendRequest{TurnID: "turn_p", Holder: "host-2", Events: []core.Event{statusEvent(core.StatusRunning, "")}})
	open, err = s.OpenTurns(ctx)
	must(t, err)
	if open[sess.ID] != "host-2" {
		t.Fatalf("open turns after the resumption %v", open)
	}
	checkCounts(t, s)
}

// testSetLimits: limits merge field by field, a session that is not
// paused logs nothing, and bad limits or sessions are refused.
func testSetLimits(t *testing.T, s core.Store) {
	ctx := t.Context()
	agent := newAgent(t, s, "limited")
	res, err := s.CreateSession(ctx, core.NewSession{Session: core.Session{Agent: core.AgentRef{ID: agent.ID, Version: agent.Version},
		Limits: &core.Limits{MaxSessionCostUSD: 2.5}}})
	must(t, err)
	sess := res.Session
	if got := getSession(t, s, sess.ID); got.Limits == nil || *got.Limits != (core.Limits{MaxSessionCostUSD: 2.5}) {
		t.Fatalf("created with limits %+v", got.Limits)
	}
	_, err = s.SetSessionLimits(ctx, sess.ID, core.Limits{MaxSteps: 7}, core.ActorHuman)
	must(t, err)
	got, err := s.SetSessionLimits(ctx, sess.ID, core.Limits{MaxSessionTokens: 900}, core.ActorHuman)
	must(t, err)
	want := core.Limits{MaxSteps: 7, MaxSessionTokens: 900, MaxSessionCostUSD: 2.5}
	if got.Limits == nil || *got.Limits != want || got.Status != core.StatusIdle || got.LastSeq != 0 {
		t.Fatalf("after two raises %+v limits %+v", got, got.Limits)
	}
	if stored := getSession(t, s, sess.ID); stored.Limits == nil || *stored.Limits != want {
		t.Fatalf("stored limits %+v", stored.Limits)
	}
	_, err = s.SetSessionLimits(ctx, sess.ID, core.Limits{MaxSessionTokens: -1}, core.ActorHuman)
	wantErr(t, err, core.ErrInvalid)
	_, err = s.SetSessionLimits(ctx, "ses_missing", core.Limits{MaxSessionTokens: 1}, core.ActorHuman)
	wantErr(t, err, core.ErrNotFound)
	_, err = s.Archive(ctx, sess.ID)
	must(t, err)
	_, err = s.SetSessionLimits(ctx, sess.ID, core.Limits{MaxSessionTokens: 1}, core.ActorHuman)
	wantErr(t, err, core.ErrArchived)
}

// testWaitInTurn: a turn whose agent waits inside it on a person (an ACP
// permission request) shows the calls it waits on as the session's
// pending action, so that their answers are taken, and keeps its lease,
// so that a restart finds the turn; going on running clears the wait.
func testWaitInTurn(t *testing.T, s core.Store) {
	ctx := t.Context()
	sess := newSession(t, s, message("go"))
	appendEvents(t, s, sess.ID, core.AppendRequest{TakeInputs: true, TurnID: "turn_w", Holder: "host-1",
		Events: []core.Event{statusEvent(core.StatusRunning, ""), turnStarted()}})
	appendEvents(t, s, sess.ID, core.AppendRequest{TurnID: "turn_w", Events: []core.Event{
		core.NewEvent(core.TypeStatusChanged, core.LevelInternal, core.ActorSystem, core.StatusChangedBody{
			Status: core.StatusAwaitingInput, StopReason: core.ReasonRequiresAction, PendingAction: &core.PendingAction{ToolUseIDs: []string{"call_2"}}}),
	}})
	got := getSession(t, s, sess.ID)
	if got.Status != core.StatusAwaitingInput || got.TurnID != "turn_w" || got.PendingAction == nil ||
		len(got.PendingAction.ToolUseIDs) != 1 || got.PendingAction.ToolUseIDs[0] != "call_2" || got.BudgetPaused() {
		t.Fatalf("waiting session %+v (pending %+v)", got, got.PendingAction)
	}
	open, err := s.OpenTurns(ctx)
	must(t, err)
	if open[sess.ID] != "host-1" {
		t.Fatalf("a turn that waits in itself keeps its lease: open turns %v", open)
	}
	_, err = s.QueueInputs(ctx, sess.ID, core.QueueRequest{Inputs: []core.Event{toolAnswer(core.TypeUserToolConfirmation, "call_9")}, AnswersPending: true})
	wantErr(t, err, core.ErrConflict)
	_, err = s.QueueInputs(ctx, sess.ID, core.QueueRequest{Inputs: []core.Event{toolAnswer(core.TypeUserToolConfirmation, "call_2")}, AnswersPending: true})
	must(t, err)
	appendEvents(t, s, sess.ID, core.AppendRequest{TakeInputs: true, TurnID: "turn_w", Events: []core.Event{statusEvent(core.StatusRunning, "")}})
	got = getSession(t, s, sess.ID)
	if got.Status != core.StatusRunning || got.PendingAction != nil || got.TurnID != "turn_w" {
		t.Fatalf("after the answer %+v (pending %+v)", got, got.PendingAction)
	}
	checkCounts(t, s)
}
