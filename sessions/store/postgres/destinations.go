package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/switchboardhq/switchboard/sessions/store/record"

	"github.com/jackc/pgx/v5"
	"github.com/switchboardhq/switchboard/core"
)

var (
	_ core.DestinationStore = (*Store)(nil)
	_ core.DeliveryQueue    = (*Store)(nil)
)

// Row locks a read takes (appended to its SELECT); 004_deliveries.sql says
// which write takes which on a destination.
const (
	lockShare     = " FOR SHARE"
	lockNoKey     = " FOR NO KEY UPDATE"
	lockExclusive = " FOR UPDATE"
)

// loadDestination reads a destination, taking lock (one of the lock
// constants, or "") on its row.
func loadDestination(ctx context.Context, q querier, id, lock string) (*core.Destination, error) {
	var body []byte
	err := q.QueryRow(ctx, "SELECT body FROM destinations WHERE id = $1"+lock, id).Scan(&body)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("destination %s: %w", id, core.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read destination %s: %w", id, err)
	}
	return decodeDestination(body)
}

// saveDestination rewrites a destination whose row tx has locked.
func saveDestination(ctx context.Context, tx pgx.Tx, d *core.Destination) error {
	body, err := record.Encode("destination", d.ID, d)
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, "UPDATE destinations SET status = $2, body = $3 WHERE id = $1", d.ID, string(d.Status), body); err != nil {
		return fmt.Errorf("save destination %s: %w", d.ID, err)
	}
	return nil
}

