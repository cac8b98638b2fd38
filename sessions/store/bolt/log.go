package bolt

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"

	"github.com/switchboardhq/switchboard/sessions/store/record"

	"github.com/switchboardhq/switchboard/core"
	"go.etcd.io/bbolt"
)

// Append appends to the session's log and projects the new events onto the
// session record, in one group-committed transaction.
func (s *Store) Append(ctx context.Context, sessionID string, req core.AppendRequest) ([]core.Event, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	events, err := record.PrepareEvents(req.Events)
	if err != nil {
		return nil, err
	}
	// The read transaction refuses unknown and archived sessions without
	// failing a shared batch, and skips the fsync when there is nothing to
	// append.
	nothing := false
	err = s.db.View(func(tx *bbolt.Tx) error {
		if _, err := loadWritable(tx, sessionID); err != nil {
			return err
		}
		nothing = len(events) == 0 && (!req.TakeInputs || pendingEmpty(tx, sessionID))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("append: %w", err)
	}
	if nothing {
		return nil, nil
	}
	var out []core.Event
	err = s.commit.write(func(tx *bbolt.Tx) ([]core.Change, error) {
		out = nil // bbolt may run this more than once
		r, ch, err := s.appendTx(tx, sessionID, req, events)
		out = r
		return ch, err
	})
	if err != nil {
		return nil, fmt.Errorf("append: %w", err)
	}
	return out, nil
}

func pendingEmpty(tx *bbolt.Tx, sessionID string) bool {
	pending := bkt(tx, bucketPending).Bucket([]byte(sessionID))
	if pending == nil {
		return true
	}
	k, _ := pending.Cursor().First()
	return k == nil
}

// takeInputs removes the queued inputs up to and including the first
// interrupt, so the harness can stop at it, and returns them in order.
func takeInputs(tx *bbolt.Tx, sessionID string) ([]core.Event, error) {
	pending := bkt(tx, bucketPending).Bucket([]byte(sessionID))
	if pending == nil {
		return nil, nil
	}
	var out []core.Event
	var keys [][]byte
	c := pending.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		var e core.Event
		if err := json.Unmarshal(v, &e); err != nil {
			return nil, fmt.Errorf("decode pending input: %w", err)
		}
		out = append(out, e)
		keys = append(keys, append([]byte{}, k...))
		if e.Type == core.TypeUserInterrupt {
			break
		}
	}
	for _, k := range keys {
		if err := pending.Delete(k); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (s *Store) appendTx(tx *bbolt.Tx, sessionID string, req core.AppendRequest, events []record.LogEvent) ([]core.Event, []core.Change, error) {
	sess, err := loadWritable(tx, sessionID)
	if err != nil {
		return nil, nil, err
	}
	if err := checkEpoch(tx, sessionID, req.Epoch); err != nil {
		return nil, nil, err
	}
	before := sess.Status
	log, err := bkt(tx, bucketLogs).CreateBucketIfNotExists([]byte(sessionID))
	if err != nil {
		return nil, nil, fmt.Errorf("log of %s: %w", sessionID, err)
	}
	log.FillPercent = 1 // keys only ever grow; pack the pages
	now := s.clock()
	var out []core.Event
	put := func(e core.Event) error {
		sess.LastSeq++
		e.Seq = sess.LastSeq
		v, err := core.EncodeJSON(&e)
		if err != nil {
			return fmt.Errorf("encode event %s: %w", e.ID, err)
		}
		out = append(out, e)
		return log.Put(u64(e.Seq), v)
	}
	if req.TakeInputs {
		taken, err := takeInputs(tx, sessionID)
		if err != nil {
			return nil, nil, err
		}
		for _, e := range taken {
			e.ProcessedAt = now.Ptr()
			if req.TurnID != "" {
				e.TurnID = req.TurnID
			}
			if err := put(e); err != nil {
				return nil, nil, err
			}
		}
	}
	for _, le := range events {
		e := le.Ev
		e.SessionID = sessionID
		if e.CreatedAt.IsZero() {
			e.CreatedAt = now
		}
		if e.TurnID == "" {
			e.TurnID = req.TurnID
		}
		if err := put(e); err != nil {
			return nil, nil, err
		}
		record.FollowResult(sess, le, e)
		if err := s.project(tx, sess, le, e, req.Holder); err != nil {
			return nil, nil, err
		}
	}
	if len(out) == 0 {
		return nil, nil, nil // another appender took the inputs first
	}
	if err := s.enqueueDeliveries(tx, sess, out, now); err != nil {
		return nil, nil, err
	}
	sess.UpdatedAt = now
	if err := saveSession(tx, sess); err != nil {
		return nil, nil, err
	}
	return out, []core.Change{changeOf(sess, before, core.Change{Events: out})}, nil
}

// project folds one logged event into the session record.
func (s *Store) project(tx *bbolt.Tx, sess *core.Session, le record.LogEvent, e core.Event, holder string) error {
	switch {
	case le.Status != nil:
		sess.StopReason = le.Status.StopReason
		switch record.FollowPause(sess, le.Status) {
		case record.LeaseReleased:
			if err := bkt(tx, bucketLeases).Delete([]byte(sess.ID)); err != nil {
				return err
			}
		case record.LeaseTaken:
			if holder != "" {
				if err := bkt(tx, bucketLeases).Put([]byte(sess.ID), []byte(holder)); err != nil {
					return err
				}
			}
		}
		return s.setStatus(tx, sess, le.Status.Status)
	case e.Type == core.TypeTurnStarted:
		sess.TurnID = e.TurnID
		sess.PendingAction = nil
		// The origin's output sink may be behind on this session from now
		// on: marked in the transaction that opens the turn, so a crash
		// after it cannot lose the turn's output.
		// Every sink the turn may answer through: its origin's, its links'.
		for _, sink := range core.SinkProviders(sess) {
			if record.ValidSink(sink, sess.ID) != nil {
				continue
			}
			if err := bkt(tx, bucketSinkActive).Put(sinkKey(sink, sess.ID), nil); err != nil {
				return err
			}
		}
		return bkt(tx, bucketLeases).Put([]byte(sess.ID), []byte(holder))
	case le.Done != nil:
		sess.Usage = sess.Usage.Add(le.Done.Usage)
		sess.CostUSD = core.AddCost(sess.CostUSD, le.Done.CostUSD)
		sess.PendingAction = nil
		if le.Done.YieldReason == core.ReasonRequiresAction {
			sess.PendingAction = &core.PendingAction{ToolUseIDs: append([]string{}, le.Done.PendingToolUseIDs...)}
		}
		sess.TurnID = ""
		if err := bkt(tx, bucketLeases).Delete([]byte(sess.ID)); err != nil {
			return err
		}
		if err := countTurn(tx, e, le.Done); err != nil {
			return err
		}
		if pendingEmpty(tx, sess.ID) {
			return clearWake(tx, sess.ID)
		}
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
		if _, err := loadSession(tx, sessionID); err != nil {
			return err
		}
		log := bkt(tx, bucketLogs).Bucket([]byte(sessionID))
		if log == nil || after == math.MaxUint64 {
			return nil
		}
		c := log.Cursor()
		for k, v := c.Seek(u64(after + 1)); k != nil; k, v = c.Next() {
			if limit > 0 && len(out) == limit {
				return nil
			}
			var e core.Event
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("decode event %d: %w", binary.BigEndian.Uint64(k), err)
			}
			out = append(out, e)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("events: %w", err)
	}
	return out, nil
}
