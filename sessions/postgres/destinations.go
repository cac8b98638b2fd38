package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/switchboardhq/switchboard/core"
)

// insertDestination creates a destination in tx.
func (s *Store) insertDestination(ctx context.Context, tx pgx.Tx, nd core.NewDestination, now core.Time) (*core.Destination, error) {
	return nil, fmt.Errorf("destinations: %w", core.ErrInvalid)
}
