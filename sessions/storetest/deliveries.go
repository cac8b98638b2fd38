package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

func testDeliveriesFilters(t *testing.T, s DeliveryStore) {
	ctx := t.Context()
	a, b := sessionOf(t, s, "agt_a"), sessionOf(t, s, "agt_b")
	say(t, s, a.ID, "before any destination")
	user := createDest(t, s, "", core.EventFilter{Level: core.LevelUser})
	progress := createDest(t, s, a.ID, core.EventFilter{Level: core.LevelProgress})
	typed := createDest(t, s, "", core.EventFilter{Types: []string{core.TypeTurnStarted}})
	agentB := createDest(t, s, "", core.EventFilter{AgentID: "agt_b"})
	tool := core.NewEvent(core.TypeAgentToolUse, core.LevelProgress, core.ActorAgent, core.ToolUseBody{ToolUseID: "t1", Name: "bash", Input: []byte(`{}`)})
	appendEvents(t, s, a.ID, core.AppendRequest{Events: []core.Event{turnStarted(), tool, agentMessage("answer")}})
	appendEvents(t, s, b.ID, core.AppendRequest{Events: []core.Event{agentMessage("other")}})
	want := map[string][]string{
		user.ID:     {a.ID + ":" + core.TypeAgentMessage, b.ID + ":" + core.TypeAgentMessage},
		progress.ID: {a.ID + ":" + core.TypeAgentToolUse, a.ID + ":" + core.TypeAgentMessage},
		typed.ID:    {a.ID + ":" + core.TypeTurnStarted},
		agentB.ID:   {b.ID + ":" + core.TypeAgentMessage},
	}
	for dest, w := range want {
		var got []string
		for _, d := range allDeliveries(t, s, core.DeliveryQuery{DestinationID: dest}) {
			got = append(got, d.SessionID+":"+d.EventType)
			if d.State != core.DeliveryPending || d.AttemptCount != 0 || d.Attempts == nil || d.NextAttemptAt == nil {
				t.Fatalf("new delivery = %+v", d)
			}
		}
		slices.Sort(got)
		slices.Sort(w)
		if !slices.Equal(got, w) {
			t.Fatalf("destination %s got %v, want %v", dest, got, w)
		}
	}
	ds := allDeliveries(t, s, core.DeliveryQuery{DestinationID: progress.ID})
	e, meta, err := s.DeliveryEvent(ctx, ds[0])
	must(t, err)
	if e.ID != ds[0].EventID || e.Seq != ds[0].Seq || meta["ticket"] != "T-1" {
		t.Fatalf("delivery event = %+v, %v", e, meta)
	}
}

func testDeliveriesOrder(t *testing.T, s DeliveryStore) {
	a, b := sessionOf(t, s, "agt_a"), sessionOf(t, s, "agt_a")
	dest := createDest(t, s, "", core.EventFilter{})
	say(t, s, a.ID, "a1", "a2", "a3")
	say(t, s, b.ID, "b1")
	ds := due(t, s, nil)
	if len(ds) != 2 {
		t.Fatalf("due = %+v, want one head per stream", ds)
	}
	for _, d := range ds {
		if d.Seq != 1 || d.DestinationID != dest.ID {
			t.Fatalf("head = %+v", d)
		}
	}
	busyA := func(st core.Stream) bool { return st.SessionID == a.ID }
	if ds := due(t, s, busyA); len(ds) != 1 || ds[0].SessionID != b.ID {
		t.Fatalf("due with a busy = %+v", ds)
	}
	headA := ds[0]
	if headA.SessionID != a.ID {
		headA = ds[1]
	}
	var got []uint64
	for d := headA; d != nil; {
		got = append(got, d.Seq)
		stored, next := record(t, s, d.ID, ok())
		if stored.State != core.DeliveryDelivered || stored.DeliveredAt == nil || stored.AttemptCount != 1 || stored.Attempts[0].StatusCode != 204 {
			t.Fatalf("stored = %+v", stored)
		}
		d = next
	}
	if !slices.Equal(got, []uint64{1, 2, 3}) {
		t.Fatalf("delivered %v", got)
	}
	if ds := due(t, s, nil); len(ds) != 1 || ds[0].SessionID != b.ID {
		t.Fatalf("due after a drained = %+v", ds)
	}
}

