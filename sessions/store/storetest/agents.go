package storetest

import (
	"errors"
	"slices"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

func testAgentCreate(t *testing.T, s core.Store) {
	ctx := t.Context()
	in := &core.Agent{Name: "helper", Model: "openai/gpt-test", System: "sys", Limits: core.Limits{MaxSteps: 7}, Metadata: map[string]string{"team": "a"}}
	a, err := s.CreateAgent(ctx, in)
	must(t, err)
	if !core.HasPrefix(a.ID, core.PrefixAgent) || a.Version != 1 || a.CreatedAt.IsZero() || !a.UpdatedAt.Equal(a.CreatedAt.Time) {
		t.Fatalf("created agent = %+v", a)
	}
	if a.Name != "helper" || a.Model != "openai/gpt-test" || a.Limits.MaxSteps != 7 || a.Metadata["team"] != "a" {
		t.Fatalf("created agent lost fields: %+v", a)
	}
	if in.ID != "" || in.Version != 0 {
		t.Fatalf("CreateAgent mutated its argument: %+v", in)
	}
	byID, err := s.GetAgent(ctx, a.ID)
	must(t, err)
	sameJSON(t, "get by id", byID, a)
	byName, err := s.GetAgent(ctx, "helper")
	must(t, err)
	sameJSON(t, "get by name", byName, a)
	v1, err := s.GetAgentVersion(ctx, a.ID, 1)
	must(t, err)
	sameJSON(t, "version 1", v1, a)

	_, err = s.GetAgent(ctx, "nobody")
	wantErr(t, err, core.ErrNotFound)
	_, err = s.GetAgentVersion(ctx, a.ID, 2)
	wantErr(t, err, core.ErrNotFound)

	fixed, err := s.CreateAgent(ctx, &core.Agent{ID: "agt_fixed", Name: "fixed", Model: "anthropic/x"})
	must(t, err)
	if fixed.ID != "agt_fixed" {
		t.Fatalf("caller id replaced: %s", fixed.ID)
	}
}

func testAgentInvalid(t *testing.T, s core.Store) {
	for _, a := range []*core.Agent{
		{Model: "anthropic/x"},
		{Name: "a", Model: "nope"},
		{Name: "a", Model: "anthropic/x", Limits: core.Limits{MaxSteps: -1}},
	} {
		_, err := s.CreateAgent(t.Context(), a)
		wantErr(t, err, core.ErrInvalid)
	}
	list, _, err := s.ListAgents(t.Context(), "", 0)
	must(t, err)
	if len(list) != 0 {
		t.Fatalf("invalid agents were stored: %d", len(list))
	}
}

func testAgentUniqueNames(t *testing.T, s core.Store) {
	newAgent(t, s, "dup")
	_, err := s.CreateAgent(t.Context(), &core.Agent{Name: "dup", Model: "anthropic/x"})
	wantErr(t, err, core.ErrConflict)
}

func testAgentUpdate(t *testing.T, s core.Store) {
	ctx := t.Context()
	a := newAgent(t, s, "upd")
	v2, err := s.UpdateAgent(ctx, a.ID, 1, func(x *core.Agent) error {
		if x.System != "be brief" || x.Version != 1 {
			t.Errorf("update saw %+v, want the latest version", x)
		}
		x.System = "be thorough"
		x.ID = "agt_hijack" // the store keeps identity
		x.Version = 99
		return nil
	})
	must(t, err)
	if v2.ID != a.ID || v2.Version != 2 || v2.System != "be thorough" || !v2.CreatedAt.Equal(a.CreatedAt.Time) || v2.UpdatedAt.Before(a.UpdatedAt.Time) {
		t.Fatalf("version 2 = %+v", v2)
	}
	old, err := s.GetAgentVersion(ctx, a.ID, 1)
	must(t, err)
	if old.System != "be brief" || old.Version != 1 {
		t.Fatalf("version 1 changed: %+v", old)
	}
	latest, err := s.GetAgent(ctx, "upd")
	must(t, err)
	sameJSON(t, "latest", latest, v2)

	_, err = s.UpdateAgent(ctx, a.ID, 1, func(*core.Agent) error { return nil })
	wantErr(t, err, core.ErrConflict)
	v3, err := s.UpdateAgent(ctx, a.ID, 0, func(x *core.Agent) error { x.Description = "d"; return nil })
	must(t, err)
	if v3.Version != 3 {
		t.Fatalf("unconditional update gave version %d", v3.Version)
	}

	boom := errors.New("boom")
	_, err = s.UpdateAgent(ctx, a.ID, 0, func(*core.Agent) error { return boom })
	wantErr(t, err, boom)
	_, err = s.UpdateAgent(ctx, a.ID, 0, func(x *core.Agent) error { x.Model = "bad"; return nil })
	wantErr(t, err, core.ErrInvalid)
	_, err = s.UpdateAgent(ctx, "agt_missing", 0, func(*core.Agent) error { return nil })
	wantErr(t, err, core.ErrNotFound)
	latest, err = s.GetAgent(ctx, a.ID)
	must(t, err)
	if latest.Version != 3 {
		t.Fatalf("failed updates changed the version to %d", latest.Version)
	}
	_, err = s.GetAgentVersion(ctx, a.ID, 4)
	wantErr(t, err, core.ErrNotFound)
}

func testAgentRename(t *testing.T, s core.Store) {
	ctx := t.Context()
	a := newAgent(t, s, "first")
	newAgent(t, s, "taken")
	_, err := s.UpdateAgent(ctx, a.ID, 0, func(x *core.Agent) error { x.Name = "taken"; return nil })
	wantErr(t, err, core.ErrConflict)
	_, err = s.UpdateAgent(ctx, a.ID, 0, func(x *core.Agent) error { x.Name = "second"; return nil })
	must(t, err)
	_, err = s.GetAgent(ctx, "first")
	wantErr(t, err, core.ErrNotFound)
	got, err := s.GetAgent(ctx, "second")
	must(t, err)
	if got.ID != a.ID || got.Version != 2 {
		t.Fatalf("renamed agent = %+v", got)
	}
	// The old name is free again.
	newAgent(t, s, "first")
}

func testAgentList(t *testing.T, s core.Store) {
	ctx := t.Context()
	var made []*core.Agent
	for _, n := range []string{"a1", "a2", "a3", "a4", "a5"} {
		made = append(made, newAgent(t, s, n))
	}
	want := sortedIDs(made, func(a *core.Agent) string { return a.ID })
	var got []string
	after := ""
	for _, wantMore := range []bool{true, true, false} {
		page, more, err := s.ListAgents(ctx, after, 2)
		must(t, err)
		if more != wantMore {
			t.Fatalf("page after %q: hasMore = %v, want %v", after, more, wantMore)
		}
		for _, a := range page {
			got = append(got, a.ID)
		}
		after = page[len(page)-1].ID
	}
	if !slices.Equal(got, want) {
		t.Fatalf("paged ids = %v, want %v", got, want)
	}
	all, more, err := s.ListAgents(ctx, "", 0)
	must(t, err)
	if len(all) != 5 || more {
		t.Fatalf("default limit listed %d (more %v)", len(all), more)
	}
	if _, err := s.UpdateAgent(ctx, made[0].ID, 0, func(x *core.Agent) error { x.System = "v2"; return nil }); err != nil {
		t.Fatal(err)
	}
	all, _, err = s.ListAgents(ctx, "", 0)
	must(t, err)
	for _, a := range all {
		if a.ID == made[0].ID && a.Version != 2 {
			t.Fatalf("list shows version %d, want the latest", a.Version)
		}
	}
}
