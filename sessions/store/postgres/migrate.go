package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/tern/v2/migrate"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// versionTable is where the migration library records the schema version.
const versionTable = "switchboard_schema_version"

// migrateLock is the advisory lock every switchboard binary holds while it
// reads and migrates the schema: replicas starting together migrate once,
// and a binary never reads a version another is changing.
const migrateLock = 0x5357_4243_4844 // "SWBCHD"

// migrateSchema brings the schema up to the version this binary carries, or
// checks that a newer schema still accepts it, on a connection of its own
// (migrationConn) holding the migration lock until it closes.
func migrateSchema(ctx context.Context, cfg *pgxpool.Config, log *slog.Logger) error {
	c, err := migrationConn(ctx, cfg)
	if err != nil {
		return fmt.Errorf("migrate: connect to %s: %s", where(cfg), redact(err.Error(), cfg.ConnString()))
	}
	// Closing the session releases the lock, whatever happened.
	defer c.Close(context.WithoutCancel(ctx))
	if _, err := c.Exec(ctx, "SELECT pg_advisory_lock($1)", int64(migrateLock)); err != nil {
		return fmt.Errorf("migrate: take the lock: %w", err)
	}
	m, err := migrate.NewMigratorEx(ctx, c, versionTable, &migrate.MigratorOptions{})
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if err := m.LoadMigrations(sub); err != nil {
		return fmt.Errorf("migrate: load: %w", err)
	}
	known := int32(len(m.Migrations))
	current, err := m.GetCurrentVersion(ctx)
	if err != nil {
		return fmt.Errorf("migrate: read the schema version: %w", err)
	}
	if current > known {
		need, err := minSchema(ctx, c)
		if err != nil {
			return err
		}
		if need > known {
			return fmt.Errorf("%w: it is at version %d and needs a binary that knows version %d, this one knows %d", ErrSchemaNewer, current, need, known)
		}
		log.Info("database schema is newer than this binary and still accepts it", "schema", current, "binary_schema", known)
		return nil
	}
	if current < known {
		log.Info("migrating the database schema", "from", current, "to", known)
	}
	if err := m.Migrate(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// migrationConn opens a connection as the pool's, but without the
// idle-transaction timeout, which ends the transactions of a replica
// paused mid-write: a migration's transaction pauses only as long as this
// process is kept off a busy CPU, and ending it would stop the start. The
// migrations reset the connection's settings after each step (tern runs
// "reset all"), back to those it was opened with, so the timeout is left
// out of those rather than set off for a while.
func migrationConn(ctx context.Context, cfg *pgxpool.Config) (*pgx.Conn, error) {
	cc := cfg.ConnConfig.Copy()
	cc.RuntimeParams["idle_in_transaction_session_timeout"] = "0"
	return pgx.ConnectConfig(ctx, cc)
}

// minSchema reads the lowest schema version a binary must know.
func minSchema(ctx context.Context, c *pgx.Conn) (int32, error) {
	var v string
	err := c.QueryRow(ctx, "SELECT value FROM switchboard_meta WHERE key = 'min_schema'").Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("migrate: read min_schema: %w", err)
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("migrate: min_schema %q: %w", v, err)
	}
	return int32(n), nil
}
