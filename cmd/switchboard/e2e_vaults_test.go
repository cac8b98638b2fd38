package main_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVaultValuesStayInside: a credential's value, written through the
// API of a real serve process, is in no answer, no log line and not in
// plaintext in the database file.
func TestVaultValuesStayInside(t *testing.T) {
	dir := t.TempDir()
	srv := startServer(t, dir, nil)
	const secret = "tok-e2e-4f1c9a77d2b3"
	code, raw := srv.do("POST", "/v1/vaults", map[string]any{"name": "team"})
	if code != 201 {
		t.Fatalf("create vault: %d %s", code, raw)
	}
	var v struct{ ID string }
	mustJSON(t, raw, &v)
	answers := [][]byte{raw}
	code, raw = srv.do("POST", "/v1/vaults/"+v.ID+"/credentials", map[string]any{
		"name": "docs", "kind": "static_bearer", "hosts": []string{"docs.example.com"}, "token": secret,
	})
	if code != 201 {
		t.Fatalf("create credential: %d %s", code, raw)
	}
	var c struct{ ID string }
	mustJSON(t, raw, &c)
	answers = append(answers, raw)
	for _, path := range []string{"/v1/vaults/" + v.ID, "/v1/vaults/" + v.ID + "/credentials", "/v1/vaults/" + v.ID + "/credentials/" + c.ID} {
		code, raw := srv.do("GET", path, nil)
		if code != 200 {
			t.Fatalf("%s: %d %s", path, code, raw)
		}
		answers = append(answers, raw)
	}
	for _, a := range answers {
		if bytes.Contains(a, []byte(secret)) {
			t.Fatalf("an answer shows the value: %s", a)
		}
	}
	if err := srv.term(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(srv.out.String(), secret) {
		t.Fatal("the value is in the gateway's log")
	}
	db, err := os.ReadFile(filepath.Join(dir, "switchboard.db"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(db, []byte(secret)) {
		t.Fatal("the value is in the database file in plaintext")
	}
}
