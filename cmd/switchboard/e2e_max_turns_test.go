package main_test

import (
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/fixtures/fakeslack"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// TestMaxTurnsInSlack: under limits.max_turns 2 the third message of a
// Slack thread yields max_turns before any model call, says so in the
// thread, and waits in awaiting_input with the message kept; an
// approver's `budget 3 turns` raises the cap and the third message is
// answered by the paused turn.
func TestMaxTurnsInSlack(t *testing.T) {
	w := startSlack(t, fakeslack.Team{ID: "T0TRN", Name: "Turns"}, nil)
	if code, raw := w.srv.do("POST", "/v1/agents/default", `{"limits":{"max_turns":2}}`); code != 200 {
		t.Fatalf("cap the default agent: %d %s", code, raw)
	}
	w.srv.budgetApprovers("slack", "U0BOSS")

	w.ms.Push(modelserver.Step{Text: "First answer."})
	m := w.fake.Human(w.team.ID, "C0TRN", "U0ALICE", "<@"+w.team.BotUserID+"> one", "")
	if code, _ := w.event(fakeslack.Mention(m)); code != 200 {
		t.Fatalf("mention: %d", code)
	}
	id := w.session(w.team.ID, "C0TRN", m.TS)
	w.waitReply(w.team, "C0TRN", m.TS, "First answer.")
	w.srv.waitFor(id, "the first turn", func(st sessionState, evs []event) bool {
		return st.Status == "idle" && count(evs, "turn.completed") == 1
	})

	w.ms.Push(modelserver.Step{Text: "Second answer."})
	two := w.fake.Human(w.team.ID, "C0TRN", "U0ALICE", "<@"+w.team.BotUserID+"> two", m.TS)
	if code, _ := w.event(fakeslack.Mention(two)); code != 200 {
		t.Fatalf("second mention: %d", code)
	}
	w.waitReply(w.team, "C0TRN", m.TS, "Second answer.")
	w.srv.waitFor(id, "the second turn", func(st sessionState, evs []event) bool {
		return st.Status == "idle" && count(evs, "turn.completed") == 2
	})

	n := len(w.ms.Requests())
	three := w.fake.Human(w.team.ID, "C0TRN", "U0ALICE", "<@"+w.team.BotUserID+"> three", m.TS)
	if code, _ := w.event(fakeslack.Mention(three)); code != 200 {
		t.Fatalf("third mention: %d", code)
	}
	w.waitReply(w.team, "C0TRN", m.TS, "I paused: this session has run its limit of 2 turns (max_turns)")
	_, evs := w.srv.waitFor(id, "the pause", func(st sessionState, _ []event) bool { return st.Status == "awaiting_input" })
	p := w.paused(id)
	if p.StopReason != "max_turns" || p.PendingAction == nil || p.PendingAction.Budget == nil ||
		p.PendingAction.Budget.Name != "max_turns" || p.PendingAction.Budget.Limit != 2 || p.PendingAction.Budget.Spent != 2 {
		t.Fatalf("paused session %+v", p)
	}
	if count(evs, "turn.completed") != 2 || len(w.ms.Requests()) != n {
		t.Fatalf("the third message ran at the cap: log %v, %d model requests", types(evs), len(w.ms.Requests())-n)
	}

	w.ms.Push(modelserver.Step{Text: "Third answer."})
	boss := w.fake.Human(w.team.ID, "C0TRN", "U0BOSS", "<@"+w.team.BotUserID+"> budget 3 turns", m.TS)
	if code, _ := w.event(fakeslack.Mention(boss)); code != 200 {
		t.Fatalf("approver's budget mention: %d", code)
	}
	w.waitReply(w.team, "C0TRN", m.TS, "This session's budget is now 3 turns. Continuing where I paused.")
	w.waitReply(w.team, "C0TRN", m.TS, "Third answer.")
	w.srv.waitFor(id, "the third turn", func(st sessionState, evs []event) bool {
		return st.Status == "idle" && count(evs, "turn.completed") == 3
	})
	reqs := w.ms.Requests()[n:]
	if len(reqs) != 1 {
		t.Fatalf("%d model requests after the raise, want 1", len(reqs))
	}
	last := reqs[0].Messages[len(reqs[0].Messages)-1]
	if len(last.Content) == 0 || !strings.Contains(last.Content[len(last.Content)-1].Text, "three") {
		t.Fatalf("the resumed request ends with %+v, want the third message", last)
	}
}
