package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	"github.com/switchboardhq/switchboard/sessions/store/record"

	"github.com/switchboardhq/switchboard/core"
	"go.etcd.io/bbolt"
)

func streamKey(st core.Stream) []byte {
	return append([]byte(st.DestinationID), st.SessionID...)
}

func queueKey(st core.Stream, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(streamKey(st), seq)
}

func dueKey(at time.Time, st core.Stream) []byte {
	return append(u64(unixNanos(at)), streamKey(st)...)
}

// splitStream reads a stream key (destination id ‖ session id).
func splitStream(k []byte) (core.Stream, bool) {
	if len(k) <= idLen {
		return core.Stream{}, false
	}
	return core.Stream{DestinationID: string(k[:idLen]), SessionID: string(k[idLen:])}, true
}

func loadDelivery(tx *bbolt.Tx, id string) (*core.Delivery, error) {
	v := bkt(tx, bucketDeliveries).Get([]byte(id))
	if v == nil {
		return nil, fmt.Errorf("delivery %s: %w", id, core.ErrNotFound)
	}
	return record.DecodeDelivery(v)
}

func saveDelivery(tx *bbolt.Tx, d *core.Delivery) error {
	return bkt(tx, bucketDeliveries).Put([]byte(d.ID), record.EncodeDelivery(d))
}

// destMatch is a destination whose filter Append evaluates.
type destMatch struct {
	id     string
	filter storedFilter
}

// matchingDestinations reads the global destinations and the session's.
func matchingDestinations(tx *bbolt.Tx, sessionID string) ([]destMatch, error) {
	var out []destMatch
	b := bkt(tx, bucketDestinationFilters)
	for _, prefix := range [][]byte{{scopeGlobal}, append([]byte{scopeSession}, sessionID...)} {
		c := b.Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			if len(k) != len(prefix)+idLen {
				continue
			}
			m := destMatch{id: string(k[len(prefix):])}
			if err := json.Unmarshal(v, &m.filter); err != nil {
				return nil, fmt.Errorf("decode filter of %s: %w", m.id, err)
			}
			out = append(out, m)
		}
	}
	return out, nil
}

