package bolt

import (
	"context"
	"fmt"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
	"go.etcd.io/bbolt"
)

var _ core.OnceStore = (*Store)(nil)

// Once bucket names; doc.go describes what each holds.
const (
	bucketOnce      = "once"
	bucketOnceTimes = "once_times"
)

// Once records key until the given time and reports whether it is new. It
// first deletes the keys that expired (walking the time index only as far
// as now), so the buckets hold only live keys.
func (s *Store) Once(ctx context.Context, key string, until time.Time) (bool, error) {
	if err := ctxErr(ctx); err != nil {
		return false, err
	}
	if err := record.CheckOnceKey(key); err != nil {
		return false, err
	}
	now := unixNanos(s.now())
	fresh := false
	err := s.db.Update(func(tx *bbolt.Tx) error {
		fresh = false
		once, times := bkt(tx, bucketOnce), bkt(tx, bucketOnceTimes)
		expired := keysUntil(times, func(t uint64) bool { return t <= now })
		for _, k := range expired {
			if err := times.Delete(k); err != nil {
				return err
			}
			if err := once.Delete(k[8:]); err != nil {
				return err
			}
		}
		if once.Get([]byte(key)) != nil {
			return nil
		}
		at := u64(unixNanos(until))
		if err := once.Put([]byte(key), at); err != nil {
			return err
		}
		fresh = true
		return times.Put(append(at, key...), nil)
	})
	if err != nil {
		return false, fmt.Errorf("once %q: %w", key, err)
	}
	return fresh, nil
}
