package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
)

// DeliveryEvent reads the logged event a delivery carries and its
// session's metadata, in one statement (one snapshot).
func (s *Store) DeliveryEvent(ctx context.Context, d *core.Delivery) (core.Event, map[string]string, error) {
	if err := ctxErr(ctx); err != nil {
		return core.Event{}, nil, err
	}
	var sessBody, eventBody []byte
	err := s.poolFor(ctx).QueryRow(ctx, `SELECT s.body, e.body FROM sessions s
		LEFT JOIN events e ON e.session_id = s.id AND e.seq = $2
		WHERE s.id = $1`, d.SessionID, int64(d.Seq)).Scan(&sessBody, &eventBody)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		err = fmt.Errorf("session %s: %w", d.SessionID, core.ErrNotFound)
	case err == nil && eventBody == nil:
		err = fmt.Errorf("event %d of session %s: %w", d.Seq, d.SessionID, core.ErrNotFound)
	}
	if err != nil {
		return core.Event{}, nil, fmt.Errorf("delivery event of %s: %w", d.ID, err)
	}
	meta, err := record.SessionMetadata(sessBody)
	if err != nil {
		return core.Event{}, nil, fmt.Errorf("delivery event of %s: %w", d.ID, err)
	}
	e, err := decodeEvent(eventBody)
	if err != nil {
		return core.Event{}, nil, fmt.Errorf("delivery event of %s: %w", d.ID, err)
	}
	return e, meta, nil
}
