package console_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// fakeStore is the console's store in memory, with the in-process commit
// stream; it counts list calls and keeps what it was asked.
type fakeStore struct {
	*core.Commits

	mu       sync.Mutex
	signIns  map[string]core.ConsoleSession
	failures map[string][]time.Time
	// signInGate, when set, holds every sign-in after its first call
	// about its address's count until as many have made it: what a check
	// made before the attempt is counted would let through shows.
	signInGate *gate
	hours      []core.HourStats
	counts     map[core.Status]int
	list       core.SessionList
	agents     []*core.Agent
	listCalls  int
	filters    []core.SessionFilter
	statsFrom  time.Time
	statsTo    time.Time
}

func newFakeStore() *fakeStore {
	return &fakeStore{Commits: core.NewCommits(), signIns: map[string]core.ConsoleSession{}, failures: map[string][]time.Time{}, counts: map[core.Status]int{}}
}

func (f *fakeStore) CreateConsoleSession(_ context.Context, s *core.ConsoleSession) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.signIns[s.ID]; ok {
		return fmt.Errorf("console session: %w", core.ErrConflict)
	}
	f.signIns[s.ID] = *s
	return nil
}

func (f *fakeStore) GetConsoleSession(_ context.Context, id string, now time.Time) (*core.ConsoleSession, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.signIns[id]
	if !ok || !now.Before(s.ExpiresAt) {
		return nil, fmt.Errorf("console session: %w", core.ErrNotFound)
	}
	return &s, nil
}

func (f *fakeStore) DeleteConsoleSession(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.signIns, id)
	return nil
}

// gate opens once n callers arrived at it; callers after those pass.
type gate struct {
	mu      sync.Mutex
	n       int
	arrived int
	open    chan struct{}
}

func newGate(n int) *gate { return &gate{n: n, open: make(chan struct{})} }

func (g *gate) arrive() {
	if g == nil {
		return
	}
	g.mu.Lock()
	g.arrived++
	if g.arrived == g.n {
		close(g.open)
	}
	g.mu.Unlock()
	<-g.open
}

func (f *fakeStore) ReserveSignIn(ctx context.Context, address string, now time.Time, window time.Duration, limit int) (bool, error) {
	defer f.signInGate.arrive()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.countLocked(address, now, window) >= limit {
		return false, nil
	}
	f.failures[address] = append(f.failures[address], now)
	return true, nil
}

func (f *fakeStore) ReleaseSignIn(_ context.Context, address string, now time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if i := slices.IndexFunc(f.failures[address], now.Equal); i >= 0 {
		f.failures[address] = slices.Delete(f.failures[address], i, i+1)
	}
	return nil
}

func (f *fakeStore) SignInFailures(_ context.Context, address string, now time.Time, window time.Duration) (int, error) {
	defer f.signInGate.arrive()
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.countLocked(address, now, window), nil
}

func (f *fakeStore) countLocked(address string, now time.Time, window time.Duration) int {
	n := 0
	for _, at := range f.failures[address] {
		if at.After(now.Add(-window)) && !at.After(now) {
			n++
		}
	}
	return n
}

func (f *fakeStore) SweepConsole(context.Context, time.Time) (int, error) { return 0, nil }

func (f *fakeStore) HourlyStats(_ context.Context, from, to time.Time) ([]core.HourStats, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.statsFrom, f.statsTo = from, to
	var out []core.HourStats
	for _, h := range f.hours {
		if !h.Hour.Before(from) && h.Hour.Before(to) {
			out = append(out, h)
		}
	}
	return out, nil
}

func (f *fakeStore) ListSessions(_ context.Context, filter core.SessionFilter) (core.SessionList, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.listCalls++
	f.filters = append(f.filters, filter)
	return f.list, nil
}

func (f *fakeStore) ListAgents(_ context.Context, after string, limit int) ([]*core.Agent, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*core.Agent
	for _, a := range f.agents {
		if a.ID > after {
			out = append(out, a)
		}
	}
	if len(out) > limit {
		return out[:limit], true, nil
	}
	return out, false, nil
}

func (f *fakeStore) CountByStatus(context.Context) (map[core.Status]int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[core.Status]int{}
	for k, v := range f.counts {
		out[k] = v
	}
	return out, nil
}

func (f *fakeStore) signInCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.signIns)
}

func (f *fakeStore) calls() (int, []core.SessionFilter) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.listCalls, append([]core.SessionFilter(nil), f.filters...)
}
