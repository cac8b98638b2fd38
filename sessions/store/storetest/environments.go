package storetest

import (
	"errors"
	"slices"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// RunEnvironments runs the core.EnvironmentStore suite. open must return a
// fresh, empty store for each subtest and close it when the test ends.
func RunEnvironments[S core.EnvironmentStore](t *testing.T, open func(t *testing.T) S) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s core.EnvironmentStore)
	}{
		{"environments/create_get", testEnvironmentCreate},
		{"environments/invalid", testEnvironmentInvalid},
		{"environments/unique_names", testEnvironmentNames},
		{"environments/update", testEnvironmentUpdate},
		{"environments/list_paging", testEnvironmentList},
		{"environments/delete", testEnvironmentDelete},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
}

func fullEnvironment(name string) *core.Environment {
	return &core.Environment{
		Name:        name,
		Description: "tools",
		Image:       "switchboard-sandbox:latest",
		Packages:    core.Packages{Apt: []string{"jq", "ripgrep=13.0.0-4"}, Pip: []string{"requests[socks]>=2"}, Go: []string{"golang.org/x/tools/cmd/stringer@v0.1.0"}},
		Env:         map[string]string{"GOFLAGS": "-mod=mod"},
		Network:     core.NetworkPolicy{Mode: core.NetworkAllowlist, AllowedHosts: []string{"api.example.com", "*.example.org:443"}},
		Credentials: []string{core.NewID(core.PrefixCredential)},
		Resources:   core.Resources{CPUs: 1.5, MemoryMB: 512, Pids: 256, DiskMB: 128},
		Metadata:    map[string]string{"team": "a"},

		IdleTimeoutSeconds: 60,
	}
}

func testEnvironmentCreate(t *testing.T, s core.EnvironmentStore) {
	ctx := t.Context()
	in := fullEnvironment("tools")
	e, err := s.CreateEnvironment(ctx, in)
	must(t, err)
	if !core.HasPrefix(e.ID, core.PrefixEnvironment) || e.CreatedAt.IsZero() || !e.UpdatedAt.Equal(e.CreatedAt.Time) {
		t.Fatalf("created = %+v", e)
	}
	want := *in
	want.ID, want.CreatedAt, want.UpdatedAt = e.ID, e.CreatedAt, e.UpdatedAt
	sameJSON(t, "created", e, &want)
	if in.ID != "" {
		t.Fatalf("CreateEnvironment mutated its argument: %+v", in)
	}
	byID, err := s.GetEnvironment(ctx, e.ID)
	must(t, err)
	sameJSON(t, "get by id", byID, e)
	byName, err := s.GetEnvironment(ctx, "tools")
	must(t, err)
	sameJSON(t, "get by name", byName, e)
	_, err = s.GetEnvironment(ctx, "nothing")
	wantErr(t, err, core.ErrNotFound)

	bare, err := s.CreateEnvironment(ctx, &core.Environment{Name: "bare"})
	must(t, err)
	if bare.Network.Mode != core.NetworkNone {
		t.Fatalf("default network mode %q, want none", bare.Network.Mode)
	}
}

