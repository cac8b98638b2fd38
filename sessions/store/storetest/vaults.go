package storetest

import (
	"bytes"
	"slices"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// RunVaults runs the core.VaultStore suite. open must return a fresh, empty
// store for each subtest and close it when the test ends (t.Cleanup).
// Sealed secrets are opaque bytes to a store, so the suite uses made-up
// ones.
func RunVaults[S core.VaultStore](t *testing.T, open func(t *testing.T) S) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s core.VaultStore)
	}{
		{"vaults/create_get", testVaultCreate},
		{"vaults/invalid", testVaultInvalid},
		{"vaults/list_paging", testVaultList},
		{"vaults/delete_cascades", testVaultDelete},
		{"credentials/put_get", testCredentialPut},
		{"credentials/replace", testCredentialReplace},
		{"credentials/invalid", testCredentialInvalid},
		{"credentials/list", testCredentialList},
		{"credentials/delete", testCredentialDelete},
		{"credentials/scope", testCredentialScope},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
}

func newVault(t *testing.T, s core.VaultStore, name string) *core.Vault {
	t.Helper()
	v, err := s.CreateVault(t.Context(), &core.Vault{Name: name})
	must(t, err)
	return v
}

func newCredential(name, vaultID string) *core.Credential {
	return &core.Credential{
		ID: core.NewID(core.PrefixCredential), VaultID: vaultID, Name: name,
		Kind: core.CredentialStaticBearer, Hosts: []string{"api.example.com"},
	}
}

func putCredential(t *testing.T, s core.VaultStore, c *core.Credential, sealed string) *core.Credential {
	t.Helper()
	out, err := s.PutCredential(t.Context(), c, []byte(sealed))
	must(t, err)
	return out
}

func testVaultCreate(t *testing.T, s core.VaultStore) {
	ctx := t.Context()
	in := &core.Vault{Name: "forge", Description: "repo access", Metadata: map[string]string{"team": "a"}}
	v, err := s.CreateVault(ctx, in)
	must(t, err)
	if !core.HasPrefix(v.ID, core.PrefixVault) || v.CreatedAt.IsZero() || !v.UpdatedAt.Equal(v.CreatedAt.Time) {
		t.Fatalf("created vault = %+v", v)
	}
	if v.Name != "forge" || v.Description != "repo access" || v.Metadata["team"] != "a" {
		t.Fatalf("created vault lost fields: %+v", v)
	}
	if in.ID != "" || !in.CreatedAt.IsZero() {
		t.Fatalf("CreateVault mutated its argument: %+v", in)
	}
	got, err := s.GetVault(ctx, v.ID)
	must(t, err)
	sameJSON(t, "get vault", got, v)

	_, err = s.GetVault(ctx, "vlt_missing")
	wantErr(t, err, core.ErrNotFound)
	fixed := core.NewID(core.PrefixVault)
	v2, err := s.CreateVault(ctx, &core.Vault{ID: fixed, Name: "fixed"})
	must(t, err)
	if v2.ID != fixed {
		t.Fatalf("caller id replaced: %s", v2.ID)
	}
	_, err = s.CreateVault(ctx, &core.Vault{ID: fixed, Name: "again"})
	wantErr(t, err, core.ErrConflict)
}

func testVaultInvalid(t *testing.T, s core.VaultStore) {
	for _, v := range []*core.Vault{
		{},
		{ID: "vlt_short", Name: "a"},
		{ID: core.NewID(core.PrefixCredential), Name: "a"},
	} {
		_, err := s.CreateVault(t.Context(), v)
		wantErr(t, err, core.ErrInvalid)
	}
	list, _, err := s.ListVaults(t.Context(), "", 0)
	must(t, err)
	if len(list) != 0 {
		t.Fatalf("invalid vaults were stored: %d", len(list))
	}
}

