package storetest

import (
	"bytes"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// InstallationStore is what the installation suite needs: installations
// and the once keys the install flow redeems states with.
type InstallationStore interface {
	core.InstallationStore
	core.OnceStore
}

// RunInstallations runs the core.InstallationStore and core.OnceStore
// suite. open must return a fresh, empty store for each subtest. Sealed
// tokens are opaque bytes to a store, so the suite uses made-up ones.
func RunInstallations[S InstallationStore](t *testing.T, open func(t *testing.T) S) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s InstallationStore)
	}{
		{"installations/save_creates_then_updates", testInstallationSave},
		{"installations/invalid", testInstallationInvalid},
		{"installations/update_keeps_identity", testInstallationUpdate},
		{"installations/tokens", testInstallationTokens},
		{"installations/refresh_one_at_a_time", testRefreshOneAtATime},
		{"installations/refresh_outcomes", testRefreshOutcomes},
		{"installations/list_paging", testInstallationList},
		{"installations/delete", testInstallationDelete},
		{"once", testOnce},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
}

func testInstallationSave(t *testing.T, s InstallationStore) {
	ctx := t.Context()
	exp := core.NewTime(time.Now().Add(time.Hour)).Ptr()
	a, err := s.SaveInstallation(ctx, &core.Installation{Provider: "chat", ExternalID: "T1", Name: "one", Scopes: []string{"chat:write"}}, []byte("sealed-1"), exp)
	must(t, err)
	if !core.HasPrefix(a.ID, core.PrefixInstallation) || !a.HasToken || a.TokenExpiresAt == nil || a.CreatedAt.IsZero() {
		t.Fatalf("created %+v", a)
	}
	_, err = s.UpdateInstallation(ctx, a.ID, func(in *core.Installation) error {
		in.Agent = "agt_x"
		in.Policy = core.AccessPolicy{Users: []string{"U1"}}
		return nil
	})
	must(t, err)
	// A reinstall keeps the id, the binding and the policy; without
	// tokens it keeps the old ones.
	b, err := s.SaveInstallation(ctx, &core.Installation{Provider: "chat", ExternalID: "T1", Name: "renamed"}, nil, nil)
	must(t, err)
	if b.ID != a.ID || b.Name != "renamed" || b.Agent != "agt_x" || len(b.Policy.Users) != 1 || !b.HasToken || !b.CreatedAt.Equal(a.CreatedAt.Time) {
		t.Fatalf("reinstall %+v, first %+v", b, a)
	}
	tok, err := s.InstallationTokens(ctx, a.ID)
	must(t, err)
	if string(tok) != "sealed-1" {
		t.Fatalf("tokens %q", tok)
	}
	found, err := s.FindInstallation(ctx, "chat", "T1")
	must(t, err)
	if found.ID != a.ID {
		t.Fatalf("found %s, want %s", found.ID, a.ID)
	}
	_, err = s.FindInstallation(ctx, "forge", "T1")
	wantErr(t, err, core.ErrNotFound)
	other, err := s.SaveInstallation(ctx, &core.Installation{Provider: "chat", ExternalID: "T2"}, nil, nil)
	must(t, err)
	if other.ID == a.ID || other.HasToken {
		t.Fatalf("second tenant %+v", other)
	}
	_, err = s.InstallationTokens(ctx, other.ID)
	wantErr(t, err, core.ErrNotFound)
}

func testInstallationInvalid(t *testing.T, s InstallationStore) {
	ctx := t.Context()
	for _, in := range []core.Installation{{ExternalID: "T1"}, {Provider: "chat"}, {Provider: "sl\x00ack", ExternalID: "T"}} {
		_, err := s.SaveInstallation(ctx, &in, nil, nil)
		wantErr(t, err, core.ErrInvalid)
	}
	_, err := s.GetInstallation(ctx, "ins_missing")
	wantErr(t, err, core.ErrNotFound)
	_, err = s.UpdateInstallation(ctx, "ins_missing", func(*core.Installation) error { return nil })
	wantErr(t, err, core.ErrNotFound)
	wantErr(t, s.DeleteInstallation(ctx, "ins_missing"), core.ErrNotFound)
}

func testInstallationUpdate(t *testing.T, s InstallationStore) {
	ctx := t.Context()
	a, err := s.SaveInstallation(ctx, &core.Installation{Provider: "chat", ExternalID: "T1"}, []byte("x"), nil)
	must(t, err)
	b, err := s.UpdateInstallation(ctx, a.ID, func(in *core.Installation) error {
		in.ID, in.Provider, in.ExternalID, in.HasToken = "ins_other", "forge", "T9", false
		in.Policy.Channels = []string{"C1"}
		return nil
	})
	must(t, err)
	if b.ID != a.ID || b.Provider != "chat" || b.ExternalID != "T1" || !b.HasToken || len(b.Policy.Channels) != 1 {
		t.Fatalf("updated %+v", b)
	}
	got, err := s.GetInstallation(ctx, a.ID)
	must(t, err)
	if jsonOf(t, got) != jsonOf(t, b) {
		t.Fatalf("stored %s\nreturned %s", jsonOf(t, got), jsonOf(t, b))
	}
}

