package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
)

var _ core.ConsoleStore = (*Store)(nil)

// failureLockClass is the first key of the transaction-level advisory
// locks that order the sign-in attempts of an address (the second is
// lockKey of the address), so each count includes every attempt committed
// before it, whichever replica made it.
const failureLockClass int32 = 0x53_57_43_46 // "SWCF"

// CreateConsoleSession saves a sign-in; an existing id is core.ErrConflict.
func (s *Store) CreateConsoleSession(ctx context.Context, in *core.ConsoleSession) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	cs, v, err := record.NewConsoleSession(in)
	if err != nil {
		return err
	}
	err = s.do(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO console_sessions (id, expires_at, body) VALUES ($1, $2, $3)`, cs.ID, cs.ExpiresAt, v)
		if isUnique(err, "console_sessions_pkey") {
			return fmt.Errorf("console sign-in %s exists: %w", cs.ID, core.ErrConflict)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("create console sign-in: %w", err)
	}
	return nil
}

// GetConsoleSession returns the sign-in with id; core.ErrNotFound when
// there is none or it expired at now.
func (s *Store) GetConsoleSession(ctx context.Context, id string, now time.Time) (*core.ConsoleSession, error) {
	if err := record.ConsoleText("id", id); err != nil {
		return nil, fmt.Errorf("get console sign-in: %w", err)
	}
	cs, err := readOne[core.ConsoleSession](ctx, s, "get console sign-in", "console sign-in", id,
		`SELECT body FROM console_sessions WHERE id = $1`, id)
	if err != nil {
		return nil, err
	}
	if cs, err = record.LiveConsoleSession(cs, now); err != nil {
		return nil, fmt.Errorf("get console sign-in: %w", err)
	}
	return cs, nil
}

// DeleteConsoleSession signs out; deleting nothing is not an error.
func (s *Store) DeleteConsoleSession(ctx context.Context, id string) error {
	if err := record.ConsoleText("id", id); err != nil {
		return fmt.Errorf("delete console sign-in: %w", err)
	}
	return s.deleteOne(ctx, "delete console sign-in", nil, `DELETE FROM console_sessions WHERE id = $1`, id)
}

// failuresIn counts an address's failures made in (from, to].
const failuresIn = `SELECT count(*) FROM console_sign_in_failures WHERE address = $1 AND at > $2 AND at <= $3`

// failuresSince counts an address's failures made after from: another
// replica's clock may be ahead of this one's, and its attempts count.
const failuresSince = `SELECT count(*) FROM console_sign_in_failures WHERE address = $1 AND at > $2`

// ReserveSignIn counts a sign-in attempt from address at now unless
// address has limit counted since now-window. It counts and inserts
// under the address's lock (failureLockClass), so attempts of one address
// made at once on any replicas are counted one after the other. A read
// first refuses an address already at limit without a write.
func (s *Store) ReserveSignIn(ctx context.Context, address string, now time.Time, window time.Duration, limit int) (bool, error) {
	if err := ctxErr(ctx); err != nil {
		return false, err
	}
	from, to, err := record.FailureWindow(address, now, window)
	if err != nil {
		return false, fmt.Errorf("reserve sign-in: %w", err)
	}
	var n int
	if err := s.poolFor(ctx).QueryRow(ctx, failuresSince, address, from).Scan(&n); err != nil {
		return false, fmt.Errorf("reserve sign-in: %w", err)
	}
	if n >= limit {
		return false, nil
	}
	var ok bool
	err = s.do(ctx, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		b.Queue(`SELECT pg_advisory_xact_lock($1, $2)`, failureLockClass, lockKey(address))
		b.Queue(`INSERT INTO console_sign_in_failures (address, at)
			SELECT $1, $3 WHERE (`+failuresSince+`) < $4`, address, from, to, limit).Exec(func(tag pgconn.CommandTag) error {
			ok = tag.RowsAffected() == 1
			return nil
		})
		return tx.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return false, fmt.Errorf("reserve sign-in: %w", err)
	}
	return ok, nil
}

// ReleaseSignIn uncounts one attempt counted for address at now.
func (s *Store) ReleaseSignIn(ctx context.Context, address string, now time.Time) error {
	if err := record.ConsoleText("address", address); err != nil {
		return fmt.Errorf("release sign-in: %w", err)
	}
	return s.deleteOne(ctx, "release sign-in", nil, `DELETE FROM console_sign_in_failures WHERE id = (
		SELECT id FROM console_sign_in_failures WHERE address = $1 AND at = $2 ORDER BY id DESC LIMIT 1)`,
		address, record.ConsoleTime(now))
}

// SignInFailures counts the attempts address has counted in
// (now-window, now].
func (s *Store) SignInFailures(ctx context.Context, address string, now time.Time, window time.Duration) (int, error) {
	if err := ctxErr(ctx); err != nil {
		return 0, err
	}
	from, to, err := record.FailureWindow(address, now, window)
	if err != nil {
		return 0, fmt.Errorf("sign-in failures: %w", err)
	}
	var n int
	if err := s.poolFor(ctx).QueryRow(ctx, failuresIn, address, from, to).Scan(&n); err != nil {
		return 0, fmt.Errorf("sign-in failures: %w", err)
	}
	return n, nil
}

// SweepConsole deletes the sign-ins expired at before (they are no
// longer live then) and the failures made before it, both to the
// millisecond, and returns how many records went, in batches of
// sweepBatch.
func (s *Store) SweepConsole(ctx context.Context, before time.Time) (int, error) {
	if err := ctxErr(ctx); err != nil {
		return 0, err
	}
	cutoff := record.ConsoleTime(before)
	signIns, err := s.sweepRows(ctx, `DELETE FROM console_sessions WHERE id IN (
		SELECT id FROM console_sessions WHERE expires_at <= $1 LIMIT $2)`, cutoff)
	if err != nil {
		return signIns, fmt.Errorf("sweep console sign-ins: %w", err)
	}
	failures, err := s.sweepRows(ctx, `DELETE FROM console_sign_in_failures WHERE id IN (
		SELECT id FROM console_sign_in_failures WHERE at < $1 LIMIT $2)`, cutoff)
	n := signIns + failures
	if err != nil {
		return n, fmt.Errorf("sweep console sign-in failures: %w", err)
	}
	if n > 0 {
		s.log.Debug("swept console records", "count", n, "before", before)
	}
	return n, nil
}
