package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
)

var _ core.ScheduleStore = (*Store)(nil)

const scheduleSQL = `SELECT body FROM schedules WHERE id = $1`

// putSchedule writes a schedule's row, new or not.
func putSchedule(ctx context.Context, q pgx.Tx, sc *core.Schedule) error {
	raw, err := record.Encode("schedule", sc.ID, sc)
	if err != nil {
		return err
	}
	var next *int64
	if sc.NextAt != nil {
		n := sc.NextAt.UnixNano()
		next = &n
	}
	_, err = q.Exec(ctx, `INSERT INTO schedules (id, next_at, session, made_by, body) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (id) DO UPDATE SET next_at = EXCLUDED.next_at, session = EXCLUDED.session, body = EXCLUDED.body`,
		sc.ID, next, sc.Target.SessionID, sc.CreatedBy, raw)
	return err
}

// CreateSchedule saves a new schedule.
func (s *Store) CreateSchedule(ctx context.Context, in *core.Schedule) (*core.Schedule, error) {
	out, err := record.NewSchedule(in, s.clock())
	if err != nil {
		return nil, err
	}
	if err := s.do(ctx, func(tx pgx.Tx) error { return putSchedule(ctx, tx, out) }); err != nil {
		return nil, fmt.Errorf("create schedule: %w", err)
	}
	return out, nil
}

// GetSchedule returns a schedule.
func (s *Store) GetSchedule(ctx context.Context, id string) (*core.Schedule, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	return getBody[core.Schedule](ctx, s.poolFor(ctx), "schedule", id, scheduleSQL, id)
}

// ListSchedules pages through schedules in id order.
func (s *Store) ListSchedules(ctx context.Context, q core.ScheduleQuery) ([]*core.Schedule, bool, error) {
	if q.Session != "" {
		return bodyPage[core.Schedule](ctx, s, "schedules", `SELECT body FROM schedules
			WHERE id > $1 AND (session = $3 OR made_by = $3) ORDER BY id LIMIT $2`, q.After, q.Limit, q.Session)
	}
	return bodyPage[core.Schedule](ctx, s, "schedules", `SELECT body FROM schedules WHERE id > $1 ORDER BY id LIMIT $2`, q.After, q.Limit)
}

// lockSchedule reads a schedule under its row's lock.
func lockSchedule(ctx context.Context, tx pgx.Tx, id string) (*core.Schedule, error) {
	return getBody[core.Schedule](ctx, tx, "schedule", id, scheduleSQL+` FOR UPDATE`, id)
}

// UpdateSchedule applies fn to a schedule and saves it.
func (s *Store) UpdateSchedule(ctx context.Context, id string, fn func(*core.Schedule) error) (*core.Schedule, error) {
	var out *core.Schedule
	err := s.do(ctx, func(tx pgx.Tx) error {
		old, err := lockSchedule(ctx, tx, id)
		if err != nil {
			return err
		}
		next, err := record.UpdateSchedule(old, fn, s.clock())
		if err != nil {
			return err
		}
		out = next
		return putSchedule(ctx, tx, next)
	})
	if err != nil {
		return nil, fmt.Errorf("update schedule: %w", err)
	}
	return out, nil
}

// DeleteSchedule deletes a schedule.
func (s *Store) DeleteSchedule(ctx context.Context, id string) error {
	err := s.do(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM schedules WHERE id = $1`, id)
		if err == nil && tag.RowsAffected() == 0 {
			err = fmt.Errorf("schedule %q: %w", id, core.ErrNotFound)
		}
		return err
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
	var lim *int
	if limit > 0 {
		lim = &limit
	}
	rows, err := s.poolFor(ctx).Query(ctx, `SELECT body FROM schedules WHERE next_at <= $1 ORDER BY next_at, id LIMIT $2`, now.UnixNano(), lim)
	if err != nil {
		return nil, fmt.Errorf("due schedules: %w", err)
	}
	out, err := collect(rows, func(raw []byte) (*core.Schedule, error) { return record.Decode[core.Schedule]("schedule", raw) })
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
	var next *int64
	if err := s.poolFor(ctx).QueryRow(ctx, `SELECT min(next_at) FROM schedules`).Scan(&next); err != nil {
		return time.Time{}, false, fmt.Errorf("next schedule: %w", err)
	}
	if next == nil {
		return time.Time{}, false, nil
	}
	return time.Unix(0, *next).UTC(), true, nil
}

// FireSchedule queues the schedule's input for its due time and moves it
// on, in one transaction under the schedule's row lock.
func (s *Store) FireSchedule(ctx context.Context, id string, due time.Time, next *time.Time, start *core.NewSession) (*core.Fire, error) {
	sc, err := s.GetSchedule(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("fire schedule: %w", err)
	}
	// The write is ordered by the session it queues on.
	stripe := sc.Target.SessionID
	newID := core.NewID(core.PrefixSession)
	if stripe == "" {
		stripe = newID
	}
	var out *core.Fire
	err = s.write(ctx, stripe, func(tx pgx.Tx) ([]core.Change, error) {
		sc, err := lockSchedule(ctx, tx, id)
		if err != nil {
			return nil, err
		}
		f, changes, err := record.Fire(sc, due, next, start, s.clock(), record.FireOps{
			Queue: func(id string, req core.QueueRequest, inputs []core.Event) (*core.QueueResult, []core.Change, error) {
				return s.queueInputs(ctx, tx, id, req, inputs)
			},
			Create: func(req core.NewSession, inputs []core.Event) (*core.CreateResult, []core.Change, error) {
				return s.createTx(ctx, tx, req, newID, stripe, inputs, nil)
			},
			Put: func(sc *core.Schedule) error { return putSchedule(ctx, tx, sc) },
		})
		out = f
		return changes, err
	})
	if err != nil {
		return nil, fmt.Errorf("fire schedule: %w", err)
	}
	return out, nil
}
