package memtrim

import (
	"context"
	"testing"
	"time"
)

// TestWatchTrimsOnceAfterABurst: a trim comes at the first quiet tick
// after at least a burst was allocated, never while allocation goes on,
// never on a process that stays quiet, and once per burst.
func TestWatchTrimsOnceAfterABurst(t *testing.T) {
	const quiet, burst = 100, 1000
	cases := []struct {
		name  string
		ticks []uint64 // allocated during each tick
		trim  []bool
	}{
		{"idle stays untouched", []uint64{10, 10, 10, 10}, []bool{false, false, false, false}},
		{"busy is not quiet", []uint64{600, 600, 600}, []bool{false, false, false}},
		{"quiet after a burst", []uint64{600, 600, 50, 50, 50}, []bool{false, false, true, false, false}},
		{"a small burst waits for more", []uint64{500, 50, 600, 50}, []bool{false, false, false, true}},
		{"each burst once", []uint64{1200, 0, 1200, 0, 0}, []bool{false, true, false, true, false}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var w watch
			w.quiet, w.burst = quiet, burst
			allocated := uint64(5000)
			w.reset(allocated)
			for i, a := range c.ticks {
				allocated += a
				_, trim := w.tick(allocated)
				if trim != c.trim[i] {
					t.Fatalf("tick %d (allocated %d): trim %v, want %v", i, a, trim, c.trim[i])
				}
				if trim {
					w.reset(allocated)
				}
			}
		})
	}
}

// TestRunFreesAfterABurst drives Run with a fake ticker and allocation
// count: a burst then a quiet tick frees once.
func TestRunFreesAfterABurst(t *testing.T) {
	tick := make(chan time.Time)
	allocs := make(chan uint64, 1)
	freed := make(chan struct{}, 10)
	var allocated uint64
	after := 0 // read after done closes
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	// Run reads the count once before its first tick: the value is there
	// before Run starts, or Run could read the default first and leave
	// the test's next send waiting on a read that never comes.
	allocs <- 0
	go func() {
		defer close(done)
		Run(ctx, Config{Quiet: 100, Burst: 1000, Tick: tick,
			// Only Run's goroutine reads allocated, after the test sent
			// its next value.
			Allocated: func() uint64 {
				select {
				case a := <-allocs:
					allocated = a
				default:
				}
				return allocated
			},
			Free:  func() { freed <- struct{}{} },
			After: []func(){func() { after++ }}})
	}()
	for _, a := range []uint64{600, 1200, 1250} {
		// allocs holds one value: the send waits until the last was read.
		allocs <- a
		tick <- time.Time{}
	}
	tick <- time.Time{} // the loop took the last tick and is back
	cancel()
	<-done
	if len(freed) != 1 || after != 1 {
		t.Fatalf("freed %d times and ran After %d times, want once each", len(freed), after)
	}
}
