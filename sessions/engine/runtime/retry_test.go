package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakemodel"
	"github.com/switchboardhq/switchboard/sessions/engine/runtime"
	"github.com/switchboardhq/switchboard/sessions/store/bolt"
)

// fakeClock is a runtime.Clock the test moves; timers fire when it passes
// their deadline.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers map[*fakeTimer]bool
	armed  chan struct{} // signalled when a timer is set
}

type fakeTimer struct {
	at time.Time
	c  chan time.Time
}

func newFakeClock(now time.Time) *fakeClock {
	return &fakeClock{now: now, timers: map[*fakeTimer]bool{}, armed: make(chan struct{}, 1)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Timer(d time.Duration) (<-chan time.Time, func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{at: c.now.Add(d), c: make(chan time.Time, 1)}
	c.timers[t] = true
	select {
	case c.armed <- struct{}{}:
	default:
	}
	return t.c, func() { c.mu.Lock(); delete(c.timers, t); c.mu.Unlock() }
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	for t := range c.timers {
		if !t.at.After(c.now) {
			t.c <- c.now
			delete(c.timers, t)
		}
	}
}

// sleepingUntil returns the deadline of the one pending timer, if exactly
// one is set.
func (c *fakeClock) sleepingUntil() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.timers) != 1 {
		return time.Time{}, false
	}
	for t := range c.timers {
		return t.at, true
	}
	return time.Time{}, false
}

var errDiskFull = errors.New("write /data/db: no space left on device")

// fullStore fails the writes a full disk refuses: the model's answer (and
// whatever follows it in a turn) and, with wakes set, the wake queue's
// writes too. The turn's small opening writes go through, so each cycle
// calls the model, as it did in production.
type fullStore struct {
	*bolt.Store
	full  atomic.Bool
	wakes bool // wake writes fail too while full
}

func (s *fullStore) Append(ctx context.Context, id string, req core.AppendRequest) ([]core.Event, error) {
	if s.full.Load() {
		for _, e := range req.Events {
			if e.Type != core.TypeTurnStarted && e.Type != core.TypeStatusChanged {
				return nil, errDiskFull
			}
		}
	}
	return s.Store.Append(ctx, id, req)
}

func (s *fullStore) MoveWake(ctx context.Context, id string, at time.Time, epoch uint64) error {
	if s.full.Load() && s.wakes {
		return errDiskFull
	}
	return s.Store.MoveWake(ctx, id, at, epoch)
}

func (s *fullStore) ScheduleWake(ctx context.Context, id string, at time.Time) error {
	if s.full.Load() && s.wakes {
		return errDiskFull
	}
	return s.Store.ScheduleWake(ctx, id, at)
}

func (s *fullStore) ClearWake(ctx context.Context, id string, epoch uint64) error {
	if s.full.Load() && s.wakes {
		return errDiskFull
	}
	return s.Store.ClearWake(ctx, id, epoch)
}

func (s *fullStore) ClearWakeUnlessQueued(ctx context.Context, id string, epoch uint64) (bool, error) {
	if s.full.Load() && s.wakes {
		return false, errDiskFull
	}
	return s.Store.ClearWakeUnlessQueued(ctx, id, epoch)
}

