package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

func nextWake(t *testing.T, s core.Store) (time.Time, bool) {
	t.Helper()
	at, ok, err := s.NextWake(t.Context())
	must(t, err)
	return at, ok
}

func dueWakes(t *testing.T, s core.Store, now time.Time, limit int) []string {
	t.Helper()
	ids, err := s.DueWakes(t.Context(), now, limit)
	must(t, err)
	return ids
}

func testWakeSchedule(t *testing.T, s core.Store) {
	ctx := t.Context()
	a, b := newSession(t, s), newSession(t, s)
	if _, ok := nextWake(t, s); ok {
		t.Fatal("a store with idle sessions has a wake")
	}
	base := time.Now().Add(time.Hour).Truncate(time.Millisecond)
	must(t, s.ScheduleWake(ctx, a.ID, base.Add(10*time.Second)))
	must(t, s.ScheduleWake(ctx, a.ID, base.Add(20*time.Second)))
	if at, ok := nextWake(t, s); !ok || !at.Equal(base.Add(10*time.Second)) {
		t.Fatalf("later request replaced the earlier: %v %v", at, ok)
	}
	must(t, s.ScheduleWake(ctx, a.ID, base.Add(5*time.Second)))
	if at, ok := nextWake(t, s); !ok || !at.Equal(base.Add(5*time.Second)) {
		t.Fatalf("earlier request did not win: %v %v", at, ok)
	}
	must(t, s.ScheduleWake(ctx, b.ID, base.Add(7*time.Second)))
	if got := dueWakes(t, s, base.Add(4*time.Second), 0); len(got) != 0 {
		t.Fatalf("due too early: %v", got)
	}
	if got := dueWakes(t, s, base.Add(5*time.Second), 0); !slices.Equal(got, []string{a.ID}) {
		t.Fatalf("due at 5s = %v", got)
	}
	if got := dueWakes(t, s, base.Add(time.Minute), 0); !slices.Equal(got, []string{a.ID, b.ID}) {
		t.Fatalf("due at 1m = %v, want earliest first", got)
	}
	if got := dueWakes(t, s, base.Add(time.Minute), 1); !slices.Equal(got, []string{a.ID}) {
		t.Fatalf("due with limit 1 = %v", got)
	}
	must(t, s.ClearWake(ctx, a.ID, 0))
	must(t, s.ClearWake(ctx, a.ID, 0)) // clearing nothing is fine
	if got := dueWakes(t, s, base.Add(time.Minute), 0); !slices.Equal(got, []string{b.ID}) {
		t.Fatalf("after clear = %v", got)
	}
	// A cleared session can be scheduled later than its old wake again.
	must(t, s.ScheduleWake(ctx, a.ID, base.Add(30*time.Second)))
	if got := dueWakes(t, s, base.Add(time.Minute), 0); !slices.Equal(got, []string{b.ID, a.ID}) {
		t.Fatalf("after reschedule = %v", got)
	}
	must(t, s.ClearWake(ctx, b.ID, 0))
	must(t, s.ClearWake(ctx, a.ID, 0))
	if _, ok := nextWake(t, s); ok {
		t.Fatal("wakes left after clearing all")
	}
	wantErr(t, s.ScheduleWake(ctx, "ses_missing", base), core.ErrNotFound)
}

// testWakeMove: MoveWake replaces the session's wake, later or earlier,
// where ScheduleWake keeps the earlier one.
func testWakeMove(t *testing.T, s core.Store) {
	ctx := t.Context()
	sess := newSession(t, s, message("hi")) // queued: a wake due now
	queued, ok := nextWake(t, s)
	if !ok {
		t.Fatal("a queued session has no wake")
	}
	later := queued.Add(time.Minute)
	must(t, s.MoveWake(ctx, sess.ID, later, 0))
	if at, _ := nextWake(t, s); !at.Equal(later) {
		t.Fatalf("moved wake = %v, want %v", at, later)
	}
	if got := dueWakes(t, s, queued.Add(time.Second), 0); len(got) != 0 {
		t.Fatalf("due before the moved wake: %v", got)
	}
	must(t, s.MoveWake(ctx, sess.ID, later.Add(time.Minute), 0))
	must(t, s.MoveWake(ctx, sess.ID, later, 0)) // earlier again
	if got := dueWakes(t, s, later, 0); !slices.Equal(got, []string{sess.ID}) {
		t.Fatalf("due at the moved wake = %v", got)
	}
	// ScheduleWake still lets an earlier request win over a moved wake.
	must(t, s.ScheduleWake(ctx, sess.ID, queued))
	if at, _ := nextWake(t, s); !at.Equal(queued) {
		t.Fatalf("after an earlier ScheduleWake = %v, want %v", at, queued)
	}
	must(t, s.ClearWake(ctx, sess.ID, 0))
	must(t, s.MoveWake(ctx, sess.ID, later, 0)) // with no wake: one is made
	if at, ok := nextWake(t, s); !ok || !at.Equal(later) {
		t.Fatalf("MoveWake without a wake = %v %v", at, ok)
	}
	wantErr(t, s.MoveWake(ctx, "ses_missing", later, 0), core.ErrNotFound)
}

