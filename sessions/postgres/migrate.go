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
// checks that a newer schema still accepts it.
func migrateSchema(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer conn.Release()
	c := conn.Conn()
	// The idle-transaction timeout ends the transactions of a replica
	// paused mid-write; a migration's transaction pauses only as long as
	// this process is kept off a busy CPU, and ending it would stop the
	// start. RESET gives the connection its pool's setting back.
	if _, err := c.Exec(ctx, "SET idle_in_transaction_session_timeout = 0"); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer func() { _, _ = c.Exec(context.WithoutCancel(ctx), "RESET idle_in_transaction_session_timeout") }()
	if _, err := c.Exec(ctx, "SELECT pg_advisory_lock($1)", int64(migrateLock)); err != nil {
		return fmt.Errorf("migrate: take the lock: %w", err)
	}
	defer func() {
		// A failed unlock (the connection broke) ends with the session.
		_, _ = c.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", int64(migrateLock))
	}()
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
