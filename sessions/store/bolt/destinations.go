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

var (
	_ core.DestinationStore = (*Store)(nil)
	_ core.DeliveryQueue    = (*Store)(nil)
)

// Webhook bucket names; doc.go describes what each holds.
const (
	bucketDestinations       = "destinations"
	bucketDestinationSecrets = "destination_secrets"
	bucketDestinationFilters = "destination_filters"
	bucketOutbox             = "outbox"
	bucketOutboxDue          = "outbox_due"
	bucketOutboxStreams      = "outbox_streams"
	bucketDeliveries         = "deliveries"
	bucketDeliveriesByDest   = "deliveries_by_destination"
	bucketDeliveriesBySess   = "deliveries_by_session"
)

// idLen is the length of a destination or delivery id ("dst_" or "dlv_"
// and 26 base32 digits). Keys put these fixed-length ids next to session
// ids, whose length the store does not fix, so a key splits at them.
const idLen = 30

// Scope bytes of destination_filters keys.
const (
	scopeGlobal  byte = 'g'
	scopeSession byte = 's'
)

// storedFilter is a destination_filters value: what Append checks an
// event against, and whether to schedule the delivery.
type storedFilter struct {
	core.EventFilter
	Paused bool `json:"paused,omitempty"`
}

func filterKey(d *core.Destination) []byte {
	if d.SessionID == "" {
		return append([]byte{scopeGlobal}, d.ID...)
	}
	k := append([]byte{scopeSession}, d.SessionID...)
	return append(k, d.ID...)
}

func putFilter(tx *bbolt.Tx, d *core.Destination) error {
	v, err := core.EncodeJSON(storedFilter{EventFilter: d.Filter(), Paused: d.Status == core.DestinationPaused})
	if err != nil {
		return fmt.Errorf("encode filter of %s: %w", d.ID, err)
	}
	return bkt(tx, bucketDestinationFilters).Put(filterKey(d), v)
}

func loadDestination(tx *bbolt.Tx, id string) (*core.Destination, error) {
	v, err := destinationBytes(tx, id)
	if err != nil {
		return nil, err
	}
	return record.Decode[core.Destination]("destination", v)
}

// destinationBytes is destination id's stored record.
func destinationBytes(tx *bbolt.Tx, id string) ([]byte, error) {
	v := bkt(tx, bucketDestinations).Get([]byte(id))
	if v == nil {
		return nil, fmt.Errorf("destination %s: %w", id, core.ErrNotFound)
	}
	return v, nil
}

func saveDestination(tx *bbolt.Tx, d *core.Destination) error {
	v, err := record.Encode("destination", d.ID, d)
	if err != nil {
		return err
	}
	return bkt(tx, bucketDestinations).Put([]byte(d.ID), v)
}

// insertDestination writes a new destination (record.NewDestination),
// its secret and its filter.
func (s *Store) insertDestination(tx *bbolt.Tx, d *core.Destination, sealedSecret []byte) error {
	if d.SessionID != "" {
		if _, err := loadWritable(tx, d.SessionID); err != nil {
			return err
		}
	}
	if bkt(tx, bucketDestinations).Get([]byte(d.ID)) != nil {
		return fmt.Errorf("destination %s already exists: %w", d.ID, core.ErrConflict)
	}
	if err := saveDestination(tx, d); err != nil {
		return err
	}
	if len(sealedSecret) > 0 {
		if err := bkt(tx, bucketDestinationSecrets).Put([]byte(d.ID), sealedSecret); err != nil {
			return err
		}
	}
	return putFilter(tx, d)
}

// CreateDestination saves a destination with its sealed secret.
func (s *Store) CreateDestination(ctx context.Context, nd core.NewDestination) (*core.Destination, error) {
	d, err := record.NewDestination(nd, s.clock())
	if err != nil {
		return nil, fmt.Errorf("create destination: %w", err)
	}
	if err := s.commitTx(ctx, "create destination", func(tx *bbolt.Tx) error { return s.insertDestination(tx, d, nd.SealedSecret) }); err != nil {
		return nil, err
	}
	s.log.Debug("destination created", "destination_id", d.ID, "session_id", d.SessionID)
	return d, nil
}

// GetDestination returns a destination.
func (s *Store) GetDestination(ctx context.Context, id string) (*core.Destination, error) {
	return viewOne(ctx, s, "get destination", func(tx *bbolt.Tx) (*core.Destination, error) { return s.destinations.read(tx, id, destinationBytes) })
}

// DestinationSecret returns a destination's sealed secret (nil: none).
func (s *Store) DestinationSecret(ctx context.Context, id string) ([]byte, error) {
	return viewOne(ctx, s, "destination secret", func(tx *bbolt.Tx) ([]byte, error) {
		if bkt(tx, bucketDestinations).Get([]byte(id)) == nil {
			return nil, fmt.Errorf("destination %s: %w", id, core.ErrNotFound)
		}
		return bytes.Clone(bkt(tx, bucketDestinationSecrets).Get([]byte(id))), nil
	})
}

// ListDestinations pages through destinations in id order. A session or
// global query reads only that scope of destination_filters.
func (s *Store) ListDestinations(ctx context.Context, q core.DestinationQuery) ([]*core.Destination, bool, error) {
	ids := func(tx *bbolt.Tx) iter.Seq[string] {
		switch {
		case q.SessionID != "":
			return scopeIDs(tx, append([]byte{scopeSession}, q.SessionID...))
		case q.Global || q.AgentID != "":
			return scopeIDs(tx, []byte{scopeGlobal})
		}
		return allIDs(bkt(tx, bucketDestinations))
	}
	return idPage(ctx, s, "list destinations", ids, q.After, q.Limit, loadDestination, func(d *core.Destination) bool {
		return q.AgentID == "" || d.AgentID == q.AgentID
	})
}