func testInstallationTokens(t *testing.T, s InstallationStore) {
	ctx := t.Context()
	a, err := s.SaveInstallation(ctx, &core.Installation{Provider: "chat", ExternalID: "T1"}, []byte("old"), nil)
	must(t, err)
	exp := core.NewTime(time.Now().Add(12 * time.Hour)).Ptr()
	must(t, s.PutInstallationTokens(ctx, a.ID, []byte("new"), exp))
	tok, err := s.InstallationTokens(ctx, a.ID)
	must(t, err)
	got, err := s.GetInstallation(ctx, a.ID)
	must(t, err)
	if !bytes.Equal(tok, []byte("new")) || got.TokenExpiresAt == nil || !got.TokenExpiresAt.Equal(exp.Time) {
		t.Fatalf("tokens %q, record %+v", tok, got)
	}
	wantErr(t, s.PutInstallationTokens(ctx, a.ID, nil, nil), core.ErrInvalid)
	must(t, s.ForgetInstallationTokens(ctx, a.ID))
	_, err = s.InstallationTokens(ctx, a.ID)
	wantErr(t, err, core.ErrNotFound)
	got, err = s.GetInstallation(ctx, a.ID)
	must(t, err)
	if got.HasToken || got.TokenExpiresAt != nil {
		t.Fatalf("after forget %+v", got)
	}
	_, err = s.InstallationTokens(ctx, "ins_missing")
	wantErr(t, err, core.ErrNotFound)
}

func testInstallationList(t *testing.T, s InstallationStore) {
	ctx := t.Context()
	var ids []string
	for _, p := range []string{"chat", "forge", "chat", "chat"} {
		in, err := s.SaveInstallation(ctx, &core.Installation{Provider: p, ExternalID: core.NewID("x")}, nil, nil)
		must(t, err)
		ids = append(ids, in.ID)
		nextMillisecond() // ids sort by millisecond
	}
	page, more, err := s.ListInstallations(ctx, core.InstallationQuery{Provider: "chat", Limit: 2})
	must(t, err)
	if len(page) != 2 || !more || page[0].ID != ids[0] || page[1].ID != ids[2] {
		t.Fatalf("first page %v more=%v", page, more)
	}
	page, more, err = s.ListInstallations(ctx, core.InstallationQuery{Provider: "chat", After: page[1].ID, Limit: 2})
	must(t, err)
	if len(page) != 1 || more || page[0].ID != ids[3] {
		t.Fatalf("second page %v more=%v", page, more)
	}
	all, _, err := s.ListInstallations(ctx, core.InstallationQuery{})
	must(t, err)
	if len(all) != 4 {
		t.Fatalf("%d installations", len(all))
	}
}

func testInstallationDelete(t *testing.T, s InstallationStore) {
	ctx := t.Context()
	a, err := s.SaveInstallation(ctx, &core.Installation{Provider: "chat", ExternalID: "T1"}, []byte("x"), nil)
	must(t, err)
	must(t, s.DeleteInstallation(ctx, a.ID))
	_, err = s.GetInstallation(ctx, a.ID)
	wantErr(t, err, core.ErrNotFound)
	_, err = s.FindInstallation(ctx, "chat", "T1")
	wantErr(t, err, core.ErrNotFound)
	_, err = s.InstallationTokens(ctx, a.ID)
	wantErr(t, err, core.ErrNotFound)
	b, err := s.SaveInstallation(ctx, &core.Installation{Provider: "chat", ExternalID: "T1"}, nil, nil)
	must(t, err)
	if b.ID == a.ID || b.HasToken {
		t.Fatalf("reinstall after delete %+v", b)
	}
}

func testOnce(t *testing.T, s InstallationStore) {
	ctx := t.Context()
	first, err := s.Once(ctx, "k1", time.Now().Add(time.Hour))
	must(t, err)
	again, err := s.Once(ctx, "k1", time.Now().Add(time.Hour))
	must(t, err)
	other, err := s.Once(ctx, "k2", time.Now().Add(time.Hour))
	must(t, err)
	if !first || again || !other {
		t.Fatalf("first=%v again=%v other=%v", first, again, other)
	}
	// An expired key is forgotten and may be recorded anew.
	_, err = s.Once(ctx, "short", time.Now().Add(-time.Second))
	must(t, err)
	fresh, err := s.Once(ctx, "short", time.Now().Add(time.Hour))
	must(t, err)
	if !fresh {
		t.Fatal("an expired key was still remembered")
	}
	_, err = s.Once(ctx, "", time.Now())
	wantErr(t, err, core.ErrInvalid)
}
