package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
)

// DeliveryPayload reads the logged event a delivery carries, its
// session's metadata and its destination's status, in one statement (one
// snapshot).
func (s *Store) DeliveryPayload(ctx context.Context, d *core.Delivery) (core.DeliveryPayload, error) {
	if err := ctxErr(ctx); err != nil {
		return core.DeliveryPayload{}, err
	}
	var sessBody, eventBody []byte
	var status *string
	err := s.poolFor(ctx).QueryRow(ctx, `SELECT s.body, e.body, (SELECT status FROM destinations WHERE id = $3) FROM sessions s
		LEFT JOIN events e ON e.session_id = s.id AND e.seq = $2
		WHERE s.id = $1`, d.SessionID, int64(d.Seq), d.DestinationID).Scan(&sessBody, &eventBody, &status)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		err = fmt.Errorf("session %s: %w", d.SessionID, core.ErrNotFound)
	case err == nil && eventBody == nil:
		err = fmt.Errorf("event %d of session %s: %w", d.Seq, d.SessionID, core.ErrNotFound)
	}
	if err != nil {
		return core.DeliveryPayload{}, fmt.Errorf("delivery payload of %s: %w", d.ID, err)
	}
	meta, err := record.SessionMetadata(sessBody)
	if err != nil {
		return core.DeliveryPayload{}, fmt.Errorf("delivery payload of %s: %w", d.ID, err)
	}
	e, err := decodeEvent(eventBody)
	if err != nil {
		return core.DeliveryPayload{}, fmt.Errorf("delivery payload of %s: %w", d.ID, err)
	}
	paused := status != nil && core.DestinationStatus(*status) == core.DestinationPaused
	return core.DeliveryPayload{Event: e, Metadata: meta, DestinationPaused: paused}, nil
}
