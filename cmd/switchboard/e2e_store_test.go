package main_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/switchboardhq/switchboard/oauth"
	"github.com/switchboardhq/switchboard/sessions/store/postgres"
	"github.com/switchboardhq/switchboard/sessions/store/postgres/pgtest"
)

// The master keys of the store tests: the database is first used with
// keyA, and a process started with keyB must be refused.
const (
	keyA = "store-test-master-key-a"
	keyB = "store-test-master-key-b"
)

// The password of the DSNs that must never reach the output.
const dsnPassword = "s3cr3t-pw"

// TestStoreMisconfigurationNamesTheVariable: a store serve cannot use
// stops it at start with one line naming the variable to fix, never the
// DSN's password, and generates no secret into the data dir (processes
// sharing a database must share them).
func TestStoreMisconfigurationNamesTheVariable(t *testing.T) {
	const unreachable = "postgres://bob:" + dsnPassword + "@127.0.0.1:1/switchboard?connect_timeout=5"
	tests := []struct {
		name string
		want string // the variable the line names
		// env is the store's settings over the admin token and master key
		// keyB; prepare, when set, makes the database it names.
		env     map[string]string
		prepare func(t *testing.T) string
	}{
		{name: "unknown scheme", want: "SWITCHBOARD_STORE", env: map[string]string{"SWITCHBOARD_STORE": "mysql://bob:" + dsnPassword + "@db/switchboard"}},
		{name: "no scheme", want: "SWITCHBOARD_STORE", env: map[string]string{"SWITCHBOARD_STORE": "bob:" + dsnPassword + "@db/switchboard"}},
		{name: "malformed DSN", want: "SWITCHBOARD_STORE", env: map[string]string{"SWITCHBOARD_STORE": "postgres://bob:" + dsnPassword + "@[::1/switchboard"}},
		{name: "bad DSN option", want: "SWITCHBOARD_STORE", env: map[string]string{"SWITCHBOARD_STORE": "postgresql://bob:" + dsnPassword + "@127.0.0.1/switchboard?sslmode=sometimes"}},
		{name: "unreachable server", want: "SWITCHBOARD_STORE", env: map[string]string{"SWITCHBOARD_STORE": unreachable}},
		{name: "no master key", want: "SWITCHBOARD_MASTER_KEY", env: map[string]string{"SWITCHBOARD_STORE": unreachable, "SWITCHBOARD_MASTER_KEY": ""}},
		{name: "no admin token", want: "SWITCHBOARD_ADMIN_TOKEN", env: map[string]string{"SWITCHBOARD_STORE": unreachable, "SWITCHBOARD_ADMIN_TOKEN": ""}},
		{name: "schema needs a newer binary", want: "SWITCHBOARD_STORE", prepare: newerSchema},
		{name: "another master key", want: "SWITCHBOARD_MASTER_KEY", prepare: usedWithKeyA},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"SWITCHBOARD_ADMIN_TOKEN": adminToken, "SWITCHBOARD_MASTER_KEY": keyB}
			if tt.prepare != nil {
				env["SWITCHBOARD_STORE"] = tt.prepare(t)
			}
			for k, v := range tt.env {
				env[k] = v
			}
			dir := t.TempDir()
			out := serveFails(t, dir, env)
			wantOneLine(t, out, tt.want)
			if strings.Contains(out, dsnPassword) {
				t.Fatalf("the output quotes the DSN's password:\n%s", out)
			}
			for _, f := range []string{"admin-token", "master.key"} {
				if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
					t.Fatalf("serve generated %s into the data dir", f)
				}
			}
		})
	}
}

// serveFails runs serve on dataDir with env over the test's environment,
// expects it to stop at start with a non-zero status, and returns its
// output.
func serveFails(t *testing.T, dataDir string, env map[string]string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	cmd := exec.CommandContext(ctx, serveBinary(t), "serve")
	cmd.Env = append(childEnviron(), "SWITCHBOARD_DATA_DIR="+dataDir, "SWITCHBOARD_ADDR="+anyPort)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() <= 0 {
		t.Fatalf("serve with %v: %v, want a non-zero exit status:\n%s", env, err, out)
	}
	return string(out)
}

// wantOneLine checks that out is one line naming the variable name.
func wantOneLine(t *testing.T, out, name string) {
	t.Helper()
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 1 || !strings.Contains(lines[0], name) {
		t.Fatalf("want one line naming %s, got:\n%s", name, out)
	}
}

// migrated is a fresh database at this binary's schema, with a store
// open on it until the test ends.
func migrated(t *testing.T) (*postgres.Store, string) {
	dsn := pgtest.DSN(t)
	st, err := postgres.Open(t.Context(), dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, dsn
}

// newerSchema is a database a newer binary migrated, to a schema that no
// longer accepts this one.
func newerSchema(t *testing.T) string {
	_, dsn := migrated(t)
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.WithoutCancel(t.Context()))
	for _, sql := range []string{
		"UPDATE switchboard_schema_version SET version = version + 1",
		"UPDATE switchboard_meta SET value = '9999' WHERE key = 'min_schema'",
	} {
		if _, err := conn.Exec(t.Context(), sql); err != nil {
			t.Fatal(err)
		}
	}
	return dsn
}

// usedWithKeyA is a database first used with the master key keyA.
func usedWithKeyA(t *testing.T) string {
	st, dsn := migrated(t)
	sealer, err := oauth.NewSealer(keyA)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CheckMasterKey(t.Context(), sealer.KeyCheck()); err != nil {
		t.Fatal(err)
	}
	return dsn
}
