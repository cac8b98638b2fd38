package storecopy_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core/command"
	"github.com/switchboardhq/switchboard/sessions/store/storecopy"
)

// TestCommandRefusesEarly: what store copy refuses before it reads a
// store or reaches a database, with the exit code and the line it says.
func TestCommandRefusesEarly(t *testing.T) {
	empty := t.TempDir()
	keyed := t.TempDir()
	if err := os.WriteFile(filepath.Join(keyed, "master.key"), []byte("k1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const dsn = "postgres://bob:s3cr3t-pw@127.0.0.1:1/db"
	tests := []struct {
		name string
		args []string
		env  map[string]string
		code int
		want string // in stderr
	}{
		{"no subcommand", nil, nil, 2, "want the subcommand copy"},
		{"unknown subcommand", []string{"move"}, nil, 2, "want the subcommand copy"},
		{"unknown flag", []string{"copy", "--into", dsn}, nil, 2, "flag provided but not defined"},
		{"no target", []string{"copy", "--from", keyed}, nil, 2, "--to: want a postgres:// DSN"},
		{"target not postgres", []string{"copy", "--from", keyed, "--to", "mysql://bob:s3cr3t-pw@db/x"}, nil, 2, "--to: want a postgres:// DSN"},
		{"no master key", []string{"copy", "--from", empty, "--to", dsn}, nil, 1, "no master key: set SWITCHBOARD_MASTER_KEY"},
		{"no store", []string{"copy", "--from", keyed, "--to", dsn}, nil, 1, "no store in " + keyed},
		{"no store, from the environment", []string{"copy"}, map[string]string{"SWITCHBOARD_DATA_DIR": empty, "SWITCHBOARD_STORE": dsn, "SWITCHBOARD_MASTER_KEY": "k1"}, 1, "no store in " + empty},
	}
	cmd := storecopy.Command(storecopy.Deps{DataDir: "./unused", Keys: func(key string) (storecopy.Keys, error) { return fakeKeys{name: key}, nil }})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			env := command.Env{Getenv: func(k string) string { return tt.env[k] }, Stdout: &stdout, Stderr: &stderr}
			if code := cmd.Run(t.Context(), env, tt.args); code != tt.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tt.code, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.want) || strings.Contains(stderr.String(), "s3cr3t-pw") {
				t.Fatalf("stderr = %q, want %q and never the password", stderr.String(), tt.want)
			}
		})
	}
}
