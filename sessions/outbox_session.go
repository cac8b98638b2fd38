package sessions

import (
	"context"
	"fmt"

	"github.com/switchboardhq/switchboard/core"
	bolt "go.etcd.io/bbolt"
)

// CreateSessionAndDestinations creates a session as CreateSession does and,
// when it is new, its destinations in the same transaction.
func (s *Store) CreateSessionAndDestinations(ctx context.Context, req core.NewSession, dests []core.NewDestination) (*core.CreateResult, error) {
	if len(dests) == 0 {
		return s.CreateSession(ctx, req)
	}
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	if err := validateKeys(req.Idempotency, req.Dedupe); err != nil {
		return nil, err
	}
	inputs, err := prepareInputs(req.Inputs)
	if err != nil {
		return nil, err
	}
	id := req.Session.ID
	if id == "" {
		id = core.NewID(core.PrefixSession)
	}
	for i := range dests {
		if dests[i].Destination.SessionID != id {
			return nil, fmt.Errorf("create session: destination %d names session %q, not %q: %w", i, dests[i].Destination.SessionID, id, core.ErrInvalid)
		}
		if err := checkDestination(&dests[i].Destination); err != nil {
			return nil, fmt.Errorf("create session: %w", err)
		}
	}
	var res *core.CreateResult
	err = s.db.View(func(tx *bolt.Tx) error {
		var err error
		res, err = s.createSession(tx, req, id, nil, false)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("create session: %w", err)
	}
	if res != nil {
		return res, nil
	}
	err = s.commit.do(func(tx *bolt.Tx) error {
		res = nil // the committer may run this more than once
		r, err := s.createSession(tx, req, id, inputs, true)
		if err != nil || !r.Created {
			res = r
			return err
		}
		now := s.clock()
		for _, nd := range dests {
			if _, err := s.insertDestination(tx, nd, now); err != nil {
				return err
			}
		}
		res = r
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("create session: %w", err)
	}
	return res, nil
}
