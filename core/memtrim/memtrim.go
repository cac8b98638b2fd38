// Package memtrim gives the memory a burst of work left behind back to the
// operating system once the process goes quiet.
//
// Go's collector sets each cycle's heap goal from the heap live at the end
// of the last one, and its scavenger returns free pages only down to about
// that goal. When a burst of turns ends, the last cycle ran under load, so
// its goal counts requests in flight as live; and an idle process
// allocates too little to start another cycle for minutes (the runtime
// forces one every two). Until then the pages the burst used stay
// resident though nothing holds them. Run watches the allocation rate and,
// once it falls quiet after a burst, collects and returns free memory at
// once (debug.FreeOSMemory): one full collection per burst, at a moment
// nothing waits on the process. Config.After lets go of memory the Go
// runtime does not own at the same moment.
package memtrim

import (
	"context"
	"log/slog"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// Config tunes Run; the zero value is the defaults.
type Config struct {
	// Every is how often the allocation rate is read (default 1 s).
	Every time.Duration
	// Quiet is the most the process may allocate in one Every and count
	// as quiet (default 1 MiB: an idle gateway renewing leases and
	// answering health checks allocates far less).
	Quiet uint64
	// Burst is how much must have been allocated since the last trim for
	// another to be worth a full collection (default 64 MiB).
	Burst  uint64
	Logger *slog.Logger
	// After run after each trim: memory the runtime does not own, such as
	// a database file's mapped pages, let go at the same quiet moment.
	After []func()

	// Tick, Allocated and Free replace the ticker, the runtime's count of
	// bytes allocated and debug.FreeOSMemory (tests).
	Tick      <-chan time.Time
	Allocated func() uint64
	Free      func()
}

// Run trims until ctx ends.
func Run(ctx context.Context, cfg Config) {
	if cfg.Every <= 0 {
		cfg.Every = time.Second
	}
	if cfg.Quiet == 0 {
		cfg.Quiet = 1 << 20
	}
	if cfg.Burst == 0 {
		cfg.Burst = 64 << 20
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Allocated == nil {
		cfg.Allocated = allocated
	}
	if cfg.Free == nil {
		cfg.Free = debug.FreeOSMemory
	}
	if cfg.Tick == nil {
		t := time.NewTicker(cfg.Every)
		defer t.Stop()
		cfg.Tick = t.C
	}
	w := watch{quiet: cfg.Quiet, burst: cfg.Burst}
	w.reset(cfg.Allocated())
	for {
		select {
		case <-ctx.Done():
			return
		case <-cfg.Tick:
		}
		now := cfg.Allocated()
		if burst, ok := w.tick(now); ok {
			start := time.Now()
			cfg.Free()
			// The collection allocates too: counted from after it, an
			// idle process never reaches another burst on its own.
			w.reset(cfg.Allocated())
			for _, f := range cfg.After {
				f()
			}
			cfg.Logger.Debug("memory returned after a burst", "burst_mb", burst>>20, "duration", time.Since(start))
		}
	}
}

// watch decides, tick by tick, when to trim.
type watch struct {
	quiet, burst  uint64
	last, trimmed uint64 // allocated at the last tick and the last trim
}

func (w *watch) reset(allocated uint64) { w.last, w.trimmed = allocated, allocated }

// tick takes the bytes allocated so far and says whether to trim now:
// the last tick allocated at most quiet, after at least burst since the
// last trim (which it returns).
func (w *watch) tick(allocated uint64) (uint64, bool) {
	quiet := allocated-w.last <= w.quiet
	w.last = allocated
	burst := allocated - w.trimmed
	return burst, quiet && burst >= w.burst
}

// allocated is the bytes the heap has allocated since the process began.
func allocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