func testDeliveriesRetryDead(t *testing.T, s DeliveryStore) {
	ctx := t.Context()
	a := sessionOf(t, s, "agt_a")
	dest := createDest(t, s, a.ID, core.EventFilter{})
	say(t, s, a.ID, "one", "two")
	first := due(t, s, nil)[0]
	retry := time.Now().Add(time.Hour)
	stored, next := record(t, s, first.ID, failed(retry))
	if next != nil || stored.State != core.DeliveryPending || stored.NextAttemptAt == nil || !stored.NextAttemptAt.Equal(core.NewTime(retry).Time) || stored.FirstAttemptAt == nil {
		t.Fatalf("after a failure: stored %+v, next %+v", stored, next)
	}
	ds, at, err := s.DueDeliveries(ctx, later(), 10, nil)
	must(t, err)
	if len(ds) != 0 || !at.Equal(core.NewTime(retry).Time) {
		t.Fatalf("due = %+v, next %v; want none until %v", ds, at, retry)
	}
	if d, err := s.GetDestination(ctx, dest.ID); err != nil || d.FailingSince == nil {
		t.Fatalf("destination = %+v, %v", d, err)
	}
	ds, _, err = s.DueDeliveries(ctx, retry.Add(time.Second), 10, nil)
	must(t, err)
	if len(ds) != 1 || ds[0].ID != first.ID {
		t.Fatalf("due at the retry = %+v", ds)
	}
	stored, next = record(t, s, first.ID, failed(time.Time{}))
	if stored.State != core.DeliveryDead || stored.NextAttemptAt != nil || stored.AttemptCount != 2 {
		t.Fatalf("dead = %+v", stored)
	}
	if next == nil || next.Seq != 2 {
		t.Fatalf("the dead delivery blocks the next: %+v", next)
	}
	record(t, s, next.ID, ok())
	if d, err := s.GetDestination(ctx, dest.ID); err != nil || d.FailingSince != nil {
		t.Fatalf("a success did not clear the failure run: %+v, %v", d, err)
	}
	for range core.MaxAttemptsKept + 3 {
		record(t, s, first.ID, failed(time.Time{})) // settled: kept for the record only
	}
	got, err := s.GetDelivery(ctx, first.ID)
	must(t, err)
	if got.AttemptCount != core.MaxAttemptsKept+5 || len(got.Attempts) != core.MaxAttemptsKept || got.State != core.DeliveryDead {
		t.Fatalf("attempts kept: count %d, %d kept, state %s", got.AttemptCount, len(got.Attempts), got.State)
	}
}

func testDeliveriesPauseResume(t *testing.T, s DeliveryStore) {
	ctx := t.Context()
	a := sessionOf(t, s, "agt_a")
	dest := createDest(t, s, a.ID, core.EventFilter{})
	say(t, s, a.ID, "one")
	first := due(t, s, nil)[0]
	t0 := time.Now()
	r := failed(t0.Add(time.Millisecond))
	r.PauseAfter = time.Minute
	r.Attempt.At = core.NewTime(t0)
	record(t, s, first.ID, r)
	if d, _ := s.GetDestination(ctx, dest.ID); d.Status != core.DestinationActive {
		t.Fatalf("paused too early: %+v", d)
	}
	r.Attempt.At = core.NewTime(t0.Add(2 * time.Minute))
	_, next := record(t, s, first.ID, r)
	d, err := s.GetDestination(ctx, dest.ID)
	must(t, err)
	if d.Status != core.DestinationPaused || d.PausedAt == nil || next != nil {
		t.Fatalf("not paused: %+v, next %+v", d, next)
	}
	say(t, s, a.ID, "two")
	if ds := due(t, s, nil); len(ds) != 0 {
		t.Fatalf("a paused destination has due deliveries: %+v", ds)
	}
	if ds := allDeliveries(t, s, core.DeliveryQuery{DestinationID: dest.ID}); len(ds) != 2 {
		t.Fatalf("events stopped queueing while paused: %d deliveries", len(ds))
	}
	d, err = s.ResumeDestination(ctx, dest.ID)
	must(t, err)
	if d.Status != core.DestinationActive || d.PausedAt != nil || d.FailingSince != nil {
		t.Fatalf("resumed = %+v", d)
	}
	ds := due(t, s, nil)
	if len(ds) != 1 || ds[0].ID != first.ID {
		t.Fatalf("resume did not continue where it stopped: %+v", ds)
	}
	_, next = record(t, s, first.ID, ok())
	if next == nil || next.Seq != 2 {
		t.Fatalf("next after resume = %+v", next)
	}
	_, err = s.ResumeDestination(ctx, "dst_missing")
	wantErr(t, err, core.ErrNotFound)
}

