// Package writehealth remembers whether a store's last commit failed (a full
// disk, an I/O error, a database that went away), so readiness can report
// it, and logs the failure once per interval rather than once per attempt:
// every session's retries would otherwise flood the log. Both session
// stores (bbolt and PostgreSQL) keep one.
package writehealth

import (
	"log/slog"
	"sync"
	"time"
)

// LogEvery is how often a store that keeps failing to commit says so.
const LogEvery = time.Minute

// Health is the state of a store's commits. Its zero value is not usable:
// make one with New.
type Health struct {
	log *slog.Logger
	now func() time.Time

	mu       sync.Mutex
	err      error     // the last commit's failure; nil once one succeeds
	since    time.Time // when commits started failing
	loggedAt time.Time
	unlogged int // failures since the last line
}

// New returns the health of a store that logs to log and reads the time
// from now.
func New(log *slog.Logger, now func() time.Time) *Health {
	return &Health{log: log, now: now}
}

// Failed records a commit that failed.
func (h *Health) Failed(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.now()
	if h.err == nil {
		h.since = now
	} else if now.Sub(h.loggedAt) < LogEvery {
		h.err = err
		h.unlogged++
		return
	}
	h.err, h.loggedAt = err, now
	h.log.Error("session store cannot write; inputs are refused and sessions wait until it can",
		"failing_since", h.since, "failures_since_last_report", h.unlogged+1, "err", err)
	h.unlogged = 0
}

// Succeeded records a commit that succeeded.
func (h *Health) Succeeded() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err == nil {
		return
	}
	h.log.Info("session store writes again", "failing_since", h.since, "failures_since_last_report", h.unlogged)
	h.err, h.unlogged = nil, 0
}

// Err is the error of the last commit when it failed, nil once a commit
// succeeds.
func (h *Health) Err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}
