package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
)

var _ core.LeaseStore = (*Store)(nil)

// TakeLease grants holder the session's lease; see core.LeaseStore. It
// takes the session's row lock, as appends do, so no append can check an
// epoch that a takeover is changing.
func (s *Store) TakeLease(ctx context.Context, sessionID, holder string, ttl time.Duration) (core.Lease, bool, error) {
	if err := record.CheckClaim("take lease", holder, ttl); err != nil {
		return core.Lease{}, false, err
	}
	var out core.Lease
	var ok bool
	err := s.do(ctx, func(tx pgx.Tx) error {
		ok = false
		r, err := lockRow(ctx, tx, sessionID)
		if err != nil {
			return err
		}
		if r == nil {
			return fmt.Errorf("session %s: %w", sessionID, core.ErrNotFound)
		}
		var cur, last *string
		var live, lastAlive bool
		err = tx.QueryRow(ctx, `SELECT l.holder, coalesce(l.expires_at > now(), false), l.last_holder,
				coalesce((SELECT p.expires_at > now() AND NOT p.draining FROM replicas p WHERE p.holder = l.last_holder), false)
			FROM session_leases l WHERE l.session_id = $1`, sessionID).Scan(&cur, &live, &last, &lastAlive)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return err
		case cur != nil && *cur != holder && live:
			return nil
		case cur == nil && last != nil && *last != holder && lastAlive:
			return nil
		}
		var epoch uint64
		err = tx.QueryRow(ctx, `INSERT INTO session_leases (session_id, holder, epoch, expires_at, last_holder)
			VALUES ($1, $2, 1, now() + $3 * interval '1 millisecond', $2)
			ON CONFLICT (session_id) DO UPDATE SET holder = excluded.holder, epoch = session_leases.epoch + 1,
				expires_at = excluded.expires_at, last_holder = excluded.holder
			RETURNING epoch`, sessionID, holder, ttl.Milliseconds()).Scan(&epoch)
		if err != nil {
			return err
		}
		out, ok = core.Lease{SessionID: sessionID, Holder: holder, Epoch: epoch}, true
		if last != nil {
			out.Previous = *last
		}
		return nil
	})
	if err != nil {
		return core.Lease{}, false, fmt.Errorf("take lease: %w", err)
	}
	return out, ok, nil
}

// RenewLease extends a live lease; see core.LeaseStore.
func (s *Store) RenewLease(ctx context.Context, l core.Lease, ttl time.Duration) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	tag, err := s.execRelaxed(ctx, `UPDATE session_leases SET expires_at = now() + $4 * interval '1 millisecond'
		WHERE session_id = $1 AND holder = $2 AND epoch = $3`, l.SessionID, l.Holder, l.Epoch, ttl.Milliseconds())
	if err != nil {
		return fmt.Errorf("renew lease of %s: %w", l.SessionID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("renew lease of %s: %w", l.SessionID, core.ErrLeaseLost)
	}
	return nil
}

// ReleaseLease ends a lease now; see core.LeaseStore.
func (s *Store) ReleaseLease(ctx context.Context, l core.Lease) error {
	_, err := s.execRelaxed(ctx, `UPDATE session_leases SET holder = NULL, expires_at = NULL
		WHERE session_id = $1 AND holder = $2 AND epoch = $3`, l.SessionID, l.Holder, l.Epoch)
	if err != nil {
		return fmt.Errorf("release lease of %s: %w", l.SessionID, err)
	}
	return nil
}

// Heartbeat records that holder is alive; see core.LeaseStore.
func (s *Store) Heartbeat(ctx context.Context, holder string, ttl time.Duration, draining bool) error {
	if err := record.CheckHeartbeat(holder); err != nil {
		return err
	}
	_, err := s.execRelaxed(ctx, `INSERT INTO replicas (holder, expires_at, draining)
		VALUES ($1, now() + $2 * interval '1 millisecond', $3)
		ON CONFLICT (holder) DO UPDATE SET expires_at = excluded.expires_at, draining = excluded.draining`,
		holder, ttl.Milliseconds(), draining)
	if err != nil {
		return fmt.Errorf("heartbeat: %w", err)
	}
	return nil
}

// LastHolder is the holder of the session's latest grant; see
// core.LeaseStore.
func (s *Store) LastHolder(ctx context.Context, sessionID string) (string, error) {
	var last *string
	err := s.poolFor(ctx).QueryRow(ctx, `SELECT last_holder FROM session_leases WHERE session_id = $1`, sessionID).Scan(&last)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && last == nil) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("last holder of %s: %w", sessionID, err)
	}
	return *last, nil
}

// checkLeaseEpoch refuses a fenced write (epoch not zero) whose lease the
// session has moved on from. The caller holds the session's row lock,
// which TakeLease takes too.
func checkLeaseEpoch(ctx context.Context, tx pgx.Tx, sessionID string, epoch uint64) error {
	if epoch == 0 {
		return nil
	}
	var cur uint64
	err := tx.QueryRow(ctx, `SELECT epoch FROM session_leases WHERE session_id = $1`, sessionID).Scan(&cur)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return err
	}
	return record.Fenced(sessionID, cur, epoch)
}
