package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
	"go.etcd.io/bbolt"
)

// bucketDeliveryClaims holds the delivery streams' claims; doc.go
// describes it.
const bucketDeliveryClaims = "delivery_claims"

// claimRecord is the record of a claim on an output stream: a delivery
// stream or a sink's output of a session. Its Epoch only grows, so a write
// of an earlier grant is refused for good: a sink's record outlives its
// claims, and a delivery stream's epochs come from the bucket's sequence,
// so a stream whose record was deleted (it emptied) and made again still
// gets epochs above every earlier one.
type claimRecord struct {
	Holder string `json:"holder,omitempty"` // "" once released
	// Boot names the Open that granted the claim: one process at a time
	// holds the data directory, so a claim of an earlier Open belongs to a
	// process that is gone (see runLease).
	Boot    string `json:"boot,omitempty"`
	Epoch   uint64 `json:"epoch"`
	Expires int64  `json:"expires_ms,omitempty"` // store clock, unix ms
	TTL     int64  `json:"ttl_ms,omitempty"`     // what a delivery stream's renewal adds
}

func loadStreamClaim(tx *bbolt.Tx, st core.Stream) (claimRecord, error) {
	var c claimRecord
	v := bkt(tx, bucketDeliveryClaims).Get(streamKey(st))
	if v == nil {
		return c, nil
	}
	if err := json.Unmarshal(v, &c); err != nil {
		return c, fmt.Errorf("claim of %s/%s: %w", st.DestinationID, st.SessionID, err)
	}
	return c, nil
}

func putStreamClaim(tx *bbolt.Tx, st core.Stream, c claimRecord) error {
	b, err := core.EncodeJSON(c)
	if err != nil {
		return err
	}
	return bkt(tx, bucketDeliveryClaims).Put(streamKey(st), b)
}

// live reports whether the claim holds the stream at now (unix ms).
func (s *Store) live(c claimRecord, now int64) bool {
	return c.Holder != "" && c.Boot == s.boot && now < c.Expires
}

// ClaimDeliveries claims due streams for holder; see core.DeliveryQueue.
func (s *Store) ClaimDeliveries(ctx context.Context, holder string, ttl time.Duration, now time.Time, limit int) ([]core.ClaimedDelivery, time.Time, error) {
	if err := record.CheckClaim("claim deliveries", holder, ttl); err != nil {
		return nil, time.Time{}, err
	}
	if err := ctxErr(ctx); err != nil {
		return nil, time.Time{}, err
	}
	limit = record.ClaimLimit(limit)
	// A look that finds nothing to claim writes nothing: the dispatcher
	// looks after every append.
	var picked []core.Stream
	var next time.Time
	err := s.db.View(func(tx *bbolt.Tx) error {
		var err error
		picked, next, err = s.claimable(tx, holder, now, limit)
		return err
	})
	if err != nil || len(picked) == 0 {
		if err != nil {
			err = fmt.Errorf("claim deliveries: %w", err)
		}
		return nil, next, err
	}
	var out []core.ClaimedDelivery
	err = s.commit.do(func(tx *bbolt.Tx) error {
		out = nil // the committer may run this more than once
		var err error
		picked, next, err = s.claimable(tx, holder, now, limit)
		if err != nil {
			return err
		}
		clock := s.now().UnixMilli()
		for _, st := range picked {
			h, err := head(tx, st)
			if err != nil {
				return err
			}
			if h == nil {
				s.log.Warn("due stream has no delivery", "destination_id", st.DestinationID, "session_id", st.SessionID)
				continue
			}
			epoch, err := bkt(tx, bucketDeliveryClaims).NextSequence()
			if err != nil {
				return err
			}
			cl := claimRecord{Holder: holder, Boot: s.boot, Epoch: epoch, Expires: clock + ttl.Milliseconds(), TTL: ttl.Milliseconds()}
			if err := putStreamClaim(tx, st, cl); err != nil {
				return err
			}
			out = append(out, core.ClaimedDelivery{Delivery: h, Claim: core.Claim{Holder: holder, Epoch: epoch}})
		}
		return nil
	})
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("claim deliveries: %w", err)
	}
	return out, next, nil
}

// claimable reads the due index, earliest first, for up to limit streams
// due at now that no live claim holds, and when the first stream not
// picked may be claimed (see core.DeliveryQueue).
func (s *Store) claimable(tx *bbolt.Tx, holder string, now time.Time, limit int) ([]core.Stream, time.Time, error) {
	var picked []core.Stream
	var next time.Time
	cutoff := unixNanos(now)
	clock := s.now().UnixMilli()
	c := bkt(tx, bucketOutboxDue).Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		if len(k) < 8 {
			continue
		}
		at := time.Unix(0, int64(binary.BigEndian.Uint64(k[:8])))
		if !next.IsZero() && !at.Before(next) {
			break // every stream from here is due later than next
		}
		st, ok := splitStream(k[8:])
		if !ok {
			continue
		}
		cl, err := loadStreamClaim(tx, st)
		if err != nil {
			return nil, time.Time{}, err
		}
		if s.live(cl, clock) {
			if cl.Holder != holder {
				free := now.Add(time.Duration(cl.Expires-clock) * time.Millisecond)
				if at.After(free) {
					free = at
				}
				next = earliest(next, free)
			}
			continue
		}
		if unixNanos(at) > cutoff || len(picked) == limit {
			next = earliest(next, at)
			continue
		}
		picked = append(picked, st)
	}
	return picked, next, nil
}

// earliest is the earlier of a and b, zero meaning none.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || b.Before(a) {
		return b
	}
	return a
}

// checkClaim refuses a write of claim c to a stream claimed since by
// another (or whose claim went with its destination).
func checkClaim(tx *bbolt.Tx, st core.Stream, c core.Claim) (claimRecord, error) {
	cl, err := loadStreamClaim(tx, st)
	if err != nil {
		return cl, err
	}
	return cl, record.StreamClaimed(st, cl.Epoch, c)
}

// settleClaim renews the claim of a stream whose holder goes on with its
// next delivery, releases it when the holder stops, and deletes it with
// the stream's last delivery (epochs still grow: they come from the
// bucket's sequence).
func (s *Store) settleClaim(tx *bbolt.Tx, st core.Stream, cl claimRecord, goOn, empty bool) error {
	switch {
	case empty:
		return bkt(tx, bucketDeliveryClaims).Delete(streamKey(st))
	case goOn:
		cl.Expires = s.now().UnixMilli() + cl.TTL
	default:
		cl.Holder, cl.Expires = "", 0
	}
	return putStreamClaim(tx, st, cl)
}

// ReleaseDeliveryClaims ends holder's claims; see core.DeliveryQueue.
func (s *Store) ReleaseDeliveryClaims(ctx context.Context, holder string) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	err := s.commit.do(func(tx *bbolt.Tx) error {
		type held struct {
			key []byte
			c   claimRecord
		}
		var mine []held
		err := bkt(tx, bucketDeliveryClaims).ForEach(func(k, v []byte) error {
			var c claimRecord
			if err := json.Unmarshal(v, &c); err != nil {
				return fmt.Errorf("claim %q: %w", k, err)
			}
			if c.Holder == holder && c.Boot == s.boot {
				mine = append(mine, held{bytes.Clone(k), c})
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, h := range mine {
			h.c.Holder, h.c.Expires = "", 0
			b, err := core.EncodeJSON(h.c)
			if err != nil {
				return err
			}
			if err := bkt(tx, bucketDeliveryClaims).Put(h.key, b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("release delivery claims of %s: %w", holder, err)
	}
	return nil
}