// insertDestination creates a destination (record.NewDestination) with
// its sealed secret in tx. A session destination needs its session
// writable: the session's row is locked, so it cannot be archived before
// tx commits.
func (s *Store) insertDestination(ctx context.Context, tx pgx.Tx, d *core.Destination, sealedSecret []byte) error {
	if d.SessionID != "" {
		if _, err := lockWritable(ctx, tx, d.SessionID); err != nil {
			return err
		}
	}
	body, err := record.Encode("destination", d.ID, d)
	if err != nil {
		return err
	}
	var secret []byte
	if len(sealedSecret) > 0 {
		secret = sealedSecret
	}
	var sessionID *string
	if d.SessionID != "" {
		sessionID = &d.SessionID
	}
	tag, err := tx.Exec(ctx, `INSERT INTO destinations (id, session_id, agent_id, status, body, sealed_secret)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING`,
		d.ID, sessionID, d.AgentID, string(d.Status), body, secret)
	if err != nil {
		return fmt.Errorf("insert destination %s: %w", d.ID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("destination %s already exists: %w", d.ID, core.ErrConflict)
	}
	return nil
}

// CreateDestination saves a destination with its sealed secret.
func (s *Store) CreateDestination(ctx context.Context, nd core.NewDestination) (*core.Destination, error) {
	d, err := record.NewDestination(nd, s.clock())
	if err != nil {
		return nil, fmt.Errorf("create destination: %w", err)
	}
	if err := s.do(ctx, func(tx pgx.Tx) error { return s.insertDestination(ctx, tx, d, nd.SealedSecret) }); err != nil {
		return nil, fmt.Errorf("create destination: %w", err)
	}
	s.log.Debug("destination created", "destination_id", d.ID, "session_id", d.SessionID)
	return d, nil
}

// GetDestination returns a destination.
func (s *Store) GetDestination(ctx context.Context, id string) (*core.Destination, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	d, err := loadDestination(ctx, s.poolFor(ctx), id, "")
	if err != nil {
		return nil, fmt.Errorf("get destination: %w", err)
	}
	return d, nil
}

// DestinationSecret returns a destination's sealed secret (nil: none).
func (s *Store) DestinationSecret(ctx context.Context, id string) ([]byte, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	var secret []byte
	err := s.poolFor(ctx).QueryRow(ctx, "SELECT sealed_secret FROM destinations WHERE id = $1", id).Scan(&secret)
	if errors.Is(err, pgx.ErrNoRows) {
		err = fmt.Errorf("destination %s: %w", id, core.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("destination secret: %w", err)
	}
	return secret, nil
}

// ListDestinations pages through destinations in id order. A session or
// global query reads only that scope.
func (s *Store) ListDestinations(ctx context.Context, q core.DestinationQuery) ([]*core.Destination, bool, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, false, err
	}
	w := sqlConds{args: []any{q.After}}
	switch {
	case q.SessionID != "":
		w.add("session_id = ?", q.SessionID)
	case q.Global || q.AgentID != "":
		w.add("session_id IS NULL")
	}
	if q.AgentID != "" {
		w.add("agent_id = ?", q.AgentID)
	}
	out, more, err := listPage(ctx, s, w.pageSQL("destinations"), w.args, q.Limit, decodeDestination)
	if err != nil {
		return nil, false, fmt.Errorf("list destinations: %w", err)
	}
	return out, more, nil
}

// DeleteDestination deletes a destination, its secret and its streams;
// the deliveries still pending end dead. Delivery records stay.
func (s *Store) DeleteDestination(ctx context.Context, id string) error {
	err := s.do(ctx, func(tx pgx.Tx) error {
		if _, err := loadDestination(ctx, tx, id, lockExclusive); err != nil {
			return err
		}
		pending, err := queryDeliveries(ctx, tx, `SELECT body FROM deliveries
			WHERE destination_id = $1 AND state = 'pending' ORDER BY id FOR UPDATE`, id)
		if err != nil {
			return err
		}
		now := s.clock()
		for _, d := range pending {
			record.Orphaned(d, now)
		}
		if err := saveDeliveries(ctx, tx, pending...); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "DELETE FROM delivery_streams WHERE destination_id = $1", id); err != nil {
			return fmt.Errorf("delete the streams of %s: %w", id, err)
		}
		if _, err := tx.Exec(ctx, "DELETE FROM destinations WHERE id = $1", id); err != nil {
			return fmt.Errorf("delete destination %s: %w", id, err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("delete destination: %w", err)
	}
	s.log.Debug("destination deleted", "destination_id", id)
	return nil
}

// ResumeDestination makes a paused destination active, forgets its run of
// failures, and schedules each of its streams at its first pending
// delivery.
func (s *Store) ResumeDestination(ctx context.Context, id string) (*core.Destination, error) {
	return s.setDestinationStatus(ctx, id, core.DestinationActive, func(tx pgx.Tx, d *core.Destination) error {
		record.ResumeDestination(d, s.clock())
		if err := saveDestination(ctx, tx, d); err != nil {
			return err
		}
		_, err := s.schedule(ctx, tx, d, "")
		return err
	})
}

// PauseDestination pauses an active destination; a paused one is
// returned as it is.
func (s *Store) PauseDestination(ctx context.Context, id string) (*core.Destination, error) {
	return s.setDestinationStatus(ctx, id, core.DestinationPaused, func(tx pgx.Tx, d *core.Destination) error {
		record.PauseDestination(d, s.clock())
		if err := pauseStreams(ctx, tx, d); err != nil {
			return err
		}
		return saveDestination(ctx, tx, d)
	})
}

// setDestinationStatus brings the destination with id to status st with
// change, run under the destination's row lock only when it has another
// status, and returns the destination as it then is.
func (s *Store) setDestinationStatus(ctx context.Context, id string, st core.DestinationStatus, change func(pgx.Tx, *core.Destination) error) (*core.Destination, error) {
	var out *core.Destination
	err := s.do(ctx, func(tx pgx.Tx) error {
		d, err := loadDestination(ctx, tx, id, lockNoKey)
		if err != nil {
			return err
		}
		out = d
		if d.Status == st {
			return nil
		}
		return change(tx, d)
	})
	if err != nil {
		return nil, fmt.Errorf("set destination status to %s: %w", st, err)
	}
	return out, nil
}

// pauseStreams stops the attempts of a destination
// record.PauseDestination paused: its streams leave the due index (their
// deliveries stay queued) until it is resumed. tx holds the destination's
// row.
func pauseStreams(ctx context.Context, tx pgx.Tx, d *core.Destination) error {
	if _, err := tx.Exec(ctx, "UPDATE delivery_streams SET due_at = NULL WHERE destination_id = $1", d.ID); err != nil {
		return fmt.Errorf("pause the streams of %s: %w", d.ID, err)
	}
	return nil
}
