package bolt

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/switchboardhq/switchboard/sessions/store/record"

	"github.com/switchboardhq/switchboard/core"
	"go.etcd.io/bbolt"
)

func loadSession(tx *bbolt.Tx, id string) (*core.Session, error) {
	v := bkt(tx, bucketSessions).Get([]byte(id))
	if v == nil {
		return nil, fmt.Errorf("session %s: %w", id, core.ErrNotFound)
	}
	return record.Decode[core.Session]("session", v)
}

// sessionExists is loadSession's refusal of an unknown session, for a
// read that needs the session's other buckets, not its record: it decodes
// nothing.
func sessionExists(tx *bbolt.Tx, id string) error {
	if bkt(tx, bucketSessions).Get([]byte(id)) == nil {
		return fmt.Errorf("session %s: %w", id, core.ErrNotFound)
	}
	return nil
}

// loadWritable loads a session that may still change.
func loadWritable(tx *bbolt.Tx, id string) (*core.Session, error) {
	sess, err := loadSession(tx, id)
	if err != nil {
		return nil, err
	}
	if sess.Status == core.StatusArchived {
		return nil, fmt.Errorf("session %s: %w", id, core.ErrArchived)
	}
	return sess, nil
}

func saveSession(tx *bbolt.Tx, sess *core.Session) error {
	_, err := putSession(tx, sess)
	return err
}

// putSession is saveSession that returns the bytes stored.
func putSession(tx *bbolt.Tx, sess *core.Session) ([]byte, error) {
	v, err := record.EncodeSession(sess)
	if err != nil {
		return nil, err
	}
	return v, bkt(tx, bucketSessions).Put([]byte(sess.ID), v)
}

// addCount moves a status count by delta; a count of zero is deleted, so
// the bucket only ever holds the statuses in use.
func (s *Store) addCount(tx *bbolt.Tx, st core.Status, delta int64) error {
	counts := bkt(tx, bucketStatusCounts)
	var n int64
	if v := counts.Get([]byte(st)); len(v) == 8 {
		n = int64(binary.BigEndian.Uint64(v))
	}
	n += delta
	if n < 0 {
		s.log.Warn("status count went negative; clamped", "status", st, "count", n)
		n = 0
	}
	if n == 0 {
		return counts.Delete([]byte(st))
	}
	return counts.Put([]byte(st), u64(uint64(n)))
}

// setStatus changes sess.Status and keeps the counts in step.
func (s *Store) setStatus(tx *bbolt.Tx, sess *core.Session, st core.Status) error {
	if sess.Status == st {
		return nil
	}
	if err := s.addCount(tx, sess.Status, -1); err != nil {
		return err
	}
	if err := s.addCount(tx, st, 1); err != nil {
		return err
	}
	sess.Status = st
	return nil
}

// CreateSession creates a session or finds the one serving ExternalKey, and
// queues the inputs on it, all in one group-committed transaction.
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
	id, inputs, err := record.PrepareCreate(&req, dests)
	if err != nil {
		return nil, err
	}
	return answerOrWrite(ctx, s, "create session", func(tx *bbolt.Tx) (*core.CreateResult, error) {
		res, _, err := s.createSession(tx, req, id, nil, false)
		return res, err
	}, func(tx *bbolt.Tx) (*core.CreateResult, []core.Change, error) {
		r, ch, err := s.createSession(tx, req, id, inputs, true)
		if err != nil || !r.Created {
			return r, ch, err
		}
		now := s.clock()
		for _, nd := range dests {
			d, err := record.NewDestination(nd, now)
			if err != nil {
				return nil, nil, err
			}
			if err := s.insertDestination(tx, d, nd.SealedSecret); err != nil {
				return nil, nil, err
			}
		}
		return r, ch, nil
	})
}

// createSession returns a result only for a replay or a duplicate, or, with
// write set, once the session is created or found and the inputs queued.
func (s *Store) createSession(tx *bbolt.Tx, req core.NewSession, id string, inputs []core.Event, write bool) (*core.CreateResult, []core.Change, error) {
	replay, dup, err := checkKeys(tx, req.Idempotency, req.Dedupe)
	if err != nil {
		return nil, nil, err
	}
	if replay != nil {
		return &core.CreateResult{Replay: replay}, nil, nil
	}
	var existing *core.Session
	if req.ExternalKey != "" {
		if sid := bkt(tx, bucketSessionKeys).Get([]byte(req.ExternalKey)); sid != nil {
			if existing, err = loadSession(tx, string(sid)); err != nil {
				return nil, nil, err
			}
		}
	}
	if dup {
		return &core.CreateResult{Session: existing, Duplicate: true}, nil, nil
	}
	if existing != nil && existing.Status == core.StatusArchived {
		return nil, nil, fmt.Errorf("session %s for key %q: %w", existing.ID, req.ExternalKey, core.ErrArchived)
	}
	if existing == nil && req.OnlyExisting {
		return &core.CreateResult{}, nil, nil
	}
	if !write {
		return nil, nil, nil
	}
	now := s.clock()
	res := &core.CreateResult{Session: existing}
	var before core.Status
	if existing == nil {
		sess, err := s.insertSession(tx, req, id, now)
		if err != nil {
			return nil, nil, err
		}
		res.Session, res.Created = sess, true
		if len(req.StartInputs) > 0 {
			inputs = req.StartInputs
		}
	} else {
		before = existing.Status
	}
	if len(inputs) > 0 {
		if res.Inputs, err = s.queue(tx, res.Session, inputs, now); err != nil {
			return nil, nil, err
		}
	}
	if err := recordKeys(tx, req.Idempotency, req.Dedupe, now.Time); err != nil {
		return nil, nil, err
	}
	return res, []core.Change{changeOf(res.Session, before, core.Change{Queued: res.Inputs})}, nil
}

// insertSession writes a new, empty session and claims its external key.
func (s *Store) insertSession(tx *bbolt.Tx, req core.NewSession, id string, now core.Time) (*core.Session, error) {
	if bkt(tx, bucketSessions).Get([]byte(id)) != nil {
		return nil, fmt.Errorf("session %s already exists: %w", id, core.ErrConflict)
	}
	sess := record.NewSession(req, id, now)
	if req.ExternalKey != "" {
		if err := bkt(tx, bucketSessionKeys).Put([]byte(req.ExternalKey), []byte(id)); err != nil {
			return nil, err
		}
	}
	if err := s.addCount(tx, sess.Status, 1); err != nil {
		return nil, err
	}
	if err := indexSession(tx, sess); err != nil {
		return nil, err
	}
	// queue() moves it to queued when there are inputs.
	return sess, saveSession(tx, sess)
}

// GetSession returns the session record.
func (s *Store) GetSession(ctx context.Context, id string) (*core.Session, error) {
	return viewOne(ctx, s, "get session", func(tx *bbolt.Tx) (*core.Session, error) { return s.hot.read(tx, id) })
}

// SessionByKey returns the session serving an external key.
func (s *Store) SessionByKey(ctx context.Context, key string) (*core.Session, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	var out *core.Session
	err := s.db.View(func(tx *bbolt.Tx) error {
		sid := bkt(tx, bucketSessionKeys).Get([]byte(key))
		if sid == nil {
			return fmt.Errorf("session for key %q: %w", key, core.ErrNotFound)
		}
		var err error
		out, err = loadSession(tx, string(sid))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("session by key: %w", err)
	}
	return out, nil
}