func testEnvironmentInvalid(t *testing.T, s core.EnvironmentStore) {
	cases := map[string]func(e *core.Environment){
		"no name":             func(e *core.Environment) { e.Name = "" },
		"name like an id":     func(e *core.Environment) { e.Name = core.NewID(core.PrefixEnvironment) },
		"option as package":   func(e *core.Environment) { e.Packages.Apt = []string{"--allow-unauthenticated"} },
		"shell in package":    func(e *core.Environment) { e.Packages.Npm = []string{"x; rm -rf /"} },
		"go without version":  func(e *core.Environment) { e.Packages.Go = []string{"golang.org/x/tools/cmd/stringer"} },
		"reserved env":        func(e *core.Environment) { e.Env = map[string]string{"https_proxy": "http://evil"} },
		"bad env name":        func(e *core.Environment) { e.Env = map[string]string{"A-B": "x"} },
		"unknown mode":        func(e *core.Environment) { e.Network.Mode = "open" },
		"allowlist empty":     func(e *core.Environment) { e.Network.AllowedHosts = nil },
		"hosts with none":     func(e *core.Environment) { e.Network.Mode = core.NetworkNone },
		"tld wildcard":        func(e *core.Environment) { e.Network.AllowedHosts = []string{"*.com"} },
		"host with path":      func(e *core.Environment) { e.Network.AllowedHosts = []string{"example.com/x"} },
		"not a credential":    func(e *core.Environment) { e.Credentials = []string{"token"} },
		"credential twice":    func(e *core.Environment) { e.Credentials = append(e.Credentials, e.Credentials[0]) },
		"credentials no nets": func(e *core.Environment) { e.Network = core.NetworkPolicy{} },
		"negative cpus":       func(e *core.Environment) { e.Resources.CPUs = -1 },
		"tiny memory":         func(e *core.Environment) { e.Resources.MemoryMB = 4 },
		"idle too long":       func(e *core.Environment) { e.IdleTimeoutSeconds = 8 * 24 * 3600 },
	}
	for name, mod := range cases {
		e := fullEnvironment("x")
		mod(e)
		_, err := s.CreateEnvironment(t.Context(), e)
		if !errors.Is(err, core.ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
	list, _, err := s.ListEnvironments(t.Context(), "", 0)
	must(t, err)
	if len(list) != 0 {
		t.Fatalf("invalid environments were stored: %d", len(list))
	}
}

func testEnvironmentNames(t *testing.T, s core.EnvironmentStore) {
	ctx := t.Context()
	_, err := s.CreateEnvironment(ctx, &core.Environment{Name: "dup"})
	must(t, err)
	_, err = s.CreateEnvironment(ctx, &core.Environment{Name: "dup"})
	wantErr(t, err, core.ErrConflict)
	other, err := s.CreateEnvironment(ctx, &core.Environment{Name: "other"})
	must(t, err)
	_, err = s.UpdateEnvironment(ctx, other.ID, func(e *core.Environment) error { e.Name = "dup"; return nil })
	wantErr(t, err, core.ErrConflict)
}

func testEnvironmentUpdate(t *testing.T, s core.EnvironmentStore) {
	ctx := t.Context()
	e, err := s.CreateEnvironment(ctx, fullEnvironment("old"))
	must(t, err)
	up, err := s.UpdateEnvironment(ctx, "old", func(x *core.Environment) error {
		x.Name = "new"
		x.Packages.Apt = []string{"curl"}
		x.ID = "env_hijack" // the store keeps identity
		return nil
	})
	must(t, err)
	if up.ID != e.ID || up.Name != "new" || len(up.Packages.Apt) != 1 || !up.CreatedAt.Equal(e.CreatedAt.Time) {
		t.Fatalf("updated = %+v", up)
	}
	got, err := s.GetEnvironment(ctx, "new")
	must(t, err)
	sameJSON(t, "after update", got, up)
	_, err = s.GetEnvironment(ctx, "old")
	wantErr(t, err, core.ErrNotFound)
	_, err = s.UpdateEnvironment(ctx, e.ID, func(x *core.Environment) error { x.Network.Mode = "open"; return nil })
	wantErr(t, err, core.ErrInvalid)
	_, err = s.UpdateEnvironment(ctx, "missing", func(*core.Environment) error { return nil })
	wantErr(t, err, core.ErrNotFound)
}

func testEnvironmentList(t *testing.T, s core.EnvironmentStore) {
	ctx := t.Context()
	var ids []string
	for _, n := range []string{"a", "b", "c"} {
		e, err := s.CreateEnvironment(ctx, &core.Environment{Name: n})
		must(t, err)
		ids = append(ids, e.ID)
	}
	// Ids order by creation time to the millisecond only.
	slices.Sort(ids)
	page, more, err := s.ListEnvironments(ctx, "", 2)
	must(t, err)
	if len(page) != 2 || !more || page[0].ID != ids[0] || page[1].ID != ids[1] {
		t.Fatalf("first page: %d, more %v", len(page), more)
	}
	page, more, err = s.ListEnvironments(ctx, page[1].ID, 2)
	must(t, err)
	if len(page) != 1 || more || page[0].ID != ids[2] {
		t.Fatalf("second page: %d, more %v", len(page), more)
	}
}

func testEnvironmentDelete(t *testing.T, s core.EnvironmentStore) {
	ctx := t.Context()
	e, err := s.CreateEnvironment(ctx, &core.Environment{Name: "gone"})
	must(t, err)
	must(t, s.DeleteEnvironment(ctx, "gone"))
	_, err = s.GetEnvironment(ctx, e.ID)
	wantErr(t, err, core.ErrNotFound)
	wantErr(t, s.DeleteEnvironment(ctx, e.ID), core.ErrNotFound)
	// The name is free again.
	_, err = s.CreateEnvironment(ctx, &core.Environment{Name: "gone"})
	must(t, err)
}
