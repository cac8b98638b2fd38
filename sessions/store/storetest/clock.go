package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// RunClock runs the suite of what a store does by its own clock. open
// must return a fresh, empty store whose clock is now and close it when
// the test ends.
func RunClock[S core.Store](t *testing.T, open func(t *testing.T, now func() time.Time) S) {
	t.Run("sweep/follows_clock", func(t *testing.T) { testSweepFollowsClock(t, open) })
}

// testSweepFollowsClock ages keys by the store's clock, at its
// millisecond precision.
func testSweepFollowsClock[S core.Store](t *testing.T, open func(t *testing.T, now func() time.Time) S) {
	ctx := t.Context()
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	s := open(t, clock)
	mk := func(key string) {
		t.Helper()
		if _, err := s.CreateSession(ctx, core.NewSession{Dedupe: []string{key}}); err != nil {
			t.Fatal(err)
		}
	}
	mk("old-1")
	mk("old-2")
	created := clock()
	advance(8 * 24 * time.Hour)
	mk("new-1")
	// A key is not older than the instant it was made at, nor than one
	// within its millisecond.
	for _, before := range []time.Time{created, created.Add(-time.Microsecond)} {
		if n, err := s.Sweep(ctx, before); err != nil || n != 0 {
			t.Fatalf("sweep before %v: %d, %v; want 0", before, n, err)
		}
	}
	n, err := s.Sweep(ctx, created.Add(time.Microsecond))
	if err != nil || n != 2 {
		t.Fatalf("swept %d, %v; want the 2 old keys", n, err)
	}
	for key, wantDup := range map[string]bool{"new-1": true, "old-1": false} {
		res, err := s.CreateSession(ctx, core.NewSession{Dedupe: []string{key}})
		if err != nil || res.Duplicate != wantDup {
			t.Fatalf("%s: duplicate = %v, %v; want %v", key, res.Duplicate, err, wantDup)
		}
	}
}