// TestRetryBacksOffWhenTheStoreCannotWrite: a session whose cycles fail on
// the store is retried once per back-off interval (1 s, 2 s, 4 s, capped at
// 4 s here), not in a hot loop, whether or not the store can still write
// its wake; once writes succeed again the turn completes, and the next
// failure starts from the base interval again.
func TestRetryBacksOffWhenTheStoreCannotWrite(t *testing.T) {
	for _, wakes := range []bool{false, true} {
		name := "wake writes succeed"
		if wakes {
			name = "wake writes fail too"
		}
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			clock, st, agent := clockedStore(t)
			model := fakemodel.New()
			model.Default = &fakemodel.Step{Text: "answer"}
			store := &fullStore{Store: st, wakes: wakes}
			store.full.Store(true)
			rt := startClocked(t, runtime.Config{Store: store, Commits: st, Model: model, Workers: 2, Clock: clock,
				RetryAfter: time.Second, MaxRetryAfter: 4 * time.Second})
			id := sessionWith(t, st, agent, "hi")

			// settle waits until the runtime is idle and the scheduler sleeps
			// until want, with calls model calls made; a hot loop makes more
			// calls and fails at once.
			settle := func(calls int, want time.Time) {
				t.Helper()
				deadline := time.After(30 * time.Second)
				for {
					n := len(model.Requests())
					if n > calls {
						t.Fatalf("%d model calls, want %d: the session was retried before its back-off ended", n, calls)
					}
					if at, ok := clock.sleepingUntil(); ok && n == calls && rt.Running() == 0 && at.Equal(want) {
						return
					}
					select {
					case <-clock.armed:
					case <-time.After(10 * time.Millisecond):
					case <-deadline:
						at, _ := clock.sleepingUntil()
						t.Fatalf("runtime never settled: %d model calls (want %d), scheduler sleeping until %v (want %v), %d running", n, calls, at, want, rt.Running())
					}
				}
			}
			start := clock.Now()
			next := start
			for i, wait := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 4 * time.Second} {
				next = next.Add(wait)
				settle(i+1, next)
				if !wakes {
					// The failed cycle moved the wake forward.
					if at, ok, err := st.NextWake(ctx); err != nil || !ok || !at.Equal(next) {
						t.Fatalf("after failure %d the wake is at %v (%v %v), want %v", i+1, at, ok, err, next)
					}
				}
				clock.Advance(wait - time.Millisecond)
				settle(i+1, next) // nothing runs before the back-off ends
				clock.Advance(time.Millisecond)
			}

			// Writes work again: the retry completes the turn.
			store.full.Store(false)
			clock.Advance(4 * time.Second)
			deadline := time.Now().Add(30 * time.Second)
			for {
				s, err := st.GetSession(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				if s.Status == core.StatusIdle && s.StopReason == core.ReasonCompleted && rt.Running() == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("after recovery the session is %s/%s", s.Status, s.StopReason)
				}
				time.Sleep(5 * time.Millisecond)
			}
			if _, ok, _ := st.NextWake(ctx); ok {
				t.Fatal("a wake is left after the turn completed")
			}
			calls := len(model.Requests())

			// A later failure backs off from the base interval again.
			store.full.Store(true)
			if _, err := st.QueueInputs(ctx, id, core.QueueRequest{Inputs: []core.Event{core.NewInput(core.TypeUserMessage, []byte(`{"text":"again"}`))}}); err != nil {
				t.Fatal(err)
			}
			settle(calls+1, clock.Now().Add(time.Second))
		})
	}
}

// clockedStore opens a fresh store on a fake clock, with one agent.
func clockedStore(t *testing.T) (*fakeClock, *bolt.Store, *core.Agent) {
	t.Helper()
	clock := newFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	st, agent := storeWithAgent(t, bolt.Options{Now: clock.Now})
	return clock, st, agent
}

// storeWithAgent opens a fresh store with opts, holding one agent.
func storeWithAgent(t *testing.T, opts bolt.Options) (*bolt.Store, *core.Agent) {
	t.Helper()
	st, err := bolt.Open(filepath.Join(t.TempDir(), "db"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	agent, err := st.CreateAgent(context.Background(), &core.Agent{Name: "a", Model: "anthropic/test"})
	if err != nil {
		t.Fatal(err)
	}
	return st, agent
}

// startClocked starts a runtime of cfg, stopped when the test ends.
func startClocked(t *testing.T, cfg runtime.Config) *runtime.Runtime {
	t.Helper()
	rt := runtime.New(cfg)
	if err := rt.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Stop(context.Background()) })
	return rt
}

// sessionWith creates a session of agent with a user message queued.
func sessionWith(t *testing.T, st *bolt.Store, agent *core.Agent, text string) string {
	t.Helper()
	body, _ := json.Marshal(core.MessageBody{Text: text})
	res, err := st.CreateSession(context.Background(), core.NewSession{Session: core.Session{Agent: core.AgentRef{ID: agent.ID, Version: 1}},
		Inputs: []core.Event{core.NewInput(core.TypeUserMessage, body)}})
	if err != nil {
		t.Fatal(err)
	}
	return res.Session.ID
}
