package bolt

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
	"go.etcd.io/bbolt"
)

// bucketHourlyStats holds the turns' hourly counters (doc.go).
const bucketHourlyStats = "hourly_stats"

var _ core.StatsStore = (*Store)(nil)

// hourKey is the key of an hour's counters.
func hourKey(hour time.Time) []byte { return u64(unixNanos(hour)) }

// countTurn adds a logged turn.completed to its hour's counters.
func countTurn(tx *bbolt.Tx, e core.Event, done *core.TurnCompletedBody) error {
	b := bkt(tx, bucketHourlyStats)
	h := &core.HourStats{Hour: record.StatsHour(e.CreatedAt.Time)}
	k := hourKey(h.Hour)
	if v := b.Get(k); v != nil {
		var err error
		if h, err = record.Decode[core.HourStats]("hourly stats", v); err != nil {
			return err
		}
	}
	record.CountTurn(h, done)
	v, err := record.Encode("hourly stats", h.Hour.Format(time.RFC3339), h)
	if err != nil {
		return err
	}
	return b.Put(k, v)
}

// HourlyStats returns the hours in [from, to) that have counters, oldest
// first.
func (s *Store) HourlyStats(ctx context.Context, from, to time.Time) ([]core.HourStats, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	out := []core.HourStats{}
	end := hourKey(to)
	err := s.db.View(func(tx *bbolt.Tx) error {
		b := bkt(tx, bucketHourlyStats)
		if b == nil {
			return nil // a file of an older release, opened read-only
		}
		c := b.Cursor()
		for k, v := c.Seek(hourKey(from)); k != nil && bytes.Compare(k, end) < 0; k, v = c.Next() {
			h, err := record.Decode[core.HourStats]("hourly stats", v)
			if err != nil {
				return err
			}
			out = append(out, *h)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("hourly stats: %w", err)
	}
	return out, nil
}