func testVaultList(t *testing.T, s core.VaultStore) {
	ctx := t.Context()
	var want []string
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		want = append(want, newVault(t, s, n).ID)
	}
	var got []string
	after := ""
	for pages := 0; ; pages++ {
		page, more, err := s.ListVaults(ctx, after, 2)
		must(t, err)
		if pages > 5 || len(page) > 2 {
			t.Fatalf("paging runs away: page %d has %d", pages, len(page))
		}
		for _, v := range page {
			got = append(got, v.ID)
		}
		if !more {
			break
		}
		after = page[len(page)-1].ID
	}
	// Ids order by creation time only across milliseconds, so the
	// expectation is id order.
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("listed %v, want %v (id order)", got, want)
	}
	all, more, err := s.ListVaults(ctx, "", 0)
	must(t, err)
	if len(all) != 5 || more {
		t.Fatalf("default limit listed %d, more=%v", len(all), more)
	}
	rest, more, err := s.ListVaults(ctx, want[len(want)-1], 10)
	must(t, err)
	if len(rest) != 0 || more {
		t.Fatalf("after the last: %d, more=%v", len(rest), more)
	}
}

func testVaultDelete(t *testing.T, s core.VaultStore) {
	ctx := t.Context()
	gone := newVault(t, s, "gone")
	kept := newVault(t, s, "kept")
	c1 := putCredential(t, s, newCredential("one", gone.ID), "sealed-1")
	c2 := putCredential(t, s, newCredential("two", gone.ID), "sealed-2")
	other := putCredential(t, s, newCredential("other", kept.ID), "sealed-3")

	must(t, s.DeleteVault(ctx, gone.ID))
	_, err := s.GetVault(ctx, gone.ID)
	wantErr(t, err, core.ErrNotFound)
	for _, id := range []string{c1.ID, c2.ID} {
		_, _, err := s.GetCredential(ctx, id)
		wantErr(t, err, core.ErrNotFound)
	}
	_, err = s.ListCredentials(ctx, gone.ID)
	wantErr(t, err, core.ErrNotFound)
	wantErr(t, s.DeleteVault(ctx, gone.ID), core.ErrNotFound)

	got, sealed, err := s.GetCredential(ctx, other.ID)
	must(t, err)
	if got.VaultID != kept.ID || string(sealed) != "sealed-3" {
		t.Fatalf("the other vault's credential changed: %+v %q", got, sealed)
	}
	// A vault created after the delete starts empty.
	fresh := newVault(t, s, "fresh")
	list, err := s.ListCredentials(ctx, fresh.ID)
	must(t, err)
	if len(list) != 0 {
		t.Fatalf("new vault lists %d credentials", len(list))
	}
}

func testCredentialPut(t *testing.T, s core.VaultStore) {
	ctx := t.Context()
	v := newVault(t, s, "v")
	exp := core.Now().Ptr()
	in := &core.Credential{
		ID: core.NewID(core.PrefixCredential), VaultID: v.ID, Name: "tracker", Kind: core.CredentialOAuth,
		Hosts: []string{"api.tracker.example", "*.tracker.example"}, TokenURL: "https://api.tracker.example/oauth/token",
		ClientID: "cid", Scopes: []string{"read", "write"}, ExpiresAt: exp,
	}
	c := putCredential(t, s, in, "\x01sealed-bytes")
	if c.ID != in.ID || c.CreatedAt.IsZero() || !c.UpdatedAt.Equal(c.CreatedAt.Time) {
		t.Fatalf("stored credential = %+v", c)
	}
	if c.TokenURL != in.TokenURL || !slices.Equal(c.Hosts, in.Hosts) || !slices.Equal(c.Scopes, in.Scopes) || !c.ExpiresAt.Equal(exp.Time) {
		t.Fatalf("stored credential lost fields: %+v", c)
	}
	if !in.CreatedAt.IsZero() {
		t.Fatalf("PutCredential mutated its argument: %+v", in)
	}
	got, sealed, err := s.GetCredential(ctx, c.ID)
	must(t, err)
	sameJSON(t, "get credential", got, c)
	if string(sealed) != "\x01sealed-bytes" {
		t.Fatalf("sealed = %q", sealed)
	}
	// The caller owns the returned bytes; changing them changes nothing.
	sealed[0] = 'X'
	_, again, err := s.GetCredential(ctx, c.ID)
	must(t, err)
	if !bytes.Equal(again, []byte("\x01sealed-bytes")) {
		t.Fatalf("stored secret changed through a returned slice: %q", again)
	}
	_, _, err = s.GetCredential(ctx, core.NewID(core.PrefixCredential))
	wantErr(t, err, core.ErrNotFound)
}