func testDeliveriesRedeliver(t *testing.T, s DeliveryStore) {
	ctx := t.Context()
	a := sessionOf(t, s, "agt_a")
	createDest(t, s, a.ID, core.EventFilter{})
	say(t, s, a.ID, "one", "two")
	first := due(t, s, nil)[0]
	_, err := s.Redeliver(ctx, first.ID)
	wantErr(t, err, core.ErrConflict)
	_, second := record(t, s, first.ID, failed(time.Time{}))
	record(t, s, second.ID, ok())
	if ds := due(t, s, nil); len(ds) != 0 {
		t.Fatalf("due = %+v", ds)
	}
	for _, id := range []string{first.ID, second.ID} {
		d, err := s.Redeliver(ctx, id)
		must(t, err)
		if d.State != core.DeliveryPending || d.FirstAttemptAt != nil || d.DeliveredAt != nil || d.NextAttemptAt == nil {
			t.Fatalf("redelivered = %+v", d)
		}
	}
	ds := due(t, s, nil)
	if len(ds) != 1 || ds[0].ID != first.ID {
		t.Fatalf("due after redelivery = %+v", ds)
	}
	stored, next := record(t, s, first.ID, ok())
	if stored.State != core.DeliveryDelivered || stored.AttemptCount != 2 || next == nil || next.ID != second.ID {
		t.Fatalf("stored %+v, next %+v", stored, next)
	}
	_, err = s.Redeliver(ctx, "dlv_missing")
	wantErr(t, err, core.ErrNotFound)
}

func testDeliveriesDelete(t *testing.T, s DeliveryStore) {
	ctx := t.Context()
	a := sessionOf(t, s, "agt_a")
	dest := createDest(t, s, a.ID, core.EventFilter{})
	keep := createDest(t, s, "", core.EventFilter{})
	say(t, s, a.ID, "one", "two")
	inflight := due(t, s, func(st core.Stream) bool { return st.DestinationID == keep.ID })[0]
	must(t, s.DeleteDestination(ctx, dest.ID))
	_, err := s.GetDestination(ctx, dest.ID)
	wantErr(t, err, core.ErrNotFound)
	wantErr(t, s.DeleteDestination(ctx, dest.ID), core.ErrNotFound)
	for _, d := range allDeliveries(t, s, core.DeliveryQuery{DestinationID: dest.ID}) {
		if d.State != core.DeliveryDead {
			t.Fatalf("delivery of a deleted destination = %+v", d)
		}
	}
	// An attempt that was in flight is recorded and moves nothing.
	stored, next := record(t, s, inflight.ID, ok())
	if stored.State != core.DeliveryDead || next != nil {
		t.Fatalf("late attempt: %+v, next %+v", stored, next)
	}
	_, err = s.Redeliver(ctx, inflight.ID)
	wantErr(t, err, core.ErrConflict)
	if ds := due(t, s, nil); len(ds) != 1 || ds[0].DestinationID != keep.ID {
		t.Fatalf("due = %+v", ds)
	}
	say(t, s, a.ID, "three")
	if n := len(allDeliveries(t, s, core.DeliveryQuery{DestinationID: dest.ID})); n != 2 {
		t.Fatalf("a deleted destination still receives: %d deliveries", n)
	}
}
