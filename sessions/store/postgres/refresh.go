package postgres

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
)

// refreshLockClass is the first key of the advisory locks that order an
// installation's token refreshes (the second is a hash of its id). The
// two-key form never meets migrateLock, a single bigint key.
const refreshLockClass int32 = 0x53_57_52_46 // "SWRF"

// lockKey is the second key of an advisory lock of a class (an
// installation's refresh lock, an address's failed sign-ins): a hash of
// what it locks. Two sharing one only wait for each other.
func lockKey(id string) int32 {
	h := fnv.New32a()
	h.Write([]byte(id))
	return int32(h.Sum32())
}

// RefreshInstallationTokens renews an installation's tokens one replica
// at a time: Slack's rotating refresh tokens and Linear's are single-use,
// so two replicas must never spend the same one. It holds the
// installation's refresh lock while it reads the sealed tokens, runs
// refresh with them and stores what refresh returns (with its expiry);
// a caller that waited for the lock gets the tokens the previous holder
// stored. refresh returns nil to keep the current tokens (another
// replica renewed them meanwhile), and must not use the store. It
// returns the tokens stored when it ends; an installation without tokens
// is core.ErrNotFound, and refresh is not run.
//
// The lock is a session advisory lock on a connection of its own, not a
// row lock: no transaction stays open while refresh calls the platform,
// the installation's other writes never wait for it, and a replica that
// dies holding it frees it with its connection. The new tokens are
// written on that connection, so a holder that lost its connection (and
// the lock with it) cannot overwrite what the next holder stored.
func (s *Store) RefreshInstallationTokens(ctx context.Context, id string, refresh func(current []byte) (next []byte, expiresAt *core.Time, err error)) ([]byte, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("refresh installation tokens: %w", err)
	}
	defer conn.Release()
	key := lockKey(id)
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1, $2)", refreshLockClass, key); err != nil {
		// A wait cancelled just as the lock was granted may leave it held:
		// the connection goes, and the lock with it.
		_ = conn.Conn().Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("refresh installation tokens: wait for the lock: %w", err)
	}
	defer unlockRefresh(ctx, conn, key)
	current, err := installationTokens(ctx, conn, id)
	if err != nil {
		return nil, fmt.Errorf("refresh installation tokens: %w", err)
	}
	return record.RefreshTokens(s.log, id, current, refresh, func(next []byte, expiresAt *core.Time) error {
		// On the lock's connection: a holder that lost it (and the lock
		// with it) cannot overwrite what the next holder stored.
		wctx := context.WithoutCancel(ctx)
		for attempt := 1; ; attempt++ {
			err := pgx.BeginFunc(wctx, conn, func(tx pgx.Tx) error { return s.replaceTokens(wctx, tx, id, next, expiresAt) })
			if err == nil || !retryable(err) || attempt == maxAttempts {
				return err
			}
		}
	})
}

// unlockRefresh releases the refresh lock; a connection that cannot
// release it is closed (which does), never returned to the pool holding it.
func unlockRefresh(ctx context.Context, conn *pgxpool.Conn, key int32) {
	ctx = context.WithoutCancel(ctx)
	var released bool
	err := conn.QueryRow(ctx, "SELECT pg_advisory_unlock($1, $2)", refreshLockClass, key).Scan(&released)
	if err != nil || !released {
		_ = conn.Conn().Close(ctx)
	}
}

// installationTokens reads the sealed tokens with q; one statement tells
// a missing installation from one without tokens.
func installationTokens(ctx context.Context, q querier, id string) ([]byte, error) {
	var sealed []byte
	err := q.QueryRow(ctx, `SELECT t.sealed FROM installations i
		LEFT JOIN installation_tokens t ON t.installation_id = i.id WHERE i.id = $1`, id).Scan(&sealed)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, fmt.Errorf("installation %q: %w", id, core.ErrNotFound)
	case err != nil:
		return nil, fmt.Errorf("tokens of installation %q: %w", id, err)
	case sealed == nil:
		return nil, fmt.Errorf("tokens of installation %q: %w", id, core.ErrNotFound)
	}
	return sealed, nil
}
