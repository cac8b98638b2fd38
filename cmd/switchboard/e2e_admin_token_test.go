package main_test

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// TestServeShowsTheAdminTokenAfterAFailedStart: a first start on a port in
// use fails naming the address, and leaves only files the next start
// reuses as they are; the next start, on a free port, prints the token
// it generated; the start after that prints none.
func TestServeShowsTheAdminTokenAfterAFailedStart(t *testing.T) {
	_, hs := modelserver.Start(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	dir := filepath.Join(t.TempDir(), "data")
	env := modelEnv(hs.URL, modelserver.FormatAnthropic)
	// The harness's token is unset: this data directory's is generated.
	env["SWITCHBOARD_ADMIN_TOKEN"] = ""

	failing := map[string]string{"SWITCHBOARD_ADDR": taken.Addr().String()}
	for k, v := range env {
		failing[k] = v
	}
	out := serveFails(t, dir, failing)
	if !strings.Contains(out, "SWITCHBOARD_ADDR="+taken.Addr().String()) || !strings.Contains(out, "address already in use") {
		t.Fatalf("the failed start does not name the address in use:\n%s", out)
	}
	if strings.Contains(out, "admin token") {
		t.Fatalf("the failed start printed the admin token:\n%s", out)
	}
	token := strings.TrimSpace(readFile(t, filepath.Join(dir, "admin-token")))
	// What the failed start left is what the next start reuses.
	left := map[string]string{}
	for _, name := range []string{"admin-token", "master.key", "replica-id"} {
		left[name] = readFile(t, filepath.Join(dir, name))
	}
	for _, name := range []string{"admin-token.shown", "addr"} {
		if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the failed start left %s (%v)", name, err)
		}
	}

	srv := startServer(t, dir, env)
	want := "admin token (saved in " + filepath.Join(dir, "admin-token") + ", shown once): " + token + "\n"
	srv.waitLog(want)
	if err := srv.term(); err != nil {
		t.Fatalf("stop: %v\n%s", err, srv.out.String())
	}
	for name, was := range left {
		if now := readFile(t, filepath.Join(dir, name)); now != was {
			t.Errorf("%s changed from %q to %q: the next start did not reuse it", name, was, now)
		}
	}
	if shown := readFile(t, filepath.Join(dir, "admin-token.shown")); strings.Contains(shown, token) {
		t.Errorf("admin-token.shown holds the token itself: %q", shown)
	}

	third := startServer(t, dir, env)
	if err := third.term(); err != nil {
		t.Fatalf("stop: %v\n%s", err, third.out.String())
	}
	if out := third.out.String(); strings.Contains(out, token) || strings.Contains(out, "admin token (saved") {
		t.Fatalf("the third start printed the admin token again:\n%s", out)
	}
	// A token given in the environment is never printed.
	env["SWITCHBOARD_ADMIN_TOKEN"] = adminToken
	given := startServer(t, filepath.Join(t.TempDir(), "given"), env)
	if err := given.term(); err != nil {
		t.Fatalf("stop: %v\n%s", err, given.out.String())
	}
	if out := given.out.String(); strings.Contains(out, adminToken) || strings.Contains(out, "admin token (saved") {
		t.Fatalf("a start with SWITCHBOARD_ADMIN_TOKEN printed a token:\n%s", out)
	}
}
