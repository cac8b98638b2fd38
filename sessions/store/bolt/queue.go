package bolt

import (
	"context"
	"fmt"

	"github.com/switchboardhq/switchboard/sessions/store/record"

	"github.com/switchboardhq/switchboard/core"
	"go.etcd.io/bbolt"
)

// queue stores inputs in the session's queue in order, marks the session
// queued unless a turn is running, and schedules a wake now. It works on
// a copy of inputs so a re-run batch starts from the same state. The
// record it saves is kept in the cache as a copy, so sess stays the
// caller's.
func (s *Store) queue(tx *bbolt.Tx, sess *core.Session, inputs []core.Event, now core.Time) ([]core.Event, error) {
	out, status := record.Queue(sess, inputs, now)
	for _, e := range out {
		v, err := record.Encode("input", e.ID, &e)
		if err != nil {
			return nil, err
		}
		if err := enqueue(tx, sess.ID, v); err != nil {
			return nil, err
		}
	}
	if err := keepFirstText(tx, sess.ID, out); err != nil {
		return nil, err
	}
	if err := s.setStatus(tx, sess, status); err != nil {
		return nil, err
	}
	raw, err := putSession(tx, sess)
	if err != nil {
		return nil, err
	}
	if err := scheduleWake(tx, sess.ID, now.Time); err != nil {
		return nil, err
	}
	s.hot.put(sess.Clone(), raw)
	return out, nil
}

// QueueInputs durably queues inputs on an existing session.
func (s *Store) QueueInputs(ctx context.Context, sessionID string, req core.QueueRequest) (*core.QueueResult, error) {
	inputs, err := record.PrepareQueue(req)
	if err != nil {
		return nil, err
	}
	return answerOrWrite(ctx, s, "queue inputs", func(tx *bbolt.Tx) (*core.QueueResult, error) {
		res, _, err := s.queueInputs(tx, sessionID, req, nil, false)
		return res, err
	}, func(tx *bbolt.Tx) (*core.QueueResult, []core.Change, error) {
		return s.queueInputs(tx, sessionID, req, inputs, true)
	})
}

// queueInputs returns a result only when the request is a replay or a
// duplicate, or, with write set, once the inputs are queued.
func (s *Store) queueInputs(tx *bbolt.Tx, sessionID string, req core.QueueRequest, inputs []core.Event, write bool) (*core.QueueResult, []core.Change, error) {
	replay, dup, err := checkKeys(tx, req.Idempotency, req.Dedupe)
	if err != nil {
		return nil, nil, err
	}
	if replay != nil || dup {
		sess, _ := loadSession(tx, sessionID) // informative only
		return &core.QueueResult{Session: sess, Duplicate: dup, Replay: replay}, nil, nil
	}
	if !write && !(req.AnswersPending && record.HasToolAnswer(req.Inputs)) {
		// Nothing to check against the record: the API's inputs, a
		// thread's replies.
		return nil, nil, s.hot.checkWritable(tx, sessionID)
	}
	// A write takes the record from, and gives it back to, the cache the
	// appends keep: a thread's replies queue on sessions whose turns run.
	load := loadWritable
	if write {
		load = s.hot.loadHot
	}
	sess, err := load(tx, sessionID)
	if err != nil {
		return nil, nil, err
	}
	if req.AnswersPending {
		if err := record.AnswersPending(sess, req.Inputs); err != nil {
			return nil, nil, err
		}
	}
	if !write {
		return nil, nil, nil
	}
	before := sess.Status
	now := s.clock()
	queued, err := s.queue(tx, sess, inputs, now)
	if err != nil {
		return nil, nil, err
	}
	if err := recordKeys(tx, req.Idempotency, req.Dedupe, now.Time); err != nil {
		return nil, nil, err
	}
	return &core.QueueResult{Session: sess, Inputs: queued}, []core.Change{changeOf(sess, before, core.Change{Queued: queued})}, nil
}

// changeOf completes what a write did to sess for the commit stream; before
// is the session's status when the write began ("" for a new session).
func changeOf(sess *core.Session, before core.Status, c core.Change) core.Change {
	c.SessionID = sess.ID
	if sess.Origin != nil {
		c.Provider = sess.Origin.Provider
	}
	c.Sinks = core.SinkProviders(sess)
	if sess.Status != before {
		c.Status = sess.Status
	}
	return c
}

// Pending returns the queued inputs not yet in the log, in queue order.
func (s *Store) Pending(ctx context.Context, sessionID string) ([]core.Event, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	out := []core.Event{}
	err := s.db.View(func(tx *bbolt.Tx) error {
		if err := sessionExists(tx, sessionID); err != nil {
			return err
		}
		return eachQueued(tx, sessionID, func(_ uint64, v []byte) (bool, error) {
			e, err := record.DecodeEvent("pending input", v)
			if err != nil {
				return false, err
			}
			out = append(out, *e)
			return true, nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("pending inputs: %w", err)
	}
	return out, nil
}
