package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/switchboardhq/switchboard/sessions/store/record"

	"github.com/jackc/pgx/v5"
	"github.com/switchboardhq/switchboard/core"
)

// lockStream locks a stream's row (if it has one), so the stream's head
// is read after any append to it that committed first.
func lockStream(ctx context.Context, tx pgx.Tx, st core.Stream) error {
	_, err := tx.Exec(ctx, "SELECT 1 FROM delivery_streams WHERE destination_id = $1 AND session_id = $2 FOR UPDATE",
		st.DestinationID, st.SessionID)
	if err != nil {
		return fmt.Errorf("lock stream %s/%s: %w", st.DestinationID, st.SessionID, err)
	}
	return nil
}

// schedule makes dest's stream of sessionID (or all its streams, when
// sessionID is "") due at its first pending delivery's next attempt, not
// due while dest is paused, and deletes the streams left empty. It returns
// the streams' first deliveries, in session order. tx holds dest's row.
func (s *Store) schedule(ctx context.Context, tx pgx.Tx, dest *core.Destination, sessionID string) ([]*core.Delivery, error) {
	var heads []*core.Delivery
	var err error
	if sessionID != "" {
		heads, err = queryDeliveries(ctx, tx, `SELECT body FROM deliveries
			WHERE destination_id = $1 AND session_id = $2 AND state = 'pending' ORDER BY seq LIMIT 1`, dest.ID, sessionID)
	} else {
		heads, err = queryDeliveries(ctx, tx, `SELECT DISTINCT ON (session_id) body FROM deliveries
			WHERE destination_id = $1 AND state = 'pending' ORDER BY session_id, seq`, dest.ID)
	}
	if err != nil {
		return nil, err
	}
	sessions, dues := make([]string, len(heads)), make([]*int64, len(heads))
	for i, h := range heads {
		sessions[i] = h.SessionID
		if dest.Status != core.DestinationActive {
			continue
		}
		at := s.now().UnixMilli()
		if h.NextAttemptAt != nil {
			at = h.NextAttemptAt.UnixMilli()
		}
		dues[i] = &at
	}
	_, err = tx.Exec(ctx, `INSERT INTO delivery_streams (destination_id, session_id, due_at)
		SELECT $1, u.session_id, u.due_at FROM unnest($2::text[], $3::bigint[]) AS u(session_id, due_at)
		ON CONFLICT (destination_id, session_id) DO UPDATE SET due_at = EXCLUDED.due_at`, dest.ID, sessions, dues)
	if err != nil {
		return nil, fmt.Errorf("schedule the streams of %s: %w", dest.ID, err)
	}
	_, err = tx.Exec(ctx, `DELETE FROM delivery_streams
		WHERE destination_id = $1 AND ($2 = '' OR session_id = $2) AND NOT (session_id = ANY($3))`, dest.ID, sessionID, sessions)
	if err != nil {
		return nil, fmt.Errorf("drop the empty streams of %s: %w", dest.ID, err)
	}
	return heads, nil
}

// errDestinationBusy makes RecordAttempt run again holding the destination
// exclusively: it found the destination's state to change.
var errDestinationBusy = errors.New("the attempt changes its destination")

// RecordAttempt stores an attempt's outcome and moves the stream on. A
// success that changes nothing on the destination holds its row shared,
// so attempts to its streams and appends to its sessions go on together;
// a failure (or the success that ends a run of failures) holds it
// exclusively.
func (s *Store) RecordAttempt(ctx context.Context, c core.Claim, id string, r core.AttemptResult) (*core.Delivery, *core.Delivery, error) {
	lock := lockShare
	if !r.Success {
		lock = lockNoKey
	}
	for {
		var stored, next *core.Delivery
		err := s.do(ctx, func(tx pgx.Tx) error {
			var err error
			stored, next, err = s.recordAttempt(ctx, tx, c, id, r, lock)
			return err
		})
		if errors.Is(err, errDestinationBusy) && lock == lockShare {
			lock = lockNoKey
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("record attempt: %w", err)
		}
		return stored, next, nil
	}
}

