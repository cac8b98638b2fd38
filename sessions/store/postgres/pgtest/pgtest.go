// Package pgtest gives tests a PostgreSQL database of their own: a fresh,
// empty schema of the test cluster that ./scripts/test starts (its DSN in
// SWITCHBOARD_TEST_POSTGRES), dropped when the test ends.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// EnvDSN names the variable that holds the test cluster's DSN.
const EnvDSN = "SWITCHBOARD_TEST_POSTGRES"

// ClusterDSN returns the test cluster's DSN. Without one the test fails
// under CI=true (CI must run the PostgreSQL tests) and skips elsewhere,
// saying why.
func ClusterDSN(t testing.TB) string {
	t.Helper()
	if testing.Short() && os.Getenv("CI") != "true" {
		t.Skip("-short leaves the PostgreSQL tests out (scripts/test -short); CI runs them")
	}
	dsn := os.Getenv(EnvDSN)
	if dsn == "" {
		const why = "no PostgreSQL for this test: " + EnvDSN + " is not set (./scripts/test starts a cluster and sets it; or run SWITCHBOARD_TEST_POSTGRES=$(./scripts/postgres) go test …)"
		if os.Getenv("CI") == "true" {
			t.Fatal(why)
		}
		t.Skip(why)
	}
	return dsn
}

// DSN returns a DSN whose connections use a new, empty schema of the test
// cluster, dropped with everything in it when the test ends.
func DSN(t testing.TB) string {
	t.Helper()
	base := ClusterDSN(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connect to the test cluster: %v", err)
	}
	defer conn.Close(ctx)
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	schema := "t_" + hex.EncodeToString(b)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("connect to drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if err := dropSchema(ctx, conn, schema); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return WithSchema(t, base, schema)
}

// WithSchema returns dsn with its connections' search_path set to schema.
func WithSchema(t testing.TB, dsn, schema string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("test cluster DSN: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// dropSchema drops schema and everything in it. The test's processes are
// gone by then, but the server may not have noticed yet: a SIGKILLed
// gateway's backends can still hold locks on the schema's tables, and the
// drop would wait on them or deadlock with them. Their sessions are ended
// first, and a drop chosen as a deadlock's victim is tried again (a few
// times: each try ends the sessions found holding locks).
func dropSchema(ctx context.Context, conn *pgx.Conn, schema string) error {
	const holders = `SELECT pg_terminate_backend(l.pid) FROM pg_locks l
		JOIN pg_class c ON c.oid = l.relation JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = $1 AND l.pid <> pg_backend_pid()`
	var err error
	for range 5 {
		if _, err = conn.Exec(ctx, holders, schema); err != nil {
			return fmt.Errorf("end the sessions holding locks: %w", err)
		}
		_, err = conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE")
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "40P01" { // deadlock_detected
			return err
		}
	}
	return err
}
