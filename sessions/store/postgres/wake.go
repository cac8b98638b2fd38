package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// queueWake queues the write of the session's wake at at; unless move is
// set, an earlier wake already there stays.
func queueWake(b *pgx.Batch, sessionID string, at time.Time, move bool) {
	keep := `least(wakes.due_at, excluded.due_at)`
	if move {
		keep = `excluded.due_at`
	}
	b.Queue(`INSERT INTO wakes (session_id, due_at) VALUES ($1, $2)
		ON CONFLICT (session_id) DO UPDATE SET due_at = `+keep, sessionID, at.UnixNano())
}

// putWake writes a wake of a session that may still change (archived
// sessions are never visited, so they refuse).
func (s *Store) putWake(ctx context.Context, sessionID string, at time.Time, move bool, epoch uint64) error {
	return s.do(ctx, func(tx pgx.Tx) error {
		if _, err := lockWritable(ctx, tx, sessionID); err != nil {
			return err
		}
		if err := checkLeaseEpoch(ctx, tx, sessionID, epoch); err != nil {
			return err
		}
		b := &pgx.Batch{}
		queueWake(b, sessionID, at, move)
		return tx.SendBatch(ctx, b).Close()
	})
}

// ScheduleWake asks for a visit at or after at; an earlier request wins.
func (s *Store) ScheduleWake(ctx context.Context, sessionID string, at time.Time) error {
	if err := s.putWake(ctx, sessionID, at, false, 0); err != nil {
		return fmt.Errorf("schedule wake: %w", err)
	}
	return nil
}

// MoveWake replaces the session's wake with at, later or earlier.
func (s *Store) MoveWake(ctx context.Context, sessionID string, at time.Time, epoch uint64) error {
	if err := s.putWake(ctx, sessionID, at, true, epoch); err != nil {
		return fmt.Errorf("move wake: %w", err)
	}
	return nil
}

// DueWakes returns, earliest first, up to limit (0: all) sessions whose
// wake is due at now. It leaves them scheduled; the runtime clears a wake
// once it has visited.
func (s *Store) DueWakes(ctx context.Context, now time.Time, limit int) ([]string, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	var lim *int
	if limit > 0 {
		lim = &limit
	}
	// A session another runtime holds is not due for this one: its holder
	// runs it, and NextWake tells when the lease would run out.
	out, err := s.ids(ctx, `SELECT w.session_id FROM wakes w
		LEFT JOIN session_leases l ON l.session_id = w.session_id AND l.holder IS NOT NULL AND l.expires_at > now()
		WHERE w.due_at <= $1 AND l.session_id IS NULL
		ORDER BY w.due_at, w.session_id LIMIT $2`, now.UnixNano(), lim)
	if err != nil {
		return nil, fmt.Errorf("due wakes: %w", err)
	}
	return out, nil
}

// NextWake returns the earliest scheduled wake. A session whose lease is
// live wakes no earlier than when the lease would run out (on the store's
// clock, from the database's remaining time).
func (s *Store) NextWake(ctx context.Context) (time.Time, bool, error) {
	if err := ctxErr(ctx); err != nil {
		return time.Time{}, false, err
	}
	var at *int64
	now := s.now().UnixNano()
	if err := s.poolFor(ctx).QueryRow(ctx, `SELECT min(greatest(w.due_at, CASE WHEN l.session_id IS NULL THEN 0
			ELSE $1 + (extract(epoch FROM l.expires_at - now()) * 1e9)::bigint END))
		FROM wakes w
		LEFT JOIN session_leases l ON l.session_id = w.session_id AND l.holder IS NOT NULL AND l.expires_at > now()`, now).Scan(&at); err != nil {
		return time.Time{}, false, fmt.Errorf("next wake: %w", err)
	}
	if at == nil {
		return time.Time{}, false, nil
	}
	return time.Unix(0, *at).UTC(), true, nil
}

// ClearWake removes the session's wake, if any. It takes the session's
// lock like every write of the session, so it orders with the writes
// that queue inputs and schedule a wake.
func (s *Store) ClearWake(ctx context.Context, sessionID string, epoch uint64) error {
	_, err := s.clearWake(ctx, sessionID, epoch, false)
	return err
}

// ClearWakeUnlessQueued removes the session's wake unless inputs are
// queued on it, looked for under the session's lock, which queueing
// takes too.
func (s *Store) ClearWakeUnlessQueued(ctx context.Context, sessionID string, epoch uint64) (bool, error) {
	return s.clearWake(ctx, sessionID, epoch, true)
}

// clearWake removes the session's wake; with unlessQueued, only when no
// input is queued on it, and queued reports whether one is.
func (s *Store) clearWake(ctx context.Context, sessionID string, epoch uint64, unlessQueued bool) (queued bool, err error) {
	if err := ctxErr(ctx); err != nil {
		return false, err
	}
	const look = `SELECT EXISTS (SELECT 1 FROM wakes WHERE session_id = $1),
		$2::boolean AND EXISTS (SELECT 1 FROM pending_inputs WHERE session_id = $1)`
	// Clearing nothing, or finding inputs, must not cost a write.
	var scheduled bool
	if err := s.poolFor(ctx).QueryRow(ctx, look, sessionID, unlessQueued).Scan(&scheduled, &queued); err != nil || queued || !scheduled {
		if err != nil {
			return false, fmt.Errorf("clear wake: %w", err)
		}
		return queued, nil
	}
	err = s.do(ctx, func(tx pgx.Tx) error {
		if _, err := lockRow(ctx, tx, sessionID); err != nil {
			return err
		}
		if err := checkLeaseEpoch(ctx, tx, sessionID, epoch); err != nil {
			return err
		}
		// Again under the lock: an input queued since keeps its wake.
		if err := tx.QueryRow(ctx, look, sessionID, unlessQueued).Scan(&scheduled, &queued); err != nil || queued {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM wakes WHERE session_id = $1`, sessionID)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("clear wake: %w", err)
	}
	return queued, nil
}

// OpenTurns returns the leases: sessions with a turn started and not
// completed, and who started it.
func (s *Store) OpenTurns(ctx context.Context) (map[string]string, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	rows, err := s.poolFor(ctx).Query(ctx, `SELECT id, lease_holder FROM sessions WHERE lease_holder IS NOT NULL`)
	if err != nil {
		return nil, fmt.Errorf("open turns: %w", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, holder string
		if err := rows.Scan(&id, &holder); err != nil {
			return nil, fmt.Errorf("open turns: %w", err)
		}
		out[id] = holder
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("open turns: %w", err)
	}
	return out, nil
}
