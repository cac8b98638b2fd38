package runtime_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/fixtures/fakemodel"
	"github.com/switchboardhq/switchboard/sessions/engine/runtime"
	"github.com/switchboardhq/switchboard/sessions/store/bolt"
)

// leaseEndingStore answers the scheduler's reads as a store does when the
// lease holding a session runs out between them: DueWakes, read first,
// finds the session still held, and NextWake, read next, finds its wake
// due.
type leaseEndingStore struct {
	*bolt.Store
	held atomic.Bool
}

func (s *leaseEndingStore) DueWakes(ctx context.Context, now time.Time, limit int) ([]string, error) {
	if s.held.Load() {
		return nil, nil
	}
	return s.Store.DueWakes(ctx, now, limit)
}

// TestSchedulerLooksAgainAtALeaseThatRanOut: a wake due by NextWake that
// DueWakes did not give is looked at again within a moment, not after the
// scheduler's idle wait: a replica taking over from a dead one would
// otherwise sleep through the takeover.
func TestSchedulerLooksAgainAtALeaseThatRanOut(t *testing.T) {
	clock, st, agent := clockedStore(t)
	store := &leaseEndingStore{Store: st}
	store.held.Store(true)
	id := sessionWith(t, st, agent, "hi")
	model := fakemodel.New()
	model.Default = &fakemodel.Step{Text: "answer"}
	startClocked(t, runtime.Config{Store: store, Model: model, Workers: 1, Clock: clock})

	<-clock.armed
	at, ok := clock.sleepingUntil()
	if !ok {
		t.Fatal("the scheduler set no timer")
	}
	if wait := at.Sub(clock.Now()); wait > time.Second {
		t.Fatalf("the scheduler sleeps %v with a wake due", wait)
	}
	store.held.Store(false)
	clock.Advance(time.Second)
	for len(model.Requests()) == 0 {
		<-clock.armed // each look arms a timer; the turn's model call follows the look that hands it over
		clock.Advance(time.Second)
	}
	if evs, err := st.Events(context.Background(), id, 0, 0); err != nil || len(evs) == 0 {
		t.Fatalf("the session's log after its wake: %d events, %v", len(evs), err)
	}
}

// TestSchedulerLooksOncePerLeaseTTL: with nothing due, the scheduler
// still looks at the wake queue once a lease TTL, so a wake it was never
// told of (another replica's, its notice lost when that replica died) is
// found within that, not after the scheduler's longest idle wait.
func TestSchedulerLooksOncePerLeaseTTL(t *testing.T) {
	clock, st, agent := clockedStore(t)
	model := fakemodel.New()
	model.Default = &fakemodel.Step{Text: "answer"}
	const lease = 5 * time.Second
	startClocked(t, runtime.Config{Store: st, Model: model, Workers: 1, Clock: clock, LeaseTTL: lease})

	<-clock.armed
	at, ok := clock.sleepingUntil()
	if !ok {
		t.Fatal("the scheduler set no timer")
	}
	if wait := at.Sub(clock.Now()); wait > lease {
		t.Fatalf("with nothing due the scheduler sleeps %v, longer than the lease TTL %v", wait, lease)
	}
	// No commit stream is wired: nothing tells the runtime of this wake.
	sessionWith(t, st, agent, "hi")
	clock.Advance(lease)
	for len(model.Requests()) == 0 {
		<-clock.armed
		clock.Advance(time.Second)
	}
}
