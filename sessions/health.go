package sessions

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// writeLogEvery is how often a store that keeps failing to commit says so.
const writeLogEvery = time.Minute

// writeHealth remembers whether the last commit failed (a full disk, an
// I/O error), so readiness can report it, and logs the failure once per
// interval rather than once per attempt: every session's retries would
// otherwise flood the log.
type writeHealth struct {
	log *slog.Logger
	now func() time.Time

	mu       sync.Mutex
	err      error     // the last commit's failure; nil once one succeeds
	since    time.Time // when commits started failing
	loggedAt time.Time
	unlogged int // failures since the last line
}

func (h *writeHealth) failed(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.now()
	if h.err == nil {
		h.since = now
	} else if now.Sub(h.loggedAt) < writeLogEvery {
		h.err = err
		h.unlogged++
		return
	}
	h.err, h.loggedAt = err, now
	h.log.Error("session store cannot write; inputs are refused and sessions wait until it can",
		"failing_since", h.since, "failures_since_last_report", h.unlogged+1, "err", err)
	h.unlogged = 0
}

func (h *writeHealth) succeeded() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err == nil {
		return
	}
	h.log.Info("session store writes again", "failing_since", h.since, "failures_since_last_report", h.unlogged)
	h.err, h.unlogged = nil, 0
}

// WriteErr is the error of the last commit when it failed, nil once a
// commit succeeds: a store that cannot write is not ready.
func (s *Store) WriteErr() error {
	s.health.mu.Lock()
	defer s.health.mu.Unlock()
	return s.health.err
}

// Ready is the store's readiness, as GET /readyz reports it: "ready", or
// why not ("store unavailable": it cannot be read; "store cannot write":
// its last commit failed).
func (s *Store) Ready(ctx context.Context) (status string, ok bool) {
	if _, err := s.CountByStatus(ctx); err != nil {
		return "store unavailable", false
	}
	if s.WriteErr() != nil {
		return "store cannot write", false
	}
	return "ready", true
}
