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
	p, err := s.DeliveryPayload(ctx, ds[0])
	must(t, err)
	if e := p.Event; e.ID != ds[0].EventID || e.Seq != ds[0].Seq || p.Metadata["ticket"] != "T-1" || p.DestinationPaused {
		t.Fatalf("delivery payload = %+v", p)
	}
	// The status is read with the event: a pause shows at once, a
	// resume too.
	_, err = s.PauseDestination(ctx, progress.ID)
	must(t, err)
	if p, err = s.DeliveryPayload(ctx, ds[0]); err != nil || !p.DestinationPaused || p.Event.ID != ds[0].EventID {
		t.Fatalf("delivery payload of a paused destination = %+v, %v", p, err)
	}
	_, err = s.ResumeDestination(ctx, progress.ID)
	must(t, err)
	if p, err = s.DeliveryPayload(ctx, ds[0]); err != nil || p.DestinationPaused {
		t.Fatalf("delivery payload of a resumed destination = %+v, %v", p, err)
	}
}

func testDeliveriesOrder(t *testing.T, s DeliveryStore) {
	a, b := sessionOf(t, s, "agt_a"), sessionOf(t, s, "agt_a")
	dest := createDest(t, s, "", core.EventFilter{})
	say(t, s, a.ID, "a1", "a2", "a3")
	say(t, s, b.ID, "b1")
	ds := claim(t, s, "a")
	if len(ds) != 2 {
		t.Fatalf("due = %+v, want one head per stream", ds)
	}
	for _, d := range ds {
		if d.Seq != 1 || d.DestinationID != dest.ID || d.Claim.Holder != "a" || d.Claim.Epoch == 0 {
			t.Fatalf("head = %+v", d)
		}
	}
	// A claimed stream is handed to nobody else, nor again to its holder.
	for _, holder := range []string{"b", "a"} {
		if again := claim(t, s, holder); len(again) != 0 {
			t.Fatalf("claimed streams handed to %s: %+v", holder, again)
		}
	}
	headA, headB := ds[0], ds[1]
	if headA.SessionID != a.ID {
		headA, headB = headB, headA
	}
	var got []uint64
	for d := headA.Delivery; d != nil; {
		got = append(got, d.Seq)
		stored, next := record(t, s, headA.Claim, d.ID, ok())
		if stored.State != core.DeliveryDelivered || stored.DeliveredAt == nil || stored.AttemptCount != 1 || stored.Attempts[0].StatusCode != 204 {
			t.Fatalf("stored = %+v", stored)
		}
		d = next
	}
	if !slices.Equal(got, []uint64{1, 2, 3}) {
		t.Fatalf("delivered %v", got)
	}
	if ds := claim(t, s, "b"); len(ds) != 0 {
		t.Fatalf("due while b's stream is claimed = %+v", ds)
	}
	if _, next := record(t, s, headB.Claim, headB.ID, ok()); next != nil {
		t.Fatalf("next of a drained stream = %+v", next)
	}
	// A drained stream that gets a delivery again is claimed afresh.
	say(t, s, b.ID, "b2")
	ds = claim(t, s, "b")
	if len(ds) != 1 || ds[0].Seq != 2 || ds[0].Claim.Epoch <= headB.Claim.Epoch {
		t.Fatalf("due after a new event = %+v, want seq 2 above epoch %d", ds, headB.Claim.Epoch)
	}
}

