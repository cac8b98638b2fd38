package postgres

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/switchboardhq/switchboard/sessions/store/postgres/pgtest"
)

// openTest opens a store on a fresh schema, closed when the test ends.
func openTest(t testing.TB, opts Options) (*Store, string) {
	t.Helper()
	dsn := pgtest.DSN(t)
	s, err := Open(t.Context(), dsn, opts)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s, dsn
}

// TestOpenMigratesOnce: opening twice applies the migrations once and
// leaves the schema at the binary's version.
func TestOpenMigratesOnce(t *testing.T) {
	s, dsn := openTest(t, Options{})
	again, err := Open(t.Context(), dsn, Options{})
	if err != nil {
		t.Fatalf("second open: %v", err)
	}
	defer again.Close()
	var v int32
	if err := s.pool.QueryRow(t.Context(), "SELECT version FROM "+versionTable).Scan(&v); err != nil {
		t.Fatal(err)
	}
	entries, _ := migrationFiles.ReadDir("migrations")
	if int(v) != len(entries) {
		t.Fatalf("schema version %d, want %d (the migrations embedded)", v, len(entries))
	}
	if status, ok := s.Ready(t.Context()); !ok {
		t.Fatalf("Ready = %q", status)
	}
}

// TestOpenRefusesNewerSchema: a database a newer binary migrated opens when
// its min_schema still accepts this binary, and is refused with
// ErrSchemaNewer when it does not.
func TestOpenRefusesNewerSchema(t *testing.T) {
	s, dsn := openTest(t, Options{})
	ctx := t.Context()
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := s.pool.Exec(ctx, sql, args...); err != nil {
			t.Fatal(err)
		}
	}
	exec("UPDATE " + versionTable + " SET version = version + 1")
	newer, err := Open(ctx, dsn, Options{})
	if err != nil {
		t.Fatalf("open a newer schema that accepts this binary: %v", err)
	}
	newer.Close()
	exec("UPDATE switchboard_meta SET value = '9999' WHERE key = 'min_schema'")
	_, err = Open(ctx, dsn, Options{})
	if !errors.Is(err, ErrSchemaNewer) {
		t.Fatalf("open = %v, want ErrSchemaNewer", err)
	}
	if !strings.Contains(err.Error(), "9999") {
		t.Fatalf("error %q does not say which version it needs", err)
	}
}

// TestOpenErrorsHideThePassword: a server that refuses or cannot be
// reached gives an error that never quotes the password.
func TestOpenErrorsHideThePassword(t *testing.T) {
	for name, dsn := range map[string]string{
		"unreachable": "postgres://bob:s3cr3t-pw@127.0.0.1:1/db?connect_timeout=2",
		"malformed":   "postgres://bob:s3cr3t-pw@[::1/db",
		"bad_option":  "postgres://bob:s3cr3t-pw@127.0.0.1/db?sslmode=sometimes",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Open(context.Background(), dsn, Options{})
			if err == nil {
				t.Fatal("open succeeded")
			}
			if strings.Contains(err.Error(), "s3cr3t-pw") {
				t.Fatalf("error quotes the password: %v", err)
			}
		})
	}
}

// TestMigrationsKeepNoIdleTimeout: the migrations' connection has no
// idle-transaction timeout even after a step resets its settings (tern
// runs "reset all" after each), while the store's connections keep the
// one they were given. With the timeout turned off by SET, the reset
// brought it back and a busy machine's pause between two statements of a
// migration ended the start.
func TestMigrationsKeepNoIdleTimeout(t *testing.T) {
	cfg, err := pgxpool.ParseConfig(pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.RuntimeParams["idle_in_transaction_session_timeout"] = "50"
	c, err := migrationConn(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(t.Context())
	if _, err := c.Exec(t.Context(), "RESET ALL"); err != nil {
		t.Fatal(err)
	}
	var got string
	if err := c.QueryRow(t.Context(), "SHOW idle_in_transaction_session_timeout").Scan(&got); err != nil || got != "0" {
		t.Fatalf("the migrations' connection after RESET ALL: timeout %q (%v), want 0", got, err)
	}
	if cfg.ConnConfig.RuntimeParams["idle_in_transaction_session_timeout"] != "50" {
		t.Error("migrationConn changed the pool's settings")
	}
}
