package bolt

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
	"go.etcd.io/bbolt"
)

// Kind bytes keep dedupe and idempotency keys in separate namespaces of the
// one keys bucket, so a delivery id can never replay an API answer.
const (
	kindDedupe      = 'd'
	kindIdempotency = 'i'
)

func storedKey(kind byte, key string) []byte {
	k := make([]byte, 0, 1+len(key))
	return append(append(k, kind), key...)
}

// keyRecord is the value of a keys entry.
type keyRecord struct {
	created uint64
	hash    string
	answer  []byte
}

func (r keyRecord) marshal() []byte {
	b := make([]byte, 0, 12+len(r.hash)+len(r.answer))
	b = binary.BigEndian.AppendUint64(b, r.created)
	b = binary.BigEndian.AppendUint32(b, uint32(len(r.hash)))
	b = append(b, r.hash...)
	return append(b, r.answer...)
}

func parseKeyRecord(v []byte) (keyRecord, error) {
	if len(v) < 12 {
		return keyRecord{}, fmt.Errorf("key record of %d bytes is truncated", len(v))
	}
	n := int(binary.BigEndian.Uint32(v[8:12]))
	if len(v) < 12+n {
		return keyRecord{}, fmt.Errorf("key record hash of %d bytes is truncated", n)
	}
	// Copied: bbolt values die with the transaction.
	return keyRecord{
		created: binary.BigEndian.Uint64(v[:8]),
		hash:    string(v[12 : 12+n]),
		answer:  append([]byte{}, v[12+n:]...),
	}, nil
}

// checkKeys answers whether a write was already done: a non-nil replay for a
// known idempotency key with the same hash, dup for a known dedupe key.
func checkKeys(tx *bbolt.Tx, idem *core.Idempotency, dedupe []string) (replay []byte, dup bool, err error) {
	keys := bkt(tx, bucketKeys)
	if idem != nil {
		if v := keys.Get(storedKey(kindIdempotency, idem.Key)); v != nil {
			rec, err := parseKeyRecord(v)
			if err != nil {
				return nil, false, fmt.Errorf("idempotency key %q: %w", idem.Key, err)
			}
			replay, err := record.Replay(idem, rec.hash, rec.answer)
			return replay, false, err
		}
	}
	for _, d := range dedupe {
		if keys.Get(storedKey(kindDedupe, d)) != nil {
			return nil, true, nil
		}
	}
	return nil, false, nil
}

// recordKeys stores the keys of a write in the same transaction as the
// write, with their creation time indexed for Sweep.
func recordKeys(tx *bbolt.Tx, idem *core.Idempotency, dedupe []string, now time.Time) error {
	created := unixNanos(now)
	put := func(k []byte, rec keyRecord) error {
		keys := bkt(tx, bucketKeys)
		if keys.Get(k) != nil {
			return nil // listed twice in one request
		}
		if err := keys.Put(k, rec.marshal()); err != nil {
			return err
		}
		return bkt(tx, bucketKeyTimes).Put(append(u64(created), k...), nil)
	}
	for _, d := range dedupe {
		if err := put(storedKey(kindDedupe, d), keyRecord{created: created}); err != nil {
			return fmt.Errorf("record dedupe key %q: %w", d, err)
		}
	}
	if idem != nil {
		rec := keyRecord{created: created, hash: idem.Hash, answer: idem.Answer}
		if err := put(storedKey(kindIdempotency, idem.Key), rec); err != nil {
			return fmt.Errorf("record idempotency key %q: %w", idem.Key, err)
		}
	}
	return nil
}

// Sweep deletes idempotency and dedupe keys created before before. It walks
// the time index only as far as before, never the whole key space. It then
// sweeps the console's records as SweepConsole does with the same before:
// the runtime's periodic sweep keeps expired sign-ins and old sign-in
// failures as long as keys, then deletes them.
func (s *Store) Sweep(ctx context.Context, before time.Time) (int, error) {
	if err := ctxErr(ctx); err != nil {
		return 0, err
	}
	limit := unixNanos(before)
	n := 0
	err := s.db.Update(func(tx *bbolt.Tx) error {
		n = 0
		times := bkt(tx, bucketKeyTimes)
		old := keysUntil(times, func(t uint64) bool { return t < limit })
		keys := bkt(tx, bucketKeys)
		for _, k := range old {
			if err := times.Delete(k); err != nil {
				return err
			}
			if err := keys.Delete(k[8:]); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("sweep keys: %w", err)
	}
	if n > 0 {
		s.log.Debug("swept keys", "count", n, "before", before)
	}
	console, err := s.SweepConsole(ctx, before)
	return n + console, err
}
