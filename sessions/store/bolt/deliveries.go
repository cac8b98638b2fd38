package bolt

import (
	"bytes"
	"context"
	"fmt"
	"iter"

	"github.com/switchboardhq/switchboard/sessions/store/record"

	"github.com/switchboardhq/switchboard/core"
	"go.etcd.io/bbolt"
)

// GetDelivery returns a delivery with its attempts.
func (s *Store) GetDelivery(ctx context.Context, id string) (*core.Delivery, error) {
	return viewOne(ctx, s, "get delivery", func(tx *bbolt.Tx) (*core.Delivery, error) { return loadDelivery(tx, id) })
}

// ListDeliveries pages through deliveries in id order. A destination or
// session filter reads that index; the state filter scans from the cursor,
// which a page bounds.
func (s *Store) ListDeliveries(ctx context.Context, q core.DeliveryQuery) ([]*core.Delivery, bool, error) {
	ids := func(tx *bbolt.Tx) iter.Seq[string] {
		switch {
		case q.DestinationID != "":
			return indexIDs(bkt(tx, bucketDeliveriesByDest), q.DestinationID, q.After)
		case q.SessionID != "":
			return indexIDs(bkt(tx, bucketDeliveriesBySess), q.SessionID, q.After)
		}
		return allIDs(bkt(tx, bucketDeliveries))
	}
	return idPage(ctx, s, "list deliveries", ids, q.After, q.Limit, loadDelivery, func(d *core.Delivery) bool {
		return (q.SessionID == "" || d.SessionID == q.SessionID) && (q.State == "" || d.State == q.State)
	})
}

// indexIDs yields the delivery ids under owner in an owner ‖ delivery id
// index, from the cursor on.
func indexIDs(b *bbolt.Bucket, owner, after string) iter.Seq[string] {
	return func(yield func(string) bool) {
		prefix := []byte(owner)
		c := b.Cursor()
		for k, _ := c.Seek(append(bytes.Clone(prefix), after...)); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			if len(k) != len(prefix)+idLen {
				continue // an owner id that extends this one
			}
			if !yield(string(k[len(prefix):])) {
				return
			}
		}
	}
}

// Redeliver puts a delivered or dead delivery back in its stream at its
// seq, pending and due at once (behind any earlier delivery of the stream
// still pending, so the stream stays in order).
func (s *Store) Redeliver(ctx context.Context, id string) (*core.Delivery, error) {
	return commitOne(ctx, s, "redeliver", func(tx *bbolt.Tx) (*core.Delivery, error) {
		d, err := loadDelivery(tx, id)
		if err != nil {
			return nil, err
		}
		if err := record.Redeliver(d, s.clock()); err != nil {
			return nil, err
		}
		dest, err := loadDestination(tx, d.DestinationID)
		if err != nil {
			return nil, fmt.Errorf("delivery %s: its destination %s was deleted: %w", id, d.DestinationID, core.ErrConflict)
		}
		if err := saveDelivery(tx, d); err != nil {
			return nil, err
		}
		if err := bkt(tx, bucketOutbox).Put(queueKey(d.Stream(), d.Seq), []byte(d.ID)); err != nil {
			return nil, err
		}
		_, err = s.reschedule(tx, d.Stream(), dest)
		return d, err
	})
}

// DeliveryPayload reads the logged event a delivery carries, its
// session's metadata and its destination's status, in one read
// transaction.
func (s *Store) DeliveryPayload(ctx context.Context, d *core.Delivery) (core.DeliveryPayload, error) {
	if err := ctxErr(ctx); err != nil {
		return core.DeliveryPayload{}, err
	}
	var e core.Event
	var meta map[string]string
	var paused bool
	err := s.db.View(func(tx *bbolt.Tx) error {
		if raw := bkt(tx, bucketDestinations).Get([]byte(d.DestinationID)); raw != nil {
			dest, err := s.destinations.shared(d.DestinationID, raw)
			if err != nil {
				return err
			}
			paused = dest.Status == core.DestinationPaused
		}
		raw := bkt(tx, bucketSessions).Get([]byte(d.SessionID))
		if raw == nil {
			return fmt.Errorf("session %s: %w", d.SessionID, core.ErrNotFound)
		}
		var ok bool
		if meta, ok = s.hot.metadata(d.SessionID, raw); !ok {
			var err error
			if meta, err = record.SessionMetadata(raw); err != nil {
				return err
			}
		}
		v := loggedEvent(tx, d.SessionID, d.Seq)
		if v == nil {
			return fmt.Errorf("event %d of session %s: %w", d.Seq, d.SessionID, core.ErrNotFound)
		}
		stored, err := record.DecodeEvent("event", v)
		if err == nil {
			e = *stored
		}
		return err
	})
	if err != nil {
		return core.DeliveryPayload{}, fmt.Errorf("delivery payload of %s: %w", d.ID, err)
	}
	return core.DeliveryPayload{Event: e, Metadata: meta, DestinationPaused: paused}, nil
}
