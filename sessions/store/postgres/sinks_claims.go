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

// ClaimSink grants holder a sink's output of a session; see
// core.SinkStore. One statement: the upsert takes the claim's row lock,
// so two replicas claiming at once are ordered and one of them is refused.
func (s *Store) ClaimSink(ctx context.Context, sink, sessionID, holder string, ttl time.Duration) (core.Claim, bool, error) {
	if err := record.CheckSinkClaim(sink, sessionID, holder, ttl); err != nil {
		return core.Claim{}, false, err
	}
	// Replicas that follow a session another renders try again and again:
	// a read that finds the claim live spares the database a write.
	var live bool
	err := s.poolFor(ctx).QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM sink_claims WHERE sink = $1 AND session_id = $2
		AND holder IS NOT NULL AND holder <> $3 AND expires_at > now())`, sink, sessionID, holder).Scan(&live)
	if err != nil {
		return core.Claim{}, false, fmt.Errorf("claim sink %s of %s: %w", sink, sessionID, err)
	}
	if live {
		return core.Claim{}, false, nil
	}
	var epoch uint64
	err = s.poolFor(ctx).QueryRow(ctx, `INSERT INTO sink_claims (sink, session_id, holder, epoch, expires_at)
		VALUES ($1, $2, $3, 1, now() + $4 * interval '1 millisecond')
		ON CONFLICT (sink, session_id) DO UPDATE SET holder = excluded.holder, epoch = sink_claims.epoch + 1,
			expires_at = excluded.expires_at
		WHERE sink_claims.holder IS NULL OR sink_claims.holder = excluded.holder OR sink_claims.expires_at <= now()
		RETURNING epoch`, sink, sessionID, holder, ttl.Milliseconds()).Scan(&epoch)
	if errors.Is(err, pgx.ErrNoRows) {
		return core.Claim{}, false, nil
	}
	if err != nil {
		return core.Claim{}, false, fmt.Errorf("claim sink %s of %s: %w", sink, sessionID, err)
	}
	return core.Claim{Holder: holder, Epoch: epoch}, true, nil
}

// RenewSinkClaim extends a live claim; see core.SinkStore.
func (s *Store) RenewSinkClaim(ctx context.Context, sink, sessionID string, c core.Claim, ttl time.Duration) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	tag, err := s.execRelaxed(ctx, `UPDATE sink_claims SET expires_at = now() + $5 * interval '1 millisecond'
		WHERE sink = $1 AND session_id = $2 AND holder = $3 AND epoch = $4`, sink, sessionID, c.Holder, c.Epoch, ttl.Milliseconds())
	if err != nil {
		return fmt.Errorf("renew sink claim %s of %s: %w", sink, sessionID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("renew sink claim %s of %s: %w", sink, sessionID, core.ErrLeaseLost)
	}
	return nil
}

// ReleaseSinkClaim ends a claim now; see core.SinkStore.
func (s *Store) ReleaseSinkClaim(ctx context.Context, sink, sessionID string, c core.Claim) error {
	_, err := s.execRelaxed(ctx, `UPDATE sink_claims SET holder = NULL, expires_at = NULL
		WHERE sink = $1 AND session_id = $2 AND holder = $3 AND epoch = $4`, sink, sessionID, c.Holder, c.Epoch)
	if err != nil {
		return fmt.Errorf("release sink claim %s of %s: %w", sink, sessionID, err)
	}
	return nil
}

// checkSinkClaim refuses a write of a claim the stream has moved on from.
// It locks the claim's row (shared), so a claim being granted meanwhile
// waits for the write, or the write sees its epoch.
func checkSinkClaim(ctx context.Context, tx pgx.Tx, sink, sessionID string, c core.Claim) error {
	var cur uint64
	err := tx.QueryRow(ctx, `SELECT epoch FROM sink_claims WHERE sink = $1 AND session_id = $2 FOR SHARE`, sink, sessionID).Scan(&cur)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return err
	}
	return record.SinkClaimed(cur, c)
}