func testDeliveriesRetryDead(t *testing.T, s DeliveryStore) {
	ctx := t.Context()
	a := sessionOf(t, s, "agt_a")
	dest := createDest(t, s, a.ID, core.EventFilter{})
	say(t, s, a.ID, "one", "two")
	first := claim(t, s, "a")[0]
	retry := time.Now().Add(time.Hour)
	stored, next := record(t, s, first.Claim, first.ID, failed(retry))
	if next != nil || stored.State != core.DeliveryPending || stored.NextAttemptAt == nil || !stored.NextAttemptAt.Equal(core.NewTime(retry).Time) || stored.FirstAttemptAt == nil {
		t.Fatalf("after a failure: stored %+v, next %+v", stored, next)
	}
	// The claim ended with the attempt that let the stream wait.
	ds, at, err := s.ClaimDeliveries(ctx, "b", time.Hour, later(), 10)
	must(t, err)
	if len(ds) != 0 || !at.Equal(core.NewTime(retry).Time) {
		t.Fatalf("due = %+v, next %v; want none until %v", ds, at, retry)
	}
	if d, err := s.GetDestination(ctx, dest.ID); err != nil || d.FailingSince == nil {
		t.Fatalf("destination = %+v, %v", d, err)
	}
	ds, _, err = s.ClaimDeliveries(ctx, "b", time.Hour, retry.Add(time.Second), 10)
	must(t, err)
	if len(ds) != 1 || ds[0].ID != first.ID || ds[0].Claim.Epoch <= first.Claim.Epoch {
		t.Fatalf("due at the retry = %+v", ds)
	}
	retried := ds[0]
	stored, next = record(t, s, retried.Claim, first.ID, failed(time.Time{}))
	if stored.State != core.DeliveryDead || stored.NextAttemptAt != nil || stored.AttemptCount != 2 {
		t.Fatalf("dead = %+v", stored)
	}
	if next == nil || next.Seq != 2 {
		t.Fatalf("the dead delivery blocks the next: %+v", next)
	}
	// A failure retried at once keeps the stream with its holder, and a
	// delivery keeps its most recent attempts.
	now := time.Now().Add(-time.Second)
	for range core.MaxAttemptsKept + 3 {
		if _, again := record(t, s, retried.Claim, next.ID, failed(now)); again == nil || again.ID != next.ID {
			t.Fatalf("next after a failure due at once = %+v", again)
		}
	}
	got, err := s.GetDelivery(ctx, next.ID)
	must(t, err)
	if got.AttemptCount != core.MaxAttemptsKept+3 || len(got.Attempts) != core.MaxAttemptsKept || got.State != core.DeliveryPending {
		t.Fatalf("attempts kept: count %d, %d kept, state %s", got.AttemptCount, len(got.Attempts), got.State)
	}
	record(t, s, retried.Claim, next.ID, ok())
	if d, err := s.GetDestination(ctx, dest.ID); err != nil || d.FailingSince != nil {
		t.Fatalf("a success did not clear the failure run: %+v, %v", d, err)
	}
}