// enqueueDeliveries queues a delivery of each logged event for every
// destination it passes, inside Append's transaction: the log and the
// delivery queue commit together, so a crash neither loses nor invents one.
func (s *Store) enqueueDeliveries(tx *bbolt.Tx, sess *core.Session, events []core.Event, now core.Time) error {
	dests, err := matchingDestinations(tx, sess.ID)
	if err != nil || len(dests) == 0 {
		return err
	}
	for _, e := range events {
		for _, m := range dests {
			if !m.filter.Match(sess.Agent.ID, e) {
				continue
			}
			st := core.Stream{DestinationID: m.id, SessionID: sess.ID}
			seq, err := bkt(tx, bucketDeliveries).NextSequence()
			if err != nil {
				return err
			}
			d := record.NewDelivery(m.id, sess, e, seq, now)
			if err := insertDelivery(tx, d); err != nil {
				return err
			}
			if err := bkt(tx, bucketOutbox).Put(queueKey(st, e.Seq), []byte(d.ID)); err != nil {
				return err
			}
			// A stream already scheduled keeps its time: its first
			// delivery may be waiting out a backoff, and this one is
			// behind it.
			if !m.filter.Paused && bkt(tx, bucketOutboxStreams).Get(streamKey(st)) == nil {
				if err := schedule(tx, st, now.Time); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func insertDelivery(tx *bbolt.Tx, d *core.Delivery) error {
	if err := saveDelivery(tx, d); err != nil {
		return err
	}
	if err := bkt(tx, bucketDeliveriesByDest).Put(append([]byte(d.DestinationID), d.ID...), nil); err != nil {
		return err
	}
	return bkt(tx, bucketDeliveriesBySess).Put(append([]byte(d.SessionID), d.ID...), nil)
}

// schedule makes a stream due at at, replacing its previous time.
func schedule(tx *bbolt.Tx, st core.Stream, at time.Time) error {
	if err := unschedule(tx, st); err != nil {
		return err
	}
	k := dueKey(at, st)
	if err := bkt(tx, bucketOutboxDue).Put(k, nil); err != nil {
		return err
	}
	return bkt(tx, bucketOutboxStreams).Put(streamKey(st), k)
}

func unschedule(tx *bbolt.Tx, st core.Stream) error {
	streams := bkt(tx, bucketOutboxStreams)
	if old := streams.Get(streamKey(st)); old != nil {
		if err := bkt(tx, bucketOutboxDue).Delete(old); err != nil {
			return err
		}
		return streams.Delete(streamKey(st))
	}
	return nil
}

// unscheduleDestination takes every stream of a destination off the due
// index.
func unscheduleDestination(tx *bbolt.Tx, destID string) error {
	var streams []core.Stream
	c := bkt(tx, bucketOutboxStreams).Cursor()
	for k, _ := c.Seek([]byte(destID)); k != nil && bytes.HasPrefix(k, []byte(destID)); k, _ = c.Next() {
		if st, ok := splitStream(k); ok {
			streams = append(streams, st)
		}
	}
	for _, st := range streams {
		if err := unschedule(tx, st); err != nil {
			return err
		}
	}
	return nil
}

// destinationStreams yields the streams of a destination that have queued
// deliveries, each once.
func destinationStreams(tx *bbolt.Tx, destID string) func(yield func(core.Stream) bool) {
	return func(yield func(core.Stream) bool) {
		var streams []core.Stream
		last := ""
		c := bkt(tx, bucketOutbox).Cursor()
		for k, _ := c.Seek([]byte(destID)); k != nil && bytes.HasPrefix(k, []byte(destID)); k, _ = c.Next() {
			if len(k) <= idLen+8 {
				continue
			}
			sid := string(k[idLen : len(k)-8])
			if sid != last {
				streams = append(streams, core.Stream{DestinationID: destID, SessionID: sid})
				last = sid
			}
		}
		// Yielded after the scan: the caller writes to the buckets read.
		for _, st := range streams {
			if !yield(st) {
				return
			}
		}
	}
}

// head returns a stream's first queued delivery (nil: the stream is empty).
func head(tx *bbolt.Tx, st core.Stream) (*core.Delivery, error) {
	prefix := streamKey(st)
	c := bkt(tx, bucketOutbox).Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if len(k) != len(prefix)+8 {
			continue // a session id that extends this one
		}
		return loadDelivery(tx, string(v))
	}
	return nil, nil
}

// QueuedDeliveries returns a stream's pending deliveries after a seq; see
// core.DeliveryQueue.
func (s *Store) QueuedDeliveries(ctx context.Context, st core.Stream, after uint64, limit int) ([]*core.Delivery, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	if limit <= 0 {
		return nil, nil
	}
	var out []*core.Delivery
	err := s.db.View(func(tx *bbolt.Tx) error {
		prefix := streamKey(st)
		c := bkt(tx, bucketOutbox).Cursor()
		for k, v := c.Seek(queueKey(st, after+1)); k != nil && bytes.HasPrefix(k, prefix) && len(out) < limit; k, v = c.Next() {
			if len(k) != len(prefix)+8 {
				continue // a session id that extends this one
			}
			d, err := loadDelivery(tx, string(v))
			if err != nil {
				return err
			}
			out = append(out, d)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("queued deliveries of %s/%s: %w", st.DestinationID, st.SessionID, err)
	}
	return out, nil
}

// reschedule puts a stream in the due index at its first delivery's next
// attempt, or takes it out when it is empty or its destination is paused.
// It returns that first delivery.
func (s *Store) reschedule(tx *bbolt.Tx, st core.Stream, dest *core.Destination) (*core.Delivery, error) {
	h, err := head(tx, st)
	if err != nil {
		return nil, err
	}
	if h == nil || dest == nil || dest.Status != core.DestinationActive {
		return h, unschedule(tx, st)
	}
	at := s.now()
	if h.NextAttemptAt != nil {
		at = h.NextAttemptAt.Time
	}
	return h, schedule(tx, st, at)
}

// RecordAttempt stores an attempt's outcome and moves the stream on.
func (s *Store) RecordAttempt(ctx context.Context, c core.Claim, id string, r core.AttemptResult) (*core.Delivery, *core.Delivery, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, nil, err
	}
	var stored, next *core.Delivery
	err := s.commit.do(func(tx *bbolt.Tx) error {
		var err error
		// The committer may run this more than once.
		stored, next, err = s.recordAttempt(tx, destinationsRead{}, c, id, r)
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("record attempt: %w", err)
	}
	return stored, next, nil
}

// RecordAttempts stores the attempts in one transaction.
func (s *Store) RecordAttempts(ctx context.Context, attempts []core.AttemptRecord) ([]core.RecordedAttempt, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	out := make([]core.RecordedAttempt, len(attempts))
	err := s.commit.do(func(tx *bbolt.Tx) error {
		dests := destinationsRead{}
		for i, a := range attempts {
			stored, next, err := s.recordAttempt(tx, dests, a.Claim, a.ID, a.Result)
			if err != nil && !record.AttemptRefused(err) {
				return err
			}
			out[i] = core.RecordedAttempt{Stored: stored, Next: next, Err: record.AttemptErr(err)}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("record attempts: %w", err)
	}
	return out, nil
}

// destinationsRead are the destinations a write transaction has read, by
// id: the attempts of one batch mostly share a few destinations, and each
// would read and decode its own again. What a write changes, it changes
// in the one read, and saves.
type destinationsRead map[string]*core.Destination

func (r destinationsRead) load(tx *bbolt.Tx, id string) (*core.Destination, error) {
	if d, ok := r[id]; ok {
		return d, nil
	}
	d, err := loadDestination(tx, id)
	if err == nil {
		r[id] = d
	}
	return d, err
}

// recordAttempt refuses an attempt (the delivery or its claim gone)
// before it writes anything, so a refusal leaves the transaction clean
// for the others of a batch.
func (s *Store) recordAttempt(tx *bbolt.Tx, dests destinationsRead, c core.Claim, id string, r core.AttemptResult) (stored, next *core.Delivery, err error) {
	d, err := loadDelivery(tx, id)
	if err != nil {
		return nil, nil, err
	}
	cl, err := checkClaim(tx, d.Stream(), c)
	if err != nil {
		return nil, nil, err
	}
	now := s.clock()
	record.AddAttempt(d, r.Attempt, now)
	stored = d
	if d.State != core.DeliveryPending {
		// Settled already: keep the attempt for the record, move
		// nothing.
		return stored, nil, saveDelivery(tx, d)
	}
	dest, err := dests.load(tx, d.DestinationID)
	if err != nil {
		return nil, nil, err
	}
	a := record.Attempted(d, dest, r, now)
	if a.Paused {
		if err := pauseStreams(tx, dest); err != nil {
			return nil, nil, err
		}
		s.log.Warn("destination paused after failing", "destination_id", dest.ID, "failing_since", dest.FailingSince.Time)
	}
	if a.DestinationChanged {
		if err := saveDestination(tx, dest); err != nil {
			return nil, nil, err
		}
	}
	if a.Settled {
		if err := bkt(tx, bucketOutbox).Delete(queueKey(d.Stream(), d.Seq)); err != nil {
			return nil, nil, err
		}
	}
	if err := saveDelivery(tx, d); err != nil {
		return nil, nil, err
	}
	h, err := s.reschedule(tx, d.Stream(), dest)
	if err != nil {
		return nil, nil, err
	}
	if record.DueNow(h, dest, now) {
		next = h
	}
	return stored, next, s.settleClaim(tx, d.Stream(), cl, next != nil, h == nil)
}
