package storetest

import (
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// testFork: a fork copies the log up to the end of a turn, with new ids
// and the state that turn left (a pending call stays pending), usage
// from zero, no origin, and a log that goes on from there; a seq inside
// a turn, past the log, or a session without a completed turn is
// refused.
func testFork(t *testing.T, s core.Store) {
	ctx := t.Context()
	res, err := s.CreateSession(ctx, core.NewSession{
		Session:     core.Session{Agent: core.AgentRef{ID: "agt_test", Version: 3}, Origin: &core.Origin{Provider: "chat", Key: "chat:T:C:fork"}, Tenant: "chat:T", Metadata: map[string]string{"k": "v"}},
		ExternalKey: "chat:T:C:fork", Inputs: []core.Event{message("first question")},
	})
	must(t, err)
	src := res.Session
	_, err = s.ForkSession(ctx, core.Fork{From: src.ID})
	wantErr(t, err, core.ErrConflict)
	turn := func(id string, r core.Reason, pending ...string) []core.Event {
		appendEvents(t, s, src.ID, core.AppendRequest{TakeInputs: true, TurnID: id, Holder: "h", Events: []core.Event{statusEvent(core.StatusRunning, ""), turnStarted()}})
		appendEvents(t, s, src.ID, core.AppendRequest{TurnID: id, Events: []core.Event{agentMessage("answer of " + id)}})
		return appendEvents(t, s, src.ID, core.AppendRequest{TurnID: id, Events: []core.Event{
			turnCompleted(r, core.Usage{InputTokens: 100, OutputTokens: 10}, pending...), statusEvent(core.StatusAfter(r), r)}})
	}
	first := turn("turn_1", core.ReasonCompleted)
	_, err = s.QueueInputs(ctx, src.ID, core.QueueRequest{Inputs: []core.Event{message("second question")}})
	must(t, err)
	second := turn("turn_2", core.ReasonRequiresAction, "tu_1")
	_, err = s.QueueInputs(ctx, src.ID, core.QueueRequest{Inputs: []core.Event{message("third question")}})
	must(t, err)
	appendEvents(t, s, src.ID, core.AppendRequest{TakeInputs: true, TurnID: "turn_3", Holder: "h", Events: []core.Event{statusEvent(core.StatusRunning, ""), turnStarted()}})
	srcEvents, err := s.Events(ctx, src.ID, 0, 0)
	must(t, err)

	for _, tt := range []struct {
		name    string
		at      uint64
		seq     uint64
		status  core.Status
		pending []string
		result  string
	}{
		{"the last completed turn", 0, second[1].Seq, core.StatusAwaitingInput, []string{"tu_1"}, "answer of turn_2"},
		{"a turn.completed", first[0].Seq, first[0].Seq, core.StatusIdle, nil, "answer of turn_1"},
		{"its status change", first[1].Seq, first[1].Seq, core.StatusIdle, nil, "answer of turn_1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, err := s.ForkSession(ctx, core.Fork{From: src.ID, AtSeq: tt.at, Session: core.Session{ClientTokenHash: "hash-of-fork"}})
			must(t, err)
			got := getSession(t, s, f.ID)
			sameJSON(t, "returned fork", f, got)
			if got.ID == src.ID || got.Agent != src.Agent || got.Origin != nil || got.Tenant != "chat:T" || got.Metadata["k"] != "v" ||
				got.ClientTokenHash != "hash-of-fork" || got.ForkedFrom == nil || *got.ForkedFrom != (core.ForkRef{Session: src.ID, Seq: tt.seq}) ||
				got.LastSeq != tt.seq || got.Status != tt.status || got.TurnID != "" || got.Usage != (core.Usage{}) || got.CostUSD != nil ||
				got.Result == nil || got.Result.Text != tt.result {
				t.Fatalf("fork %+v", got)
			}
			if tt.pending == nil && got.PendingAction != nil || tt.pending != nil && (got.PendingAction == nil || jsonOf(t, got.PendingAction.ToolUseIDs) != jsonOf(t, tt.pending)) {
				t.Fatalf("fork's pending action %+v", got.PendingAction)
			}
			evs, err := s.Events(ctx, f.ID, 0, 0)
			must(t, err)
			if uint64(len(evs)) != tt.seq {
				t.Fatalf("%d events, want %d", len(evs), tt.seq)
			}
			for i, e := range evs {
				want := srcEvents[i]
				if e.ID == want.ID || e.SessionID != f.ID || e.Seq != want.Seq || e.Type != want.Type || e.TurnID != want.TurnID || string(e.Body) != string(want.Body) {
					t.Fatalf("event %d: %+v, source %+v", i, e, want)
				}
			}
			out := appendEvents(t, s, f.ID, core.AppendRequest{Events: []core.Event{agentMessage("more")}})
			if out[0].Seq != tt.seq+1 {
				t.Fatalf("an append to the fork got seq %d", out[0].Seq)
			}
			if byKey, err := s.SessionByKey(ctx, "chat:T:C:fork"); err != nil || byKey.ID != src.ID {
				t.Fatalf("the origin key moved: %v %v", byKey, err)
			}
		})
	}
	for _, at := range []uint64{first[0].Seq - 1, srcEvents[len(srcEvents)-1].Seq, 999} {
		_, err = s.ForkSession(ctx, core.Fork{From: src.ID, AtSeq: at})
		wantErr(t, err, core.ErrInvalid)
	}
	_, err = s.ForkSession(ctx, core.Fork{From: "ses_missing"})
	wantErr(t, err, core.ErrNotFound)
	checkCounts(t, s)
}
