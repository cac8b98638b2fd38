package bolt

import (
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/storetest"
)

func TestVaultStoreConformance(t *testing.T) { storetest.RunVaults(t, fresh) }

// TestVaultsSurviveReopen proves the vault buckets are durable and that a
// database from before they existed gains them on open.
func TestVaultsSurviveReopen(t *testing.T) {
	s, path := openTemp(t, Options{})
	ctx := t.Context()
	v, err := s.CreateVault(ctx, &core.Vault{Name: "v"})
	if err != nil {
		t.Fatal(err)
	}
	c := &core.Credential{ID: core.NewID(core.PrefixCredential), VaultID: v.ID, Name: "c", Kind: core.CredentialStaticBearer, Hosts: []string{"h"}}
	if _, err := s.PutCredential(ctx, c, []byte("sealed")); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	list, err := s2.ListCredentials(ctx, v.ID)
	if err != nil || len(list) != 1 || list[0].ID != c.ID {
		t.Fatalf("after reopen: %v, %v", list, err)
	}
}