func testDeliveriesPauseResume(t *testing.T, s DeliveryStore) {
	ctx := t.Context()
	a := sessionOf(t, s, "agt_a")
	dest := createDest(t, s, a.ID, core.EventFilter{})
	say(t, s, a.ID, "one")
	first := claim(t, s, "a")[0]
	t0 := time.Now()
	r := failed(t0.Add(-time.Second))
	r.PauseAfter = time.Minute
	r.Attempt.At = core.NewTime(t0)
	record(t, s, first.Claim, first.ID, r)
	if d, _ := s.GetDestination(ctx, dest.ID); d.Status != core.DestinationActive {
		t.Fatalf("paused too early: %+v", d)
	}
	r.Attempt.At = core.NewTime(t0.Add(2 * time.Minute))
	_, next := record(t, s, first.Claim, first.ID, r)
	d, err := s.GetDestination(ctx, dest.ID)
	must(t, err)
	if d.Status != core.DestinationPaused || d.PausedAt == nil || next != nil {
		t.Fatalf("not paused: %+v, next %+v", d, next)
	}
	say(t, s, a.ID, "two")
	if ds := claim(t, s, "b"); len(ds) != 0 {
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
	ds := claim(t, s, "b")
	if len(ds) != 1 || ds[0].ID != first.ID {
		t.Fatalf("resume did not continue where it stopped: %+v", ds)
	}
	_, next = record(t, s, ds[0].Claim, first.ID, ok())
	if next == nil || next.Seq != 2 {
		t.Fatalf("next after resume = %+v", next)
	}
	_, err = s.ResumeDestination(ctx, "dst_missing")
	wantErr(t, err, core.ErrNotFound)
}

// testDeliveriesPauseByHand: a paused destination's attempt under way
// is recorded and none follows it; its deliveries keep queueing; pausing
// it again changes nothing; a resume continues where it stopped.
func testDeliveriesPauseByHand(t *testing.T, s DeliveryStore) {
	ctx := t.Context()
	a := sessionOf(t, s, "agt_a")
	dest := createDest(t, s, a.ID, core.EventFilter{})
	other := createDest(t, s, a.ID, core.EventFilter{})
	say(t, s, a.ID, "one", "two")
	var first core.ClaimedDelivery
	for _, d := range claim(t, s, "a") {
		if d.DestinationID == dest.ID {
			first = d
		}
	}
	if first.Delivery == nil || first.Seq != 1 {
		t.Fatalf("no first delivery claimed for %s", dest.ID)
	}
	d, err := s.PauseDestination(ctx, dest.ID)
	must(t, err)
	if d.Status != core.DestinationPaused || d.PausedAt == nil || d.ID != dest.ID {
		t.Fatalf("paused = %+v", d)
	}
	if got, err := s.GetDestination(ctx, dest.ID); err != nil || jsonOf(t, got) != jsonOf(t, d) {
		t.Fatalf("stored = %+v, %v; want %+v", got, err, d)
	}
	stored, next := record(t, s, first.Claim, first.ID, ok())
	if stored.State != core.DeliveryDelivered || next != nil {
		t.Fatalf("the attempt under way = %+v, next %+v; want it delivered and none next", stored, next)
	}
	must(t, s.ReleaseDeliveryClaims(ctx, "a"))
	say(t, s, a.ID, "three")
	for _, c := range claim(t, s, "b") {
		if c.DestinationID == dest.ID {
			t.Fatalf("a paused destination has a due delivery: %+v", c)
		}
	}
	if ds := allDeliveries(t, s, core.DeliveryQuery{DestinationID: dest.ID, State: core.DeliveryPending}); len(ds) != 2 {
		t.Fatalf("%d pending deliveries while paused, want 2", len(ds))
	}
	if o, err := s.GetDestination(ctx, other.ID); err != nil || o.Status != core.DestinationActive {
		t.Fatalf("the other destination = %+v, %v", o, err)
	}
	again, err := s.PauseDestination(ctx, dest.ID)
	must(t, err)
	sameJSON(t, "paused again", again, d)
	must(t, s.ReleaseDeliveryClaims(ctx, "b"))
	_, err = s.ResumeDestination(ctx, dest.ID)
	must(t, err)
	var resumed []uint64
	for _, c := range claim(t, s, "c") {
		if c.DestinationID == dest.ID {
			resumed = append(resumed, c.Seq)
		}
	}
	if !slices.Equal(resumed, []uint64{2}) {
		t.Fatalf("due after resume: seqs %v, want [2]", resumed)
	}
	_, err = s.PauseDestination(ctx, "dst_missing")
	wantErr(t, err, core.ErrNotFound)
}

func testDeliveriesRedeliver(t *testing.T, s DeliveryStore) {
	ctx := t.Context()
	a := sessionOf(t, s, "agt_a")
	createDest(t, s, a.ID, core.EventFilter{})
	say(t, s, a.ID, "one", "two")
	first := claim(t, s, "a")[0]
	_, err := s.Redeliver(ctx, first.ID)
	wantErr(t, err, core.ErrConflict)
	_, second := record(t, s, first.Claim, first.ID, failed(time.Time{}))
	record(t, s, first.Claim, second.ID, ok())
	if ds := claim(t, s, "a"); len(ds) != 0 {
		t.Fatalf("due = %+v", ds)
	}
	for _, id := range []string{first.ID, second.ID} {
		d, err := s.Redeliver(ctx, id)
		must(t, err)
		if d.State != core.DeliveryPending || d.FirstAttemptAt != nil || d.DeliveredAt != nil || d.NextAttemptAt == nil {
			t.Fatalf("redelivered = %+v", d)
		}
	}
	ds := claim(t, s, "a")
	if len(ds) != 1 || ds[0].ID != first.ID || ds[0].Claim.Epoch <= first.Claim.Epoch {
		t.Fatalf("due after redelivery = %+v", ds)
	}
	stored, next := record(t, s, ds[0].Claim, first.ID, ok())
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
	var inflight, kept core.ClaimedDelivery
	for _, d := range claim(t, s, "a") {
		if d.DestinationID == dest.ID {
			inflight = d
		} else {
			kept = d
		}
	}
	must(t, s.DeleteDestination(ctx, dest.ID))
	_, err := s.GetDestination(ctx, dest.ID)
	wantErr(t, err, core.ErrNotFound)
	wantErr(t, s.DeleteDestination(ctx, dest.ID), core.ErrNotFound)
	for _, d := range allDeliveries(t, s, core.DeliveryQuery{DestinationID: dest.ID}) {
		if d.State != core.DeliveryDead {
			t.Fatalf("delivery of a deleted destination = %+v", d)
		}
	}
	// The stream's claim went with it: an attempt that was in flight is
	// not recorded.
	_, _, err = s.RecordAttempt(ctx, inflight.Claim, inflight.ID, ok())
	wantErr(t, err, core.ErrLeaseLost)
	if d, err := s.GetDelivery(ctx, inflight.ID); err != nil || d.State != core.DeliveryDead || d.AttemptCount != 0 {
		t.Fatalf("late attempt: %+v, %v", d, err)
	}
	_, err = s.Redeliver(ctx, inflight.ID)
	wantErr(t, err, core.ErrConflict)
	if _, next := record(t, s, kept.Claim, kept.ID, ok()); next == nil || next.Seq != 2 || next.DestinationID != keep.ID {
		t.Fatalf("next of the destination kept = %+v", next)
	}
	say(t, s, a.ID, "three")
	if n := len(allDeliveries(t, s, core.DeliveryQuery{DestinationID: dest.ID})); n != 2 {
		t.Fatalf("a deleted destination still receives: %d deliveries", n)
	}
}
