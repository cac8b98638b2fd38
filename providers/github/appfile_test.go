package github

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/oauth"
)

func TestAppFile(t *testing.T) {
	sealer := func(key string) *oauth.Sealer {
		s, err := oauth.NewSealer(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	key, otherKey := strings.Repeat("k", 32), strings.Repeat("o", 32)
	app := App{ID: 42, Slug: "helper", PrivateKey: "-----BEGIN RSA PRIVATE KEY-----\nsecret\n", WebhookSecret: "whsecret"}
	tests := []struct {
		name      string
		prepare   func(t *testing.T, dir string)
		openKey   string
		wantFound bool
		wantErr   string // a part of it
	}{
		{"none saved", func(*testing.T, string) {}, key, false, ""},
		{"saved", func(t *testing.T, dir string) {
			if err := SaveApp(dir, sealer(key), app); err != nil {
				t.Fatal(err)
			}
		}, key, true, ""},
		{"saved twice, the last wins", func(t *testing.T, dir string) {
			old := app
			old.Slug = "old"
			for _, a := range []App{old, app} {
				if err := SaveApp(dir, sealer(key), a); err != nil {
					t.Fatal(err)
				}
			}
		}, key, true, ""},
		{"another master key", func(t *testing.T, dir string) {
			if err := SaveApp(dir, sealer(key), app); err != nil {
				t.Fatal(err)
			}
		}, otherKey, false, "does not open with SWITCHBOARD_MASTER_KEY"},
		{"not an app", func(t *testing.T, dir string) {
			sealed, err := sealer(key).Seal([]byte("[]"), []byte(appAAD))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, AppFile), sealed, 0o600); err != nil {
				t.Fatal(err)
			}
		}, key, false, AppFile + ": json: cannot unmarshal"},
		{"unreadable", func(t *testing.T, dir string) {
			if err := os.Mkdir(filepath.Join(dir, AppFile), 0o700); err != nil {
				t.Fatal(err)
			}
		}, key, false, "SWITCHBOARD_DATA_DIR: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tt.prepare(t, dir)
			got, found, err := LoadApp(dir, sealer(tt.openKey))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q in it", err, tt.wantErr)
				}
				return
			}
			if err != nil || found != tt.wantFound || (found && got != app) {
				t.Fatalf("got %+v, found %v, %v", got, found, err)
			}
		})
	}
}

// TestAppFileIsSealed: the file is private, and neither the key nor the
// webhook secret can be read from it.
func TestAppFileIsSealed(t *testing.T) {
	s, err := oauth.NewSealer(strings.Repeat("k", 32))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := SaveApp(dir, s, App{ID: 1, Slug: "a", PrivateKey: "PRIVATE-KEY-BYTES", WebhookSecret: "WEBHOOK-SECRET"}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, AppFile)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "PRIVATE-KEY-BYTES") || strings.Contains(string(raw), "WEBHOOK-SECRET") {
		t.Fatal("the saved App is readable")
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("%s: %v, %v", path, fi.Mode(), err)
	}
	if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
		t.Fatalf("temporary file left: %v", err)
	}
}
