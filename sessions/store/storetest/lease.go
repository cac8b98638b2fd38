package storetest

import (
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

func takeLease(t *testing.T, s core.Store, id, holder string, ttl time.Duration) (core.Lease, bool) {
	t.Helper()
	l, ok, err := s.TakeLease(t.Context(), id, holder, ttl)
	must(t, err)
	return l, ok
}

// eventually retries take until it succeeds: what it waits for is a
// lease or a heartbeat running out by the store's own clock, which a test
// cannot move for every implementation.
func eventually(t *testing.T, what string, take func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !take() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: still refused after a minute", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func testLeaseTakeRenewRelease(t *testing.T, s core.Store) {
	ctx := t.Context()
	_, _, err := s.TakeLease(ctx, "ses_missing", "a", time.Hour)
	wantErr(t, err, core.ErrNotFound)
	_, _, err = s.TakeLease(ctx, newSession(t, s).ID, "", time.Hour)
	wantErr(t, err, core.ErrInvalid)

	id := newSession(t, s).ID
	a, ok := takeLease(t, s, id, "a", time.Hour)
	if !ok || a.Epoch == 0 || a.Holder != "a" || a.SessionID != id {
		t.Fatalf("first take = %+v %v", a, ok)
	}
	if _, ok := takeLease(t, s, id, "b", time.Hour); ok {
		t.Fatal("b took a session whose lease a holds")
	}
	must(t, s.RenewLease(ctx, a, time.Hour))
	must(t, s.ReleaseLease(ctx, a))
	// a never sent a heartbeat, so its affinity does not hold b back.
	b, ok := takeLease(t, s, id, "b", time.Hour)
	if !ok || b.Epoch <= a.Epoch {
		t.Fatalf("take after release = %+v %v, want an epoch above %d", b, ok, a.Epoch)
	}
	wantErr(t, s.RenewLease(ctx, a, time.Hour), core.ErrLeaseLost)
	must(t, s.ReleaseLease(ctx, a)) // a's stale release leaves b's lease alone
	if _, ok := takeLease(t, s, id, "c", time.Hour); ok {
		t.Fatal("a stale release freed b's lease")
	}
	// Expiry is judged by the store's clock.
	must(t, s.RenewLease(ctx, b, time.Millisecond))
	var c core.Lease
	eventually(t, "take after b's lease expired", func() bool {
		c, ok = takeLease(t, s, id, "c", time.Hour)
		return ok
	})
	if c.Epoch <= b.Epoch {
		t.Fatalf("takeover epoch %d, want above %d", c.Epoch, b.Epoch)
	}
	wantErr(t, s.RenewLease(ctx, b, time.Hour), core.ErrLeaseLost)
}

func testLeaseFencesAppends(t *testing.T, s core.Store) {
	ctx := t.Context()
	id := newSession(t, s).ID
	a, _ := takeLease(t, s, id, "a", time.Hour)
	appendEvents(t, s, id, core.AppendRequest{Epoch: a.Epoch, Events: []core.Event{agentMessage("one")}})
	must(t, s.ReleaseLease(ctx, a))
	b, ok := takeLease(t, s, id, "b", time.Hour)
	if !ok {
		t.Fatal("b could not take a released session")
	}
	_, err := s.Append(ctx, id, core.AppendRequest{Epoch: a.Epoch, Events: []core.Event{agentMessage("late")}})
	wantErr(t, err, core.ErrLeaseLost)
	if got := getSession(t, s, id); got.LastSeq != 1 {
		t.Fatalf("a fenced append logged: last_seq %d", got.LastSeq)
	}
	appendEvents(t, s, id, core.AppendRequest{Epoch: b.Epoch, Events: []core.Event{agentMessage("two")}})
	// Writes that carry no epoch (the API's, a platform's) are not fenced.
	appendEvents(t, s, id, core.AppendRequest{Events: []core.Event{agentMessage("three")}})
	events, err := s.Events(ctx, id, 0, 0)
	must(t, err)
	if got := texts(t, events); len(got) != 3 || got[0] != "one" || got[1] != "two" || got[2] != "three" {
		t.Fatalf("log = %v", got)
	}
}

func testLeaseAffinity(t *testing.T, s core.Store) {
	ctx := t.Context()
	id := newSession(t, s).ID
	must(t, s.Heartbeat(ctx, "a", time.Hour, false))
	a, _ := takeLease(t, s, id, "a", time.Hour)
	must(t, s.ReleaseLease(ctx, a))
	if _, ok := takeLease(t, s, id, "b", time.Hour); ok {
		t.Fatal("b took the session of a live replica that ran it last")
	}
	// The last holder itself takes it again at once.
	a2, ok := takeLease(t, s, id, "a", time.Hour)
	if !ok || a2.Epoch <= a.Epoch {
		t.Fatalf("retake by the last holder = %+v %v", a2, ok)
	}
	must(t, s.ReleaseLease(ctx, a2))
	must(t, s.Heartbeat(ctx, "a", time.Hour, true))
	if _, ok := takeLease(t, s, id, "b", time.Hour); !ok {
		t.Fatal("b could not take the session of a draining replica")
	}
	// A replica whose heartbeat ran out keeps no affinity.
	other := newSession(t, s).ID
	must(t, s.Heartbeat(ctx, "c", time.Hour, false))
	c, _ := takeLease(t, s, other, "c", time.Hour)
	must(t, s.ReleaseLease(ctx, c))
	must(t, s.Heartbeat(ctx, "c", time.Millisecond, false))
	eventually(t, "take after c's heartbeat ran out", func() bool {
		_, ok := takeLease(t, s, other, "d", time.Hour)
		return ok
	})
}

func testLeasePrevious(t *testing.T, s core.Store) {
	ctx := t.Context()
	id := newSession(t, s).ID
	lastHolder := func(want string) {
		t.Helper()
		got, err := s.LastHolder(ctx, id)
		must(t, err)
		if got != want {
			t.Fatalf("last holder = %q, want %q", got, want)
		}
	}
	lastHolder("")
	steps := []struct {
		holder, previous string
		moved            bool
	}{
		{"a", "", false},  // the first grant
		{"a", "a", false}, // the same holder again
		{"b", "a", true},  // moved
		{"a", "b", true},  // and back
	}
	for i, st := range steps {
		l, ok := takeLease(t, s, id, st.holder, time.Hour)
		if !ok {
			t.Fatalf("step %d: %s could not take a released session", i, st.holder)
		}
		if l.Previous != st.previous || l.Moved() != st.moved {
			t.Fatalf("step %d: grant to %s = %+v (moved %v), want previous %q (moved %v)", i, st.holder, l, l.Moved(), st.previous, st.moved)
		}
		lastHolder(st.holder)
		must(t, s.ReleaseLease(ctx, l))
		lastHolder(st.holder) // a release keeps it
	}
	// A takeover after expiry names the holder it took over from.
	l, _ := takeLease(t, s, id, "c", time.Hour)
	must(t, s.RenewLease(ctx, l, time.Millisecond))
	var d core.Lease
	eventually(t, "take after c's lease expired", func() bool {
		var ok bool
		d, ok = takeLease(t, s, id, "d", time.Hour)
		return ok
	})
	if d.Previous != "c" || !d.Moved() {
		t.Fatalf("takeover = %+v, want previous c", d)
	}
	lastHolder("d")
}