func testWakeQueueAndTurn(t *testing.T, s core.Store) {
	ctx := t.Context()
	before := time.Now()
	sess := newSession(t, s, message("hi"))
	after := time.Now().Add(time.Millisecond)
	at, ok := nextWake(t, s)
	if !ok || at.Before(before.Add(-time.Millisecond)) || at.After(after) {
		t.Fatalf("queued session wake = %v %v, want now", at, ok)
	}
	if got := dueWakes(t, s, after, 0); !slices.Equal(got, []string{sess.ID}) {
		t.Fatalf("due = %v", got)
	}
	// Queue more while a wake far in the future is also asked for: now wins.
	must(t, s.ScheduleWake(ctx, sess.ID, after.Add(time.Hour)))
	if at2, _ := nextWake(t, s); !at2.Equal(at) {
		t.Fatalf("later wake replaced the queue's: %v vs %v", at2, at)
	}

	appendEvents(t, s, sess.ID, core.AppendRequest{TakeInputs: true, TurnID: "turn_1", Holder: "w", Events: []core.Event{turnStarted()}})
	// An input arriving mid-turn keeps the wake past turn.completed.
	_, err := s.QueueInputs(ctx, sess.ID, core.QueueRequest{Inputs: []core.Event{message("steer")}})
	must(t, err)
	appendEvents(t, s, sess.ID, core.AppendRequest{TurnID: "turn_1", Events: []core.Event{turnCompleted(core.ReasonCompleted, core.Usage{})}})
	if _, ok := nextWake(t, s); !ok {
		t.Fatal("turn.completed cleared the wake with input pending")
	}
	appendEvents(t, s, sess.ID, core.AppendRequest{TakeInputs: true, TurnID: "turn_2", Holder: "w", Events: []core.Event{turnStarted()}})
	appendEvents(t, s, sess.ID, core.AppendRequest{TurnID: "turn_2", Events: []core.Event{turnCompleted(core.ReasonCompleted, core.Usage{})}})
	if at, ok := nextWake(t, s); ok {
		t.Fatalf("wake at %v left after the last turn.completed", at)
	}
}

func testOpenTurns(t *testing.T, s core.Store) {
	ctx := t.Context()
	a, b := newSession(t, s, message("a")), newSession(t, s, message("b"))
	open, err := s.OpenTurns(ctx)
	must(t, err)
	if len(open) != 0 {
		t.Fatalf("open turns before any start: %v", open)
	}
	appendEvents(t, s, a.ID, core.AppendRequest{TakeInputs: true, TurnID: "turn_a", Holder: "host-1", Events: []core.Event{turnStarted()}})
	appendEvents(t, s, b.ID, core.AppendRequest{TakeInputs: true, TurnID: "turn_b", Holder: "host-2", Events: []core.Event{turnStarted()}})
	open, err = s.OpenTurns(ctx)
	must(t, err)
	if len(open) != 2 || open[a.ID] != "host-1" || open[b.ID] != "host-2" {
		t.Fatalf("open turns = %v", open)
	}
	appendEvents(t, s, a.ID, core.AppendRequest{TurnID: "turn_a", Events: []core.Event{turnCompleted(core.ReasonCompleted, core.Usage{})}})
	open, err = s.OpenTurns(ctx)
	must(t, err)
	if len(open) != 1 || open[b.ID] != "host-2" {
		t.Fatalf("open turns after completion = %v", open)
	}
}

