package bolt

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"go.etcd.io/bbolt"
)

// releasesWithCredentials are the data directories of earlier releases
// that hold a credential (the first release's has a vault only).
var releasesWithCredentials = []string{"release2"}

// TestEarlierReleasesCredentialsOpenAsGlobal opens the data directories of
// earlier releases, whose credentials were written before scopes existed,
// and finds each credential global, in its record too (Open rewrote it
// once); a scope given later survives the next open.
func TestEarlierReleasesCredentialsOpenAsGlobal(t *testing.T) {
	for _, dir := range releasesWithCredentials {
		t.Run(dir, func(t *testing.T) {
			ctx := t.Context()
			s := openRelease(t, dir, Options{})
			vs, _, err := s.ListVaults(ctx, "", 10)
			if err != nil || len(vs) != 1 {
				t.Fatalf("vaults %+v, %v", vs, err)
			}
			creds, err := s.ListCredentials(ctx, vs[0].ID)
			if err != nil || len(creds) != 1 {
				t.Fatalf("credentials %+v, %v", creds, err)
			}
			c, sealed, err := s.GetCredential(ctx, creds[0].ID)
			if err != nil || c.Scope != core.GlobalScope || creds[0].Scope != core.GlobalScope {
				t.Fatalf("credential %+v (listed %+v), %v: want scope global", c, creds[0], err)
			}
			raw := s.rawCredential(t, c.ID)
			if !bytes.Contains(raw, []byte(`"scope":{"type":"global"}`)) {
				t.Fatalf("stored record %s has no global scope", raw)
			}

			// A scope given after the migration is kept across opens.
			c.Scope = core.CredentialScope{Type: core.ScopeTenant, Tenant: "slack:T1"}
			if _, err := s.PutCredential(ctx, c, sealed); err != nil {
				t.Fatal(err)
			}
			path := s.path
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			again, err := Open(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer again.Close()
			if got, _, err := again.GetCredential(ctx, c.ID); err != nil || got.Scope != c.Scope {
				t.Fatalf("after reopen %+v, %v: want scope %v", got, err, c.Scope)
			}
		})
	}
}

// TestReleaseDataHasNoScopes makes sure the data directories above were
// written by the previous schema: their credential records have no scope.
func TestReleaseDataHasNoScopes(t *testing.T) {
	for _, dir := range releasesWithCredentials {
		db, err := bbolt.Open(filepath.Join("testdata", dir, "switchboard.db"), 0o600, &bbolt.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		err = db.View(func(tx *bbolt.Tx) error {
			return tx.Bucket([]byte(bucketCredentials)).ForEach(func(_, v []byte) error {
				n++
				if bytes.Contains(v, []byte(`"scope"`)) {
					t.Errorf("%s: credential record %s already has a scope", dir, v)
				}
				return nil
			})
		})
		_ = db.Close()
		if err != nil || n == 0 {
			t.Fatalf("%s: %d credentials, %v", dir, n, err)
		}
	}
}

func (s *Store) rawCredential(t *testing.T, id string) []byte {
	t.Helper()
	var raw []byte
	if err := s.db.View(func(tx *bbolt.Tx) error {
		raw = bytes.Clone(tx.Bucket([]byte(bucketCredentials)).Get([]byte(id)))
		return nil
	}); err != nil || raw == nil {
		t.Fatalf("credential %s: %v", id, err)
	}
	return raw
}
