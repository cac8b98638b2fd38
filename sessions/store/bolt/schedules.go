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

const (
	bucketSchedules   = "schedules"    // id → the schedule (JSON)
	bucketScheduleDue = "schedule_due" // next_at (8 bytes) + id → nil: the due index
)

var _ core.ScheduleStore = (*Store)(nil)

func getSchedule(tx *bbolt.Tx, id string) (*core.Schedule, error) {
	v := bkt(tx, bucketSchedules).Get([]byte(id))
	if v == nil {
		return nil, fmt.Errorf("schedule %q: %w", id, core.ErrNotFound)
	}
	return decodeSchedule(v)
}

func decodeSchedule(v []byte) (*core.Schedule, error) {
	return record.Decode[core.Schedule]("schedule", v)
}

func scheduleDueKey(s *core.Schedule) []byte {
	return append(u64(unixNanos(s.NextAt.Time)), s.ID...)
}

// putSchedule saves s and moves its entry in the due index from where
// old (nil for a new schedule) had it.
func putSchedule(tx *bbolt.Tx, s, old *core.Schedule) error {
	due := bkt(tx, bucketScheduleDue)
	if old != nil && old.NextAt != nil {
		if err := due.Delete(scheduleDueKey(old)); err != nil {
			return err
		}
	}
	if s.NextAt != nil {
		if err := due.Put(scheduleDueKey(s), nil); err != nil {
			return err
		}
	}
	v, err := record.Encode("schedule", s.ID, s)
	if err != nil {
		return err
	}
	return bkt(tx, bucketSchedules).Put([]byte(s.ID), v)
}

// CreateSchedule saves a new schedule.
func (s *Store) CreateSchedule(ctx context.Context, in *core.Schedule) (*core.Schedule, error) {
	out, err := record.NewSchedule(in, s.clock())
	if err != nil {
		return nil, err
	}
	return out, s.updateTx(ctx, "create schedule", func(tx *bbolt.Tx) error { return putSchedule(tx, out, nil) })
}

// GetSchedule returns a schedule.
func (s *Store) GetSchedule(ctx context.Context, id string) (*core.Schedule, error) {
	return viewOne(ctx, s, "", func(tx *bbolt.Tx) (*core.Schedule, error) { return getSchedule(tx, id) })
}

// ListSchedules pages through schedules in id order.
func (s *Store) ListSchedules(ctx context.Context, q core.ScheduleQuery) ([]*core.Schedule, bool, error) {
	list, more, err := listWhere(ctx, s, bucketSchedules, q.After, q.Limit, decodeSchedule, func(sc *core.Schedule) bool {
		return q.Session == "" || sc.Target.SessionID == q.Session || sc.CreatedBy == q.Session
	})
	if err != nil {
		return nil, false, fmt.Errorf("list schedules: %w", err)
	}
	return list, more, nil
}

// UpdateSchedule applies fn to a schedule and saves it.
func (s *Store) UpdateSchedule(ctx context.Context, id string, fn func(*core.Schedule) error) (*core.Schedule, error) {
	return writeOne(ctx, s, "update schedule", func(tx *bbolt.Tx) (*core.Schedule, error) {
		old, err := getSchedule(tx, id)
		if err != nil {
			return nil, err
		}
		next, err := record.UpdateSchedule(old, fn, s.clock())
		if err != nil {
			return nil, err
		}
		return next, putSchedule(tx, next, old)
	})
}

// DeleteSchedule deletes a schedule.
func (s *Store) DeleteSchedule(ctx context.Context, id string) error {
	return s.updateTx(ctx, "delete schedule", func(tx *bbolt.Tx) error {
		old, err := getSchedule(tx, id)
		if err != nil {
			return err
		}
		if old.NextAt != nil {
			if err := bkt(tx, bucketScheduleDue).Delete(scheduleDueKey(old)); err != nil {
				return err
			}
		}
		return bkt(tx, bucketSchedules).Delete([]byte(id))
	})
}

// DueSchedules returns the schedules due at now, earliest first.
func (s *Store) DueSchedules(ctx context.Context, now time.Time, limit int) ([]*core.Schedule, error) {
	return viewOne(ctx, s, "due schedules", func(tx *bbolt.Tx) ([]*core.Schedule, error) {
		var out []*core.Schedule
		c := bkt(tx, bucketScheduleDue).Cursor()
		until := unixNanos(now)
		for k, _ := c.First(); k != nil && binary.BigEndian.Uint64(k) <= until && (limit <= 0 || len(out) < limit); k, _ = c.Next() {
			sc, err := getSchedule(tx, string(k[8:]))
			if err != nil {
				return nil, err
			}
			out = append(out, sc)
		}
		return out, nil
	})
}

// NextScheduleAt is the earliest next due time of all schedules.
func (s *Store) NextScheduleAt(ctx context.Context) (time.Time, bool, error) {
	if err := ctxErr(ctx); err != nil {
		return time.Time{}, false, err
	}
	var at time.Time
	var ok bool
	err := s.db.View(func(tx *bbolt.Tx) error {
		if k, _ := bkt(tx, bucketScheduleDue).Cursor().First(); k != nil {
			at, ok = time.Unix(0, int64(binary.BigEndian.Uint64(k))).UTC(), true
		}
		return nil
	})
	return at, ok, err
}

// FireSchedule queues the schedule's input for its due time and moves it
// on, in one transaction.
func (s *Store) FireSchedule(ctx context.Context, id string, due time.Time, next *time.Time, start *core.NewSession) (*core.Fire, error) {
	return writeSession(ctx, s, "fire schedule", func(tx *bbolt.Tx) (*core.Fire, []core.Change, error) {
		sc, err := getSchedule(tx, id)
		if err != nil {
			return nil, nil, err
		}
		old := *sc
		return record.Fire(sc, due, next, start, s.clock(), record.FireOps{
			Queue: func(id string, req core.QueueRequest, inputs []core.Event) (*core.QueueResult, []core.Change, error) {
				return s.queueInputs(tx, id, req, inputs, true)
			},
			Create: func(req core.NewSession, inputs []core.Event) (*core.CreateResult, []core.Change, error) {
				return s.createSession(tx, req, core.NewID(core.PrefixSession), inputs, true)
			},
			Put: func(sc *core.Schedule) error { return putSchedule(tx, sc, &old) },
		})
	})
}
