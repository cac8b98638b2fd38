package bolt

import (
	"context"
	"fmt"

	"github.com/switchboardhq/switchboard/sessions/store/record"

	"github.com/switchboardhq/switchboard/core"
	"go.etcd.io/bbolt"
)

// Append appends to the session's log and projects the new events onto the
// session record, in one group-committed transaction.
func (s *Store) Append(ctx context.Context, sessionID string, req core.AppendRequest) ([]core.Event, error) {
	events, err := record.PrepareEvents(req.Events)
	if err != nil {
		return nil, err
	}
	// The read transaction refuses unknown and archived sessions without
	// failing a shared batch, and skips the fsync when there is nothing to
	// append.
	nothing, err := viewOne(ctx, s, "append", func(tx *bbolt.Tx) (bool, error) {
		if err := s.hot.checkWritable(tx, sessionID); err != nil {
			return false, err
		}
		return len(events) == 0 && (!req.TakeInputs || pendingEmpty(tx, sessionID)), nil
	})
	if err != nil || nothing {
		return nil, err
	}
	return writeSession(ctx, s, "append", func(tx *bbolt.Tx) ([]core.Event, []core.Change, error) {
		return s.appendTx(tx, sessionID, req, events)
	})
}

func (s *Store) appendTx(tx *bbolt.Tx, sessionID string, req core.AppendRequest, events []record.LogEvent) ([]core.Event, []core.Change, error) {
	sess, err := s.hot.loadHot(tx, sessionID)
	if err != nil {
		return nil, nil, err
	}
	if err := checkEpoch(tx, sessionID, req.Epoch); err != nil {
		return nil, nil, err
	}
	before := sess.Status
	var taken []core.Event
	if req.TakeInputs {
		if taken, err = takeInputs(tx, sessionID); err != nil {
			return nil, nil, err
		}
	}
	now := s.clock()
	a := record.Append(sess, taken, events, req, now)
	if len(a.Events) == 0 {
		return nil, nil, nil // another appender took the inputs first
	}
	if err := logEvents(tx, sessionID, a.Events); err != nil {
		return nil, nil, err
	}
	if err := s.applyAppend(tx, sess, a, req.Holder); err != nil {
		return nil, nil, err
	}
	if err := s.enqueueDeliveries(tx, sess, a.Events, now); err != nil {
		return nil, nil, err
	}
	raw, err := putSession(tx, sess)
	if err != nil {
		return nil, nil, err
	}
	change := changeOf(sess, before, core.Change{Events: a.Events})
	s.hot.put(sess, raw)
	return a.Events, []core.Change{change}, nil
}

// applyAppend writes what an append does beside its log: the session's
// status, the turn's lease and the sinks' marks, the hourly counters, and
// the wake a completed turn no longer needs unless inputs wait.
func (s *Store) applyAppend(tx *bbolt.Tx, sess *core.Session, a record.Appended, holder string) error {
	if err := s.setStatus(tx, sess, a.Status); err != nil {
		return err
	}
	leases := bkt(tx, bucketLeases)
	switch a.Lease {
	case record.LeaseReleased:
		if err := leases.Delete([]byte(sess.ID)); err != nil {
			return err
		}
	case record.LeaseTaken:
		if err := leases.Put([]byte(sess.ID), []byte(holder)); err != nil {
			return err
		}
	}
	if a.MarkSinks {
		for _, sink := range core.SinkProviders(sess) {
			if record.ValidSink(sink, sess.ID) != nil {
				continue
			}
			if err := bkt(tx, bucketSinkActive).Put(sinkKey(sink, sess.ID), nil); err != nil {
				return err
			}
		}
	}
	for _, c := range a.Completed {
		if err := countTurn(tx, c.Event, c.Done); err != nil {
			return err
		}
	}
	if len(a.Completed) > 0 && pendingEmpty(tx, sess.ID) {
		return clearWake(tx, sess.ID)
	}
	return nil
}

// Events returns logged events with seq > after, at most limit (0: all).
func (s *Store) Events(ctx context.Context, sessionID string, after uint64, limit int) ([]core.Event, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	out := []core.Event{}
	err := s.db.View(func(tx *bbolt.Tx) error {
		if err := sessionExists(tx, sessionID); err != nil {
			return err
		}
		return eachLogged(tx, sessionID, after, func(seq uint64, v []byte) (bool, error) {
			if limit > 0 && len(out) == limit {
				return false, nil
			}
			e, err := record.DecodeEvent("event", v)
			if err != nil {
				return false, fmt.Errorf("seq %d: %w", seq, err)
			}
			out = append(out, *e)
			return true, nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("events: %w", err)
	}
	return out, nil
}
