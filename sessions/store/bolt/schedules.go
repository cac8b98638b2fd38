package bolt

import (
	"context"
	"encoding/binary"
	"encoding/json"
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
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	out, err := record.NewSchedule(in, s.clock())
	if err != nil {
		return nil, err
	}
	if err := s.db.Update(func(tx *bbolt.Tx) error { return putSchedule(tx, out, nil) }); err != nil {
		return nil, fmt.Errorf("create schedule: %w", err)
	}
	return out, nil
}

// GetSchedule returns a schedule.
func (s *Store) GetSchedule(ctx context.Context, id string) (*core.Schedule, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	var out *core.Schedule
	err := s.db.View(func(tx *bbolt.Tx) (err error) {
		out, err = getSchedule(tx, id)
		return err
	})
	return out, err
}

// ListSchedules pages through schedules in id order.
func (s *Store) ListSchedules(ctx context.Context, q core.ScheduleQuery) ([]*core.Schedule, bool, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, false, err
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 100
	}
	var out []*core.Schedule
	more := false
	err := s.db.View(func(tx *bbolt.Tx) error {
		c := bkt(tx, bucketSchedules).Cursor()
		k, v := c.First()
		if q.After != "" {
			k, v = c.Seek([]byte(q.After))
			if k != nil && string(k) == q.After {
				k, v = c.Next()
			}
		}
		for ; k != nil; k, v = c.Next() {
			var sc core.Schedule
			if err := json.Unmarshal(v, &sc); err != nil {
				return fmt.Errorf("decode schedule %s: %w", k, err)
			}
			if q.Session != "" && sc.Target.SessionID != q.Session && sc.CreatedBy != q.Session {
				continue
			}
			if len(out) == limit {
				more = true
				return nil
			}
			out = append(out, &sc)
		}
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("list schedules: %w", err)
	}
	return out, more, nil
}

// UpdateSchedule applies fn to a schedule and saves it.
func (s *Store) UpdateSchedule(ctx context.Context, id string, fn func(*core.Schedule) error) (*core.Schedule, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	var out *core.Schedule
	err := s.db.Update(func(tx *bbolt.Tx) error {
		old, err := getSchedule(tx, id)
		if err != nil {
			return err
		}
		next, err := record.UpdateSchedule(old, fn, s.clock())
		if err != nil {
			return err
		}
		out = next
		return putSchedule(tx, next, old)
	})
	if err != nil {
		return nil, fmt.Errorf("update schedule: %w", err)
	}
	return out, nil
}

// DeleteSchedule deletes a schedule.
func (s *Store) DeleteSchedule(ctx context.Context, id string) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	err := s.db.Update(func(tx *bbolt.Tx) error {
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
	if err != nil {
		return fmt.Errorf("delete schedule: %w", err)
	}
	return nil
}

// DueSchedules returns the schedules due at now, earliest first.
func (s *Store) DueSchedules(ctx context.Context, now time.Time, limit int) ([]*core.Schedule, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	var out []*core.Schedule
	err := s.db.View(func(tx *bbolt.Tx) error {
		c := bkt(tx, bucketScheduleDue).Cursor()
		until := unixNanos(now)
		for k, _ := c.First(); k != nil && binary.BigEndian.Uint64(k) <= until; k, _ = c.Next() {
			if limit > 0 && len(out) == limit {
				return nil
			}
			sc, err := getSchedule(tx, string(k[8:]))
			if err != nil {
				return err
			}
			out = append(out, sc)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("due schedules: %w", err)
	}
	return out, nil
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
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	var out *core.Fire
	err := s.commit.write(func(tx *bbolt.Tx) ([]core.Change, error) {
		out = nil // the committer may run this more than once
		sc, err := getSchedule(tx, id)
		if err != nil {
			return nil, err
		}
		old := *sc
		f, changes, err := record.Fire(sc, due, next, start, s.clock(), record.FireOps{
			Queue: func(id string, req core.QueueRequest, inputs []core.Event) (*core.QueueResult, []core.Change, error) {
				return s.queueInputs(tx, id, req, inputs, true)
			},
			Create: func(req core.NewSession, inputs []core.Event) (*core.CreateResult, []core.Change, error) {
				return s.createSession(tx, req, core.NewID(core.PrefixSession), inputs, true)
			},
			Put: func(sc *core.Schedule) error { return putSchedule(tx, sc, &old) },
		})
		out = f
		return changes, err
	})
	if err != nil {
		return nil, fmt.Errorf("fire schedule: %w", err)
	}
	return out, nil
}
