package postgres

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/switchboardhq/switchboard/core"
)

// ErrMasterKeyMismatch is returned by CheckMasterKey when the database was
// first used with another master key.
var ErrMasterKeyMismatch = errors.New("the master key differs from the one this database was first used with")

// CheckMasterKey records check, a value derived from the master key, the
// first time a database is used, and refuses another one afterwards: a
// process with another key could not open what the others sealed, nor they
// what it seals. The first of several processes starting together wins.
func (s *Store) CheckMasterKey(ctx context.Context, check string) error {
	return s.do(ctx, func(tx pgx.Tx) error { return checkMasterKeyTx(ctx, tx, check) })
}

// checkMasterKeyTx is CheckMasterKey in the caller's transaction.
func checkMasterKeyTx(ctx context.Context, tx pgx.Tx, check string) error {
	if check == "" {
		return fmt.Errorf("master key check: empty: %w", core.ErrInvalid)
	}
	// At READ COMMITTED, a concurrent first insert makes this one wait for
	// it and do nothing; the SELECT, a statement of its own, then sees the
	// winner's value.
	if _, err := tx.Exec(ctx, "INSERT INTO switchboard_meta (key, value) VALUES ('master_key_check', $1) ON CONFLICT (key) DO NOTHING", check); err != nil {
		return fmt.Errorf("record the master key check: %w", err)
	}
	var stored string
	if err := tx.QueryRow(ctx, "SELECT value FROM switchboard_meta WHERE key = 'master_key_check'").Scan(&stored); err != nil {
		return fmt.Errorf("read the master key check: %w", err)
	}
	if subtle.ConstantTimeCompare([]byte(stored), []byte(check)) != 1 {
		return ErrMasterKeyMismatch
	}
	return nil
}