func testCredentialReplace(t *testing.T, s core.VaultStore) {
	ctx := t.Context()
	v := newVault(t, s, "v")
	first := putCredential(t, s, newCredential("one", v.ID), "old")
	next := *first
	next.Name = "renamed"
	next.Hosts = []string{"other.example.com"}
	next.CreatedAt = core.Time{} // the store keeps the original
	second := putCredential(t, s, &next, "new")
	if !second.CreatedAt.Equal(first.CreatedAt.Time) || second.UpdatedAt.Before(first.UpdatedAt.Time) {
		t.Fatalf("replacement times: created %v → %v, updated %v → %v", first.CreatedAt, second.CreatedAt, first.UpdatedAt, second.UpdatedAt)
	}
	got, sealed, err := s.GetCredential(ctx, first.ID)
	must(t, err)
	if got.Name != "renamed" || !slices.Equal(got.Hosts, []string{"other.example.com"}) || string(sealed) != "new" {
		t.Fatalf("after replace: %+v %q", got, sealed)
	}
	list, err := s.ListCredentials(ctx, v.ID)
	must(t, err)
	if len(list) != 1 {
		t.Fatalf("replace duplicated the credential: %d listed", len(list))
	}
	// A credential does not move to another vault.
	w := newVault(t, s, "w")
	moved := *second
	moved.VaultID = w.ID
	_, err = s.PutCredential(ctx, &moved, []byte("x"))
	wantErr(t, err, core.ErrConflict)
	list, err = s.ListCredentials(ctx, w.ID)
	must(t, err)
	if len(list) != 0 {
		t.Fatalf("refused move still listed in the new vault: %d", len(list))
	}
}

func testCredentialInvalid(t *testing.T, s core.VaultStore) {
	ctx := t.Context()
	v := newVault(t, s, "v")
	with := func(f func(c *core.Credential)) *core.Credential {
		c := newCredential("c", v.ID)
		f(c)
		return c
	}
	tests := []struct {
		name   string
		c      *core.Credential
		sealed string
		want   error
	}{
		{"no id", with(func(c *core.Credential) { c.ID = "" }), "s", core.ErrInvalid},
		{"bad id", with(func(c *core.Credential) { c.ID = "vcr_1" }), "s", core.ErrInvalid},
		{"no name", with(func(c *core.Credential) { c.Name = "" }), "s", core.ErrInvalid},
		{"bad kind", with(func(c *core.Credential) { c.Kind = "basic" }), "s", core.ErrInvalid},
		{"no secret", with(func(*core.Credential) {}), "", core.ErrInvalid},
		{"missing vault", with(func(c *core.Credential) { c.VaultID = core.NewID(core.PrefixVault) }), "s", core.ErrNotFound},
		{"unknown scope", with(func(c *core.Credential) { c.Scope = core.CredentialScope{Type: "team"} }), "s", core.ErrInvalid},
		{"tenant scope without tenant", with(func(c *core.Credential) { c.Scope = core.CredentialScope{Type: core.ScopeTenant} }), "s", core.ErrInvalid},
		{"global scope naming a tenant", with(func(c *core.Credential) { c.Scope = core.CredentialScope{Type: core.ScopeGlobal, Tenant: "chat:T1"} }), "s", core.ErrInvalid},
		{"group scope naming a tenant", with(func(c *core.Credential) {
			c.Scope = core.CredentialScope{Type: core.ScopeTenantGroup, TenantGroup: "acme", Tenant: "chat:T1"}
		}), "s", core.ErrInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.PutCredential(ctx, tc.c, []byte(tc.sealed))
			wantErr(t, err, tc.want)
		})
	}
	list, err := s.ListCredentials(ctx, v.ID)
	must(t, err)
	if len(list) != 0 {
		t.Fatalf("invalid credentials were stored: %d", len(list))
	}
}