func testArchive(t *testing.T, s core.Store) {
	ctx := t.Context()
	sess := newSession(t, s, message("x"))
	appendEvents(t, s, sess.ID, core.AppendRequest{Events: []core.Event{statusEvent(core.StatusFailed, core.ReasonError)}})
	out, err := s.Archive(ctx, sess.ID)
	must(t, err)
	if out.Status != core.StatusArchived || out.StopReason != core.ReasonError || out.LastSeq != 1 {
		t.Fatalf("archived = %+v", out)
	}
	sameJSON(t, "stored", getSession(t, s, sess.ID), out)
	pending, err := s.Pending(ctx, sess.ID)
	must(t, err)
	if len(pending) != 0 {
		t.Fatalf("%d inputs survived archive", len(pending))
	}
	if _, ok := nextWake(t, s); ok {
		t.Fatal("archived session still has a wake")
	}
	again, err := s.Archive(ctx, sess.ID)
	must(t, err)
	sameJSON(t, "second archive", again, out)
	events, err := s.Events(ctx, sess.ID, 0, 0)
	must(t, err)
	if len(events) != 1 {
		t.Fatalf("archive changed the log: %d events", len(events))
	}
	wantErr(t, s.ScheduleWake(ctx, sess.ID, time.Now()), core.ErrArchived)
	_, err = s.Archive(ctx, "ses_missing")
	wantErr(t, err, core.ErrNotFound)
	if counts := checkCounts(t, s); counts[core.StatusArchived] != 1 || counts[core.StatusFailed] != 0 || counts[core.StatusQueued] != 0 {
		t.Fatalf("counts = %v", counts)
	}
}

func testSweep(t *testing.T, s core.Store) {
	ctx := t.Context()
	_, err := s.CreateSession(ctx, core.NewSession{
		Dedupe:      []string{"chat:Ev1", "chat:msg:C1:1.0"},
		Idempotency: &core.Idempotency{Key: "api:sessions:k", Hash: "h", Answer: []byte("a")},
	})
	must(t, err)
	n, err := s.Sweep(ctx, time.Now().Add(-time.Hour))
	must(t, err)
	if n != 0 {
		t.Fatalf("swept %d fresh keys", n)
	}
	dup, err := s.CreateSession(ctx, core.NewSession{Dedupe: []string{"chat:Ev1"}})
	must(t, err)
	if !dup.Duplicate {
		t.Fatal("key lost before its time")
	}
	n, err = s.Sweep(ctx, time.Now().Add(time.Hour))
	must(t, err)
	if n != 3 {
		t.Fatalf("swept %d keys, want 3", n)
	}
	again, err := s.CreateSession(ctx, core.NewSession{Dedupe: []string{"chat:Ev1"}, Idempotency: &core.Idempotency{Key: "api:sessions:k", Hash: "other"}})
	must(t, err)
	if again.Duplicate || again.Replay != nil || !again.Created {
		t.Fatalf("swept keys still seen: %+v", again)
	}
	n, err = s.Sweep(ctx, time.Now().Add(-time.Hour))
	must(t, err)
	if n != 0 {
		t.Fatalf("second sweep removed %d", n)
	}
}

// hasWake reports whether the session has a wake, whenever it is due.
func hasWake(t *testing.T, s core.Store, id string) bool {
	t.Helper()
	return slices.Contains(dueWakes(t, s, time.Now().Add(1000*time.Hour), 0), id)
}

