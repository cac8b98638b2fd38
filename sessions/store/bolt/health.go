package bolt

import (
	"context"
)

// WriteErr is the error of the last commit when it failed, nil once a
// commit succeeds: a store that cannot write is not ready.
func (s *Store) WriteErr() error {
	return s.health.Err()
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
