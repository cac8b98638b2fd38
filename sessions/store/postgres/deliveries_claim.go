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

// claimSQL claims up to $2 streams due by $1 (unix ms) whose claim is
// absent or expired by the database's clock, earliest first, for holder
// $3 and $4 ms, and reads each one's first pending delivery. SKIP LOCKED
// passes over the streams another transaction is writing (an append, an
// attempt, another replica's claim) rather than waiting for it.
const claimSQL = `WITH picked AS (
		SELECT destination_id, session_id, due_at FROM delivery_streams
		WHERE due_at <= $1 AND (holder IS NULL OR expires_at <= now())
		ORDER BY due_at, destination_id, session_id
		LIMIT $2
		FOR UPDATE SKIP LOCKED
	), claimed AS (
		UPDATE delivery_streams st SET holder = $3, epoch = nextval('delivery_claim_epochs'),
			expires_at = now() + $4 * interval '1 millisecond', claim_ms = $4
		FROM picked WHERE st.destination_id = picked.destination_id AND st.session_id = picked.session_id
		RETURNING st.destination_id, st.session_id, st.epoch, picked.due_at
	)
	SELECT c.due_at, c.destination_id, c.session_id, c.epoch, h.body FROM claimed c
	LEFT JOIN LATERAL (
		SELECT d.body FROM deliveries d
		WHERE d.destination_id = c.destination_id AND d.session_id = c.session_id AND d.state = 'pending'
		ORDER BY d.seq LIMIT 1
	) h ON true
	ORDER BY c.due_at, c.destination_id, c.session_id`

// nextSQL is when a stream not claimed now may be: the earliest due time
// of those no live claim holds, or, for one another holder ($2) claimed,
// the later of its due time and its claim's expiry, carried over to the
// caller's clock ($1, unix ms) by the time left.
const nextSQL = `SELECT least(
	(SELECT due_at FROM delivery_streams
		WHERE due_at IS NOT NULL AND (holder IS NULL OR expires_at <= now())
		ORDER BY due_at LIMIT 1),
	(SELECT min(greatest(due_at, $1 + ceil(extract(epoch FROM expires_at - now()) * 1000)::bigint))
		FROM delivery_streams
		WHERE holder IS NOT NULL AND holder <> $2 AND expires_at > now() AND due_at IS NOT NULL))`

// ClaimDeliveries claims due streams for holder; see core.DeliveryQueue.
// One short transaction: the claims are written before any attempt.
func (s *Store) ClaimDeliveries(ctx context.Context, holder string, ttl time.Duration, now time.Time, limit int) ([]core.ClaimedDelivery, time.Time, error) {
	if err := record.CheckClaim("claim deliveries", holder, ttl); err != nil {
		return nil, time.Time{}, err
	}
	limit = record.ClaimLimit(limit)
	var due []core.ClaimedDelivery
	var next *int64
	err := s.do(ctx, func(tx pgx.Tx) error {
		due, next = nil, nil
		rows, err := tx.Query(ctx, claimSQL, now.UnixMilli(), limit, holder, ttl.Milliseconds())
		if err != nil {
			return err
		}
		var at int64
		var st core.Stream
		var epoch uint64
		var head []byte
		_, err = pgx.ForEachRow(rows, []any{&at, &st.DestinationID, &st.SessionID, &epoch, &head}, func() error {
			if head == nil {
				s.log.Warn("due stream has no delivery", "destination_id", st.DestinationID, "session_id", st.SessionID)
				return nil
			}
			d, err := record.DecodeDelivery(head)
			if err != nil {
				return err
			}
			due = append(due, core.ClaimedDelivery{Delivery: d, Claim: core.Claim{Holder: holder, Epoch: epoch}})
			return nil
		})
		if err != nil {
			return err
		}
		return tx.QueryRow(ctx, nextSQL, now.UnixMilli(), holder).Scan(&next)
	})
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("claim deliveries: %w", err)
	}
	var at time.Time
	if next != nil {
		at = time.UnixMilli(*next)
	}
	return due, at, nil
}

// lockClaim locks a stream's row and refuses a write of claim c when the
// stream's claim has another epoch (another holder claimed it since, or
// the row went with its destination).
func lockClaim(ctx context.Context, tx pgx.Tx, st core.Stream, c core.Claim) error {
	var epoch uint64
	err := tx.QueryRow(ctx, "SELECT epoch FROM delivery_streams WHERE destination_id = $1 AND session_id = $2 FOR UPDATE",
		st.DestinationID, st.SessionID).Scan(&epoch)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("lock stream %s/%s: %w", st.DestinationID, st.SessionID, err)
	}
	return record.StreamClaimed(st, epoch, c)
}

// settleClaim renews the claim of a stream whose holder goes on with its
// next delivery, and releases it when the holder stops. A stream that
// emptied has no row left to settle.
func settleClaim(ctx context.Context, tx pgx.Tx, st core.Stream, c core.Claim, goOn bool) error {
	sql := "UPDATE delivery_streams SET holder = NULL, expires_at = NULL"
	if goOn {
		sql = "UPDATE delivery_streams SET expires_at = now() + claim_ms * interval '1 millisecond'"
	}
	_, err := tx.Exec(ctx, sql+" WHERE destination_id = $1 AND session_id = $2 AND epoch = $3", st.DestinationID, st.SessionID, c.Epoch)
	if err != nil {
		return fmt.Errorf("settle the claim of %s/%s: %w", st.DestinationID, st.SessionID, err)
	}
	return nil
}

// ReleaseDeliveryClaims ends holder's claims; see core.DeliveryQueue.
func (s *Store) ReleaseDeliveryClaims(ctx context.Context, holder string) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	_, err := s.poolFor(ctx).Exec(ctx, "UPDATE delivery_streams SET holder = NULL, expires_at = NULL WHERE holder = $1", holder)
	if err != nil {
		return fmt.Errorf("release delivery claims of %s: %w", holder, err)
	}
	return nil
}