// testWakeClearUnlessQueued: a cycle's end keeps the wake of inputs still
// queued and says so, spends it once the turn took them, and is fenced
// like ClearWake. (Leases are released before a wake is looked for: a
// live one may put the wake off.)
func testWakeClearUnlessQueued(t *testing.T, s core.Store) {
	ctx := t.Context()
	sess := newSession(t, s, message("hi")) // queued: a wake due now
	other := newSession(t, s)
	must(t, s.ScheduleWake(ctx, other.ID, time.Now()))
	lease, ok := takeLease(t, s, sess.ID, "a", time.Hour)
	if !ok {
		t.Fatal("a could not take a new session")
	}
	got, err := s.ClearWakeUnlessQueued(ctx, sess.ID, lease.Epoch)
	must(t, err)
	must(t, s.ReleaseLease(ctx, lease))
	if !got || !hasWake(t, s, sess.ID) {
		t.Fatalf("with an input queued: queued %v, wake %v, want both", got, hasWake(t, s, sess.ID))
	}
	appendEvents(t, s, sess.ID, core.AppendRequest{TakeInputs: true, TurnID: "turn_1", Events: []core.Event{turnStarted()}})
	got, err = s.ClearWakeUnlessQueued(ctx, sess.ID, lease.Epoch)
	must(t, err)
	if got || hasWake(t, s, sess.ID) || !hasWake(t, s, other.ID) {
		t.Fatalf("with the queue taken: queued %v, wake %v, the other session's %v; want only the other's", got, hasWake(t, s, sess.ID), hasWake(t, s, other.ID))
	}
	got, err = s.ClearWakeUnlessQueued(ctx, sess.ID, lease.Epoch) // no wake left: nothing to do
	if err != nil || got {
		t.Fatalf("again: %v, %v", got, err)
	}

	must(t, s.ScheduleWake(ctx, sess.ID, time.Now()))
	cur, ok := takeLease(t, s, sess.ID, "b", time.Hour)
	if !ok {
		t.Fatal("b could not take a released session")
	}
	_, err = s.ClearWakeUnlessQueued(ctx, sess.ID, lease.Epoch)
	wantErr(t, err, core.ErrLeaseLost)
	must(t, s.ReleaseLease(ctx, cur))
	if !hasWake(t, s, sess.ID) {
		t.Fatal("the stale holder's clear dropped the wake")
	}
	if got, err := s.ClearWakeUnlessQueued(ctx, "ses_missing", 0); err != nil || got {
		t.Fatalf("a session that does not exist: %v, %v", got, err)
	}
}

// testWakeClearRacesQueue: inputs queued while a cycle's end clears the
// wake are never left without one, whichever write goes first.
func testWakeClearRacesQueue(t *testing.T, s core.Store) {
	ctx := t.Context()
	sess := newSession(t, s)
	for i := range 40 {
		must(t, s.ScheduleWake(ctx, sess.ID, time.Unix(1, 0)))
		queued := make(chan error, 1)
		go func() {
			_, err := s.QueueInputs(ctx, sess.ID, core.QueueRequest{Inputs: []core.Event{message(fmt.Sprint("race ", i))}})
			queued <- err
		}()
		_, err := s.ClearWakeUnlessQueued(ctx, sess.ID, 0)
		must(t, err)
		must(t, <-queued)
		if !hasWake(t, s, sess.ID) {
			t.Fatalf("round %d: an input is queued and the session has no wake", i)
		}
		appendEvents(t, s, sess.ID, core.AppendRequest{TakeInputs: true, Events: []core.Event{turnStarted()}})
		got, err := s.ClearWakeUnlessQueued(ctx, sess.ID, 0)
		must(t, err)
		if got || hasWake(t, s, sess.ID) {
			t.Fatalf("round %d: with the queue taken, queued %v and a wake left %v", i, got, hasWake(t, s, sess.ID))
		}
	}
}

// testWakeFenced: a holder that lost the session can neither move nor
// clear its wake; the new holder can.
func testWakeFenced(t *testing.T, s core.Store) {
	ctx := t.Context()
	sess := newSession(t, s, message("hi")) // queued: a wake due now
	queued, _ := nextWake(t, s)
	old, ok := takeLease(t, s, sess.ID, "a", time.Hour)
	if !ok {
		t.Fatal("a could not take a new session")
	}
	must(t, s.ReleaseLease(ctx, old))
	cur, ok := takeLease(t, s, sess.ID, "b", time.Hour)
	if !ok {
		t.Fatal("b could not take a released session")
	}
	wantErr(t, s.MoveWake(ctx, sess.ID, queued.Add(time.Hour), old.Epoch), core.ErrLeaseLost)
	wantErr(t, s.ClearWake(ctx, sess.ID, old.Epoch), core.ErrLeaseLost)
	// Released, so that the next wake is the session's own (a live lease
	// may put it off); the epoch stays the holder's until another grant.
	must(t, s.ReleaseLease(ctx, cur))
	if at, ok := nextWake(t, s); !ok || !at.Equal(queued) {
		t.Fatalf("after the stale holder's writes the wake is %v (%v), want %v", at, ok, queued)
	}
	later := queued.Add(time.Minute)
	must(t, s.MoveWake(ctx, sess.ID, later, cur.Epoch))
	if at, _ := nextWake(t, s); !at.Equal(later) {
		t.Fatalf("the holder's move = %v, want %v", at, later)
	}
	must(t, s.ClearWake(ctx, sess.ID, cur.Epoch))
	if at, ok := nextWake(t, s); ok {
		t.Fatalf("the holder's clear left a wake at %v", at)
	}
}
