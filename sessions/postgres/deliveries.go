package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/switchboardhq/switchboard/core"
)

// enqueueDeliveries queues, in the append's transaction, a delivery of
// each event to every destination that wants it.
func (s *Store) enqueueDeliveries(ctx context.Context, tx pgx.Tx, sess *core.Session, events []core.Event, now core.Time) error {
	return nil
}