func testCredentialList(t *testing.T, s core.VaultStore) {
	ctx := t.Context()
	a := newVault(t, s, "a")
	b := newVault(t, s, "b")
	var want []string
	for _, n := range []string{"1", "2", "3"} {
		want = append(want, putCredential(t, s, newCredential(n, a.ID), "s"+n).ID)
		putCredential(t, s, newCredential(n, b.ID), "t"+n)
	}
	list, err := s.ListCredentials(ctx, a.ID)
	must(t, err)
	got := make([]string, len(list))
	for i, c := range list {
		got[i] = c.ID
		if c.VaultID != a.ID {
			t.Fatalf("vault %s lists %s of vault %s", a.ID, c.ID, c.VaultID)
		}
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("listed %v, want %v (id order)", got, want)
	}
	_, err = s.ListCredentials(ctx, core.NewID(core.PrefixVault))
	wantErr(t, err, core.ErrNotFound)
}

func testCredentialDelete(t *testing.T, s core.VaultStore) {
	ctx := t.Context()
	a := newVault(t, s, "a")
	b := newVault(t, s, "b")
	c := putCredential(t, s, newCredential("c", a.ID), "s")
	keep := putCredential(t, s, newCredential("keep", a.ID), "k")
	// Only through its own vault.
	wantErr(t, s.DeleteCredential(ctx, b.ID, c.ID), core.ErrNotFound)
	must(t, s.DeleteCredential(ctx, a.ID, c.ID))
	_, _, err := s.GetCredential(ctx, c.ID)
	wantErr(t, err, core.ErrNotFound)
	wantErr(t, s.DeleteCredential(ctx, a.ID, c.ID), core.ErrNotFound)
	list, err := s.ListCredentials(ctx, a.ID)
	must(t, err)
	if len(list) != 1 || list[0].ID != keep.ID {
		t.Fatalf("after delete: %d listed", len(list))
	}
	// The id can be used again (a re-created credential starts afresh).
	again := putCredential(t, s, &core.Credential{ID: c.ID, VaultID: a.ID, Name: "again", Kind: core.CredentialHeader, HeaderName: "X-Key", Hosts: []string{"h"}}, "z")
	if again.Name != "again" {
		t.Fatalf("re-created = %+v", again)
	}
}

// testCredentialScope: a credential keeps its owner's scope through get,
// list and replace; one given none is stored global.
func testCredentialScope(t *testing.T, s core.VaultStore) {
	ctx := t.Context()
	v := newVault(t, s, "v")
	global := putCredential(t, s, newCredential("global", v.ID), "s")
	if global.Scope != core.GlobalScope {
		t.Fatalf("credential put without a scope has scope %+v, want global", global.Scope)
	}
	tenant := newCredential("tenant", v.ID)
	tenant.Scope = core.CredentialScope{Type: core.ScopeTenant, Tenant: "forge:acme/app"}
	putCredential(t, s, tenant, "s")
	group := newCredential("group", v.ID)
	group.Scope = core.CredentialScope{Type: core.ScopeTenantGroup, TenantGroup: "acme"}
	putCredential(t, s, group, "s")

	want := map[string]core.CredentialScope{global.ID: core.GlobalScope, tenant.ID: tenant.Scope, group.ID: group.Scope}
	for id, scope := range want {
		got, _, err := s.GetCredential(ctx, id)
		must(t, err)
		if got.Scope != scope {
			t.Fatalf("get %s: scope %+v, want %+v", id, got.Scope, scope)
		}
	}
	list, err := s.ListCredentials(ctx, v.ID)
	must(t, err)
	for _, c := range list {
		if c.Scope != want[c.ID] {
			t.Fatalf("listed %s: scope %+v, want %+v", c.ID, c.Scope, want[c.ID])
		}
	}
	// An admin may move a credential to another owner.
	moved := *tenant
	moved.Scope = core.GlobalScope
	putCredential(t, s, &moved, "s")
	got, _, err := s.GetCredential(ctx, tenant.ID)
	must(t, err)
	if got.Scope != core.GlobalScope {
		t.Fatalf("after replace: scope %+v, want global", got.Scope)
	}
}