// RecordAttempts stores the attempts in one transaction, holding their
// destinations as RecordAttempt would hold each one's: shared while every
// attempt succeeds and changes no destination, else exclusively.
func (s *Store) RecordAttempts(ctx context.Context, attempts []core.AttemptRecord) ([]core.RecordedAttempt, error) {
	lock := lockShare
	for _, a := range attempts {
		if !a.Result.Success {
			lock = lockNoKey
		}
	}
	for {
		out := make([]core.RecordedAttempt, len(attempts))
		err := s.do(ctx, func(tx pgx.Tx) error {
			for i, a := range attempts {
				stored, next, err := s.recordAttempt(ctx, tx, a.Claim, a.ID, a.Result, lock)
				if err != nil && (errors.Is(err, errDestinationBusy) || !record.AttemptRefused(err)) {
					return err
				}
				// A refusal comes before its attempt writes anything.
				out[i] = core.RecordedAttempt{Stored: stored, Next: next, Err: record.AttemptErr(err)}
			}
			return nil
		})
		if errors.Is(err, errDestinationBusy) && lock == lockShare {
			lock = lockNoKey
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("record attempts: %w", err)
		}
		return out, nil
	}
}

func (s *Store) recordAttempt(ctx context.Context, tx pgx.Tx, c core.Claim, id string, r core.AttemptResult, lock string) (stored, next *core.Delivery, err error) {
	d, err := loadDelivery(ctx, tx, id, "")
	if err != nil {
		return nil, nil, err
	}
	dest, destErr := loadDestination(ctx, tx, d.DestinationID, lock)
	if destErr != nil && !errors.Is(destErr, core.ErrNotFound) {
		return nil, nil, destErr
	}
	if err := lockClaim(ctx, tx, d.Stream(), c); err != nil {
		return nil, nil, err
	}
	if d, err = loadDelivery(ctx, tx, id, lockExclusive); err != nil {
		return nil, nil, err
	}
	now := s.clock()
	record.AddAttempt(d, r.Attempt, now)
	if d.State != core.DeliveryPending {
		// Settled already: keep the attempt for the record, move nothing.
		return d, nil, saveDeliveries(ctx, tx, d)
	}
	if destErr != nil {
		return nil, nil, destErr
	}
	if lock == lockShare && (!r.Success || dest.FailingSince != nil) {
		return nil, nil, errDestinationBusy
	}
	a := record.Attempted(d, dest, r, now)
	if a.Paused {
		if err := pauseStreams(ctx, tx, dest); err != nil {
			return nil, nil, err
		}
		s.log.Warn("destination paused after failing", "destination_id", dest.ID, "failing_since", dest.FailingSince.Time)
	}
	if a.DestinationChanged {
		if err := saveDestination(ctx, tx, dest); err != nil {
			return nil, nil, err
		}
	}
	if err := saveDeliveries(ctx, tx, d); err != nil {
		return nil, nil, err
	}
	heads, err := s.schedule(ctx, tx, dest, d.SessionID)
	if err != nil {
		return nil, nil, err
	}
	if len(heads) > 0 && record.DueNow(heads[0], dest, now) {
		next = heads[0]
	}
	return d, next, settleClaim(ctx, tx, d.Stream(), c, next != nil)
}

// QueuedDeliveries returns a stream's pending deliveries after a seq; see
// core.DeliveryQueue.
func (s *Store) QueuedDeliveries(ctx context.Context, st core.Stream, after uint64, limit int) ([]*core.Delivery, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	if limit <= 0 {
		return nil, nil
	}
	ds, err := queryDeliveries(ctx, s.poolFor(ctx), `SELECT body FROM deliveries
		WHERE destination_id = $1 AND session_id = $2 AND state = 'pending' AND seq > $3
		ORDER BY seq LIMIT $4`, st.DestinationID, st.SessionID, int64(after), limit)
	if err != nil {
		return nil, fmt.Errorf("queued deliveries of %s/%s: %w", st.DestinationID, st.SessionID, err)
	}
	return ds, nil
}
