package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
)

var _ core.OnceStore = (*Store)(nil)

// Once records key until the given time and reports whether it is new. It
// first deletes the keys that expired by the store's clock, so the table
// holds only live keys. Two replicas recording one key at once meet on
// its primary key: the second waits for the first's commit and finds it.
func (s *Store) Once(ctx context.Context, key string, until time.Time) (bool, error) {
	if err := ctxErr(ctx); err != nil {
		return false, err
	}
	if err := record.CheckOnceKey(key); err != nil {
		return false, err
	}
	fresh := false
	err := s.do(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "DELETE FROM once_keys WHERE until <= $1", s.now()); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, "INSERT INTO once_keys (key, until) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING", key, until)
		fresh = err == nil && tag.RowsAffected() == 1
		return err
	})
	if err != nil {
		return false, fmt.Errorf("once %q: %w", key, err)
	}
	return fresh, nil
}
