package postgres

import (
	"context"
	"fmt"

	"github.com/switchboardhq/switchboard/sessions/store/record"

	"github.com/jackc/pgx/v5"
	"github.com/switchboardhq/switchboard/core"
)

// externalKeyConstraint makes an external key serve one session: of two
// creators racing on a key, the second fails on it, runs again and finds
// the first's session.
const externalKeyConstraint = "sessions_external_key_key"

// errStripe says a create found its external key served by another session
// than the one it ordered its write by: it runs again ordered by that one,
// so the session's changes are published in commit order.
type errStripe struct{ id string }

func (e *errStripe) Error() string { return "external key now serves session " + e.id }

// CreateSession creates a session or finds the one serving ExternalKey, and
// queues the inputs on it, all in one transaction.
func (s *Store) CreateSession(ctx context.Context, req core.NewSession) (*core.CreateResult, error) {
	return s.createWith(ctx, req, nil)
}

// CreateSessionAndDestinations creates a session as CreateSession does and,
// when it is new, its destinations in the same transaction.
func (s *Store) CreateSessionAndDestinations(ctx context.Context, req core.NewSession, dests []core.NewDestination) (*core.CreateResult, error) {
	return s.createWith(ctx, req, dests)
}

// createWith is CreateSession that also inserts dests, in the same
// transaction, when the session is new.
func (s *Store) createWith(ctx context.Context, req core.NewSession, dests []core.NewDestination) (*core.CreateResult, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	id, inputs, err := record.PrepareCreate(&req, dests)
	if err != nil {
		return nil, err
	}
	var res *core.CreateResult
	err = retryKeys(func() error {
		// The write is ordered by the session it will be about: the one
		// serving the key, if any, else the new one.
		stripe := id
		if req.ExternalKey != "" {
			owner, err := s.keyOwner(ctx, req.ExternalKey)
			if err != nil {
				return err
			}
			if owner != "" {
				stripe = owner
			}
		}
		return s.write(ctx, stripe, func(tx pgx.Tx) ([]core.Change, error) {
			r, ch, err := s.createTx(ctx, tx, req, id, stripe, inputs, dests)
			res = r
			return ch, err
		})
	})
	if err != nil {
		return nil, fmt.Errorf("create session: %w", err)
	}
	return res, nil
}

// keyOwner returns the id of the session serving an external key, "" for
// none.
func (s *Store) keyOwner(ctx context.Context, key string) (string, error) {
	return keyRoutesTo(ctx, s.poolFor(ctx), key)
}

// createTx answers a replay or a duplicate, or creates or finds the session
// and queues the inputs on it. stripe is the session the write is ordered
// by.
func (s *Store) createTx(ctx context.Context, tx pgx.Tx, req core.NewSession, id, stripe string, inputs []core.Event, dests []core.NewDestination) (*core.CreateResult, []core.Change, error) {
	var r *row
	if req.ExternalKey != "" {
		// The key's lock first: a link being added on it waits, or is seen.
		if err := lockOriginKey(ctx, tx, req.ExternalKey); err != nil {
			return nil, nil, err
		}
		var err error
		r, err = scanRow(tx.QueryRow(ctx, `SELECT `+sessionColumns+` FROM sessions WHERE external_key = $1
			OR id = (SELECT session_id FROM session_links WHERE key = $1) FOR UPDATE`, req.ExternalKey))
		if err != nil {
			return nil, nil, err
		}
	}
	replay, dup, err := checkKeys(ctx, tx, req.Idempotency, req.Dedupe)
	if err != nil {
		return nil, nil, err
	}
	if replay != nil {
		return &core.CreateResult{Replay: replay}, nil, nil
	}
	if dup {
		res := &core.CreateResult{Duplicate: true}
		if r != nil {
			res.Session = r.sess
		}
		return res, nil, nil
	}
	switch {
	case r != nil && r.sess.Status == core.StatusArchived:
		return nil, nil, fmt.Errorf("session %s for key %q: %w", r.sess.ID, req.ExternalKey, core.ErrArchived)
	case r == nil && req.OnlyExisting:
		return &core.CreateResult{}, nil, nil
	case r != nil && r.sess.ID != stripe:
		return nil, nil, &errStripe{id: r.sess.ID}
	}
	now := s.clock()
	res := &core.CreateResult{}
	if r == nil {
		r = newRow(req, id, now)
		res.Created = true
		if len(req.StartInputs) > 0 {
			inputs = req.StartInputs
		}
	}
	res.Session = r.sess
	work := &pgx.Batch{}
	if len(inputs) > 0 {
		if res.Inputs, err = r.queue(work, inputs, now); err != nil {
			return nil, nil, err
		}
	}
	queueKeys(work, req.Idempotency, req.Dedupe, now.Time)
	// The session's row first: a taken id or key is the error to report.
	b := &pgx.Batch{}
	if err := r.save(b); err != nil {
		return nil, nil, err
	}
	b.QueuedQueries = append(b.QueuedQueries, work.QueuedQueries...)
	if res.Created && len(dests) > 0 {
		if err := sendSession(ctx, tx, b, id); err != nil {
			return nil, nil, err
		}
		for _, nd := range dests {
			d, err := record.NewDestination(nd, now)
			if err != nil {
				return nil, nil, err
			}
			if err := s.insertDestination(ctx, tx, d, nd.SealedSecret); err != nil {
				return nil, nil, err
			}
		}
		b = &pgx.Batch{}
	}
	r.queueCounts(b)
	if err := sendSession(ctx, tx, b, id); err != nil {
		return nil, nil, err
	}
	return res, []core.Change{r.change(core.Change{Queued: res.Inputs})}, nil
}

// sendSession sends a batch that may insert session id.
func sendSession(ctx context.Context, tx pgx.Tx, b *pgx.Batch, id string) error {
	if b.Len() == 0 {
		return nil
	}
	err := tx.SendBatch(ctx, b).Close()
	if isUnique(err, "sessions_pkey") {
		return fmt.Errorf("session %s already exists: %w", id, core.ErrConflict)
	}
	return err
}

// newRow is a new, empty, idle session; queue moves it to queued when
// there are inputs.
func newRow(req core.NewSession, id string, now core.Time) *row {
	sess := record.NewSession(req, id, now)
	return &row{sess: sess, counts: map[core.Status]int64{core.StatusIdle: 1}, inserted: true, key: req.ExternalKey}
}

// GetSession returns the session record.
func (s *Store) GetSession(ctx context.Context, id string) (*core.Session, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	sess, err := loadSession(ctx, s.poolFor(ctx), id)
	if err != nil {
		return nil, fmt.Errorf("get session: %w", err)
	}
	return sess, nil
}

// SessionByKey returns the session serving an external key.
func (s *Store) SessionByKey(ctx context.Context, key string) (*core.Session, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	var v []byte
	err := s.poolFor(ctx).QueryRow(ctx, `SELECT body FROM sessions WHERE external_key = $1
		OR id = (SELECT session_id FROM session_links WHERE key = $1)`, key).Scan(&v)
	if noRow(err) {
		err = fmt.Errorf("session for key %q: %w", key, core.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("session by key: %w", err)
	}
	return decodeSession(v)
}