// idPage reads, in one read transaction, the records of the ids that ids
// yields in order, from after the cursor, keeping those keep accepts, up
// to limit (record.ClampLimit); more when one is left.
func idPage[T any](ctx context.Context, s *Store, what string, ids func(*bbolt.Tx) iter.Seq[string], after string, limit int,
	load func(*bbolt.Tx, string) (T, error), keep func(T) bool) ([]T, bool, error) {
	limit = record.ClampLimit(limit)
	type page struct {
		items []T
		more  bool
	}
	p, err := viewOne(ctx, s, what, func(tx *bbolt.Tx) (page, error) {
		p := page{items: []T{}}
		for id := range ids(tx) {
			if id <= after {
				continue
			}
			rec, err := load(tx, id)
			if err != nil {
				return page{}, err
			}
			if !keep(rec) {
				continue
			}
			if len(p.items) == limit {
				p.more = true
				break
			}
			p.items = append(p.items, rec)
		}
		return p, nil
	})
	return p.items, p.more, err
}

// scopeIDs yields the destination ids of one scope of destination_filters
// in id order.
func scopeIDs(tx *bbolt.Tx, prefix []byte) iter.Seq[string] {
	return func(yield func(string) bool) {
		c := bkt(tx, bucketDestinationFilters).Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			if len(k) != len(prefix)+idLen {
				continue // a longer session id that shares the prefix
			}
			if !yield(string(k[len(prefix):])) {
				return
			}
		}
	}
}

func allIDs(b *bbolt.Bucket) iter.Seq[string] {
	return func(yield func(string) bool) {
		c := b.Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			if !yield(string(k)) {
				return
			}
		}
	}
}

// DeleteDestination deletes a destination, its secret and filter, and its
// queue; the deliveries still pending end dead. Delivery records stay.
func (s *Store) DeleteDestination(ctx context.Context, id string) error {
	err := s.commitTx(ctx, "delete destination", func(tx *bbolt.Tx) error {
		d, err := loadDestination(tx, id)
		if err != nil {
			return err
		}
		if err := unscheduleDestination(tx, id); err != nil {
			return err
		}
		// The claims go with the streams: an attempt in flight is not
		// recorded (ErrLeaseLost).
		for st := range destinationStreams(tx, id) {
			if err := bkt(tx, bucketDeliveryClaims).Delete(streamKey(st)); err != nil {
				return err
			}
		}
		now := s.clock()
		ob := bkt(tx, bucketOutbox)
		var keys [][]byte
		c := ob.Cursor()
		for k, v := c.Seek([]byte(id)); k != nil && bytes.HasPrefix(k, []byte(id)); k, v = c.Next() {
			keys = append(keys, bytes.Clone(k))
			dl, err := loadDelivery(tx, string(v))
			if err != nil {
				return err
			}
			record.Orphaned(dl, now)
			if err := saveDelivery(tx, dl); err != nil {
				return err
			}
		}
		for _, k := range keys {
			if err := ob.Delete(k); err != nil {
				return err
			}
		}
		if err := bkt(tx, bucketDestinationFilters).Delete(filterKey(d)); err != nil {
			return err
		}
		if err := bkt(tx, bucketDestinationSecrets).Delete([]byte(id)); err != nil {
			return err
		}
		return bkt(tx, bucketDestinations).Delete([]byte(id))
	})
	if err == nil {
		s.log.Debug("destination deleted", "destination_id", id)
	}
	return err
}

// ResumeDestination makes a paused destination active, forgets its run of
// failures, and schedules each of its streams from its first pending
// delivery.
func (s *Store) ResumeDestination(ctx context.Context, id string) (*core.Destination, error) {
	return s.setDestinationStatus(ctx, id, core.DestinationActive, func(tx *bbolt.Tx, d *core.Destination) error {
		record.ResumeDestination(d, s.clock())
		if err := saveDestination(tx, d); err != nil {
			return err
		}
		if err := putFilter(tx, d); err != nil {
			return err
		}
		for st := range destinationStreams(tx, id) {
			if _, err := s.reschedule(tx, st, d); err != nil {
				return err
			}
		}
		return nil
	})
}

// PauseDestination pauses an active destination; a paused one is
// returned as it is.
func (s *Store) PauseDestination(ctx context.Context, id string) (*core.Destination, error) {
	return s.setDestinationStatus(ctx, id, core.DestinationPaused, func(tx *bbolt.Tx, d *core.Destination) error {
		record.PauseDestination(d, s.clock())
		if err := pauseStreams(tx, d); err != nil {
			return err
		}
		return saveDestination(tx, d)
	})
}

// setDestinationStatus brings the destination with id to status st with
// change, which runs only when the destination has another status, and
// returns the destination as it then is.
func (s *Store) setDestinationStatus(ctx context.Context, id string, st core.DestinationStatus, change func(*bbolt.Tx, *core.Destination) error) (*core.Destination, error) {
	return commitOne(ctx, s, "set destination status to "+string(st), func(tx *bbolt.Tx) (*core.Destination, error) {
		d, err := loadDestination(tx, id)
		if err != nil || d.Status == st {
			return d, err
		}
		return d, change(tx, d)
	})
}

// pauseStreams stops the attempts of a destination record.PauseDestination
// paused: its filter says so, and its streams leave the due index (their
// deliveries stay queued) until it is resumed.
func pauseStreams(tx *bbolt.Tx, d *core.Destination) error {
	if err := putFilter(tx, d); err != nil {
		return err
	}
	return unscheduleDestination(tx, d.ID)
}
