package storetest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// SkillStore is what the skills suite needs: skills, and the agents and
// sessions that pin them.
type SkillStore interface {
	core.Store
	core.SkillStore
}

// RunSkills runs the core.SkillStore suite, with the agents that pin
// skills. open must return a fresh, empty store for each subtest and
// close it when the test ends (t.Cleanup).
func RunSkills[S SkillStore](t *testing.T, open func(t *testing.T) S) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s SkillStore)
	}{
		{"skills/create_get", testSkillCreate},
		{"skills/list_paging", testSkillList},
		{"skills/versions", testSkillVersions},
		{"skills/unique_names", testSkillNames},
		{"skills/invalid", testSkillInvalid},
		{"skills/agents_pin", testSkillAgentsPin},
		{"skills/agents_refused", testSkillAgentsRefused},
		{"skills/delete_agent", testSkillDeleteAgent},
		{"skills/delete_sessions", testSkillDeleteSessions},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
}

// skillUpload is a valid upload of a skill named name: its SKILL.md, an
// executable script, an empty file, and two files of one content.
func skillUpload(name string) core.SkillUpload {
	return core.SkillUpload{
		Name:        name,
		Description: "Checks " + name + " before a commit.",
		Metadata:    map[string]string{"team": "a"},
		Files: map[string][]byte{
			core.SkillManifestFile: []byte("---\nname: " + name + "\ndescription: checks\n---\nRun scripts/run.sh.\n"),
			"scripts/run.sh":       []byte("#!/bin/sh\necho ok\n"),
			"notes/empty.txt":      nil,
			"a.txt":                []byte("same"),
			"b/c.txt":              []byte("same"),
		},
		Executable: map[string]bool{"scripts/run.sh": true},
	}
}

func newSkill(t *testing.T, s SkillStore, name string) *core.Skill {
	t.Helper()
	sk, err := s.CreateSkill(t.Context(), skillUpload(name))
	must(t, err)
	return sk
}

// checkSkillFiles proves a version lists up's files, sorted, with their
// sizes, digests and modes, and serves each one's content.
func checkSkillFiles(t *testing.T, s SkillStore, sk *core.Skill, up core.SkillUpload) {
	t.Helper()
	var want []core.SkillFile
	var size int64
	for _, p := range slices.Sorted(maps.Keys(up.Files)) {
		sum := sha256.Sum256(up.Files[p])
		want = append(want, core.SkillFile{Path: p, Size: int64(len(up.Files[p])), SHA256: hex.EncodeToString(sum[:]), Executable: up.Executable[p]})
		size += int64(len(up.Files[p]))
	}
	sameJSON(t, fmt.Sprintf("files of version %d", sk.Version), sk.Files, want)
	if sk.Size != size {
		t.Fatalf("size %d, want %d", sk.Size, size)
	}
	for p, content := range up.Files {
		got, err := s.SkillFile(t.Context(), sk.ID, sk.Version, p)
		must(t, err)
		if !bytes.Equal(got, content) {
			t.Fatalf("version %d, file %s = %q, want %q", sk.Version, p, got, content)
		}
	}
}

func testSkillCreate(t *testing.T, s SkillStore) {
	ctx := t.Context()
	up := skillUpload("lint")
	sk, err := s.CreateSkill(ctx, up)
	must(t, err)
	if !core.HasPrefix(sk.ID, core.PrefixSkill) || sk.Version != 1 || sk.Name != "lint" || sk.Description != up.Description ||
		sk.Metadata["team"] != "a" || sk.CreatedAt.IsZero() || !sk.UpdatedAt.Equal(sk.CreatedAt.Time) {
		t.Fatalf("created = %+v", sk)
	}
	checkSkillFiles(t, s, sk, up)
	for _, get := range []struct {
		idOrName string
		version  int
	}{{sk.ID, 0}, {"lint", 0}, {sk.ID, 1}, {"lint", 1}} {
		got, err := s.GetSkill(ctx, get.idOrName, get.version)
		must(t, err)
		sameJSON(t, fmt.Sprintf("get %s version %d", get.idOrName, get.version), got, sk)
	}
	for _, get := range []struct {
		idOrName string
		version  int
	}{{"nothing", 0}, {core.NewID(core.PrefixSkill), 0}, {sk.ID, 2}, {sk.ID, -1}} {
		_, err := s.GetSkill(ctx, get.idOrName, get.version)
		wantErr(t, err, core.ErrNotFound)
	}
	_, err = s.SkillFile(ctx, sk.ID, 1, "missing.txt")
	wantErr(t, err, core.ErrNotFound)
	_, err = s.SkillFile(ctx, sk.ID, 2, core.SkillManifestFile)
	wantErr(t, err, core.ErrNotFound)
	_, err = s.SkillFile(ctx, core.NewID(core.PrefixSkill), 1, core.SkillManifestFile)
	wantErr(t, err, core.ErrNotFound)
}

func testSkillList(t *testing.T, s SkillStore) {
	ctx := t.Context()
	var ids []string
	for _, n := range []string{"a", "b", "c"} {
		ids = append(ids, newSkill(t, s, n).ID)
	}
	// Ids order by creation time to the millisecond only.
	slices.Sort(ids)
	page, more, err := s.ListSkills(ctx, "", 2)
	must(t, err)
	if len(page) != 2 || !more || page[0].ID != ids[0] || page[1].ID != ids[1] {
		t.Fatalf("first page: %d, more %v", len(page), more)
	}
	page, more, err = s.ListSkills(ctx, page[1].ID, 2)
	must(t, err)
	if len(page) != 1 || more || page[0].ID != ids[2] {
		t.Fatalf("second page: %d, more %v", len(page), more)
	}
}

func testSkillVersions(t *testing.T, s SkillStore) {
	ctx := t.Context()
	v1up := skillUpload("lint")
	v1 := newSkill(t, s, "lint")
	nextMillisecond()
	v2up := skillUpload("lint-strict")
	v2up.Files["scripts/run.sh"] = []byte("#!/bin/sh\necho strict\n")
	delete(v2up.Files, "notes/empty.txt")
	v2up.Executable = nil
	v2, err := s.UpdateSkill(ctx, "lint", v2up)
	must(t, err)
	if v2.ID != v1.ID || v2.Version != 2 || v2.Name != "lint-strict" || !v2.CreatedAt.Equal(v1.CreatedAt.Time) || !v2.UpdatedAt.After(v1.UpdatedAt.Time) {
		t.Fatalf("version 2 = %+v", v2)
	}
	checkSkillFiles(t, s, v2, v2up)
	// Version 1 is as it was saved.
	got, err := s.GetSkill(ctx, v1.ID, 1)
	must(t, err)
	sameJSON(t, "version 1 after the update", got, v1)
	checkSkillFiles(t, s, got, v1up)
	latest, err := s.GetSkill(ctx, "lint-strict", 0)
	must(t, err)
	sameJSON(t, "latest by its new name", latest, v2)
	_, err = s.GetSkill(ctx, "lint", 0)
	wantErr(t, err, core.ErrNotFound)
	_, err = s.SkillFile(ctx, v1.ID, 2, "notes/empty.txt")
	wantErr(t, err, core.ErrNotFound)
	list, _, err := s.ListSkills(ctx, "", 0)
	must(t, err)
	sameJSON(t, "list", list, []*core.Skill{v2})
	_, err = s.UpdateSkill(ctx, "missing", v2up)
	wantErr(t, err, core.ErrNotFound)
}

func testSkillNames(t *testing.T, s SkillStore) {
	ctx := t.Context()
	newSkill(t, s, "dup")
	_, err := s.CreateSkill(ctx, skillUpload("dup"))
	wantErr(t, err, core.ErrConflict)
	other := newSkill(t, s, "other")
	_, err = s.UpdateSkill(ctx, other.ID, skillUpload("dup"))
	wantErr(t, err, core.ErrConflict)
	got, err := s.GetSkill(ctx, other.ID, 0)
	must(t, err)
	sameJSON(t, "after a refused rename", got, other)
	// A version may keep its name.
	_, err = s.UpdateSkill(ctx, "other", skillUpload("other"))
	must(t, err)
	list, _, err := s.ListSkills(ctx, "", 0)
	must(t, err)
	if len(list) != 2 {
		t.Fatalf("%d skills, want 2", len(list))
	}
}

func testSkillInvalid(t *testing.T, s SkillStore) {
	ctx := t.Context()
	cases := map[string]func(up *core.SkillUpload){
		"no name":               func(up *core.SkillUpload) { up.Name = "" },
		"upper case name":       func(up *core.SkillUpload) { up.Name = "Lint" },
		"no description":        func(up *core.SkillUpload) { up.Description = " " },
		"no manifest":           func(up *core.SkillUpload) { delete(up.Files, core.SkillManifestFile) },
		"parent path":           func(up *core.SkillUpload) { up.Files["../x"] = nil },
		"absolute path":         func(up *core.SkillUpload) { up.Files["/etc/x"] = nil },
		"unclean path":          func(up *core.SkillUpload) { up.Files["a//b"] = nil },
		"executable of no file": func(up *core.SkillUpload) { up.Executable["missing.sh"] = true },
		"too many files": func(up *core.SkillUpload) {
			for i := range core.MaxSkillFiles {
				up.Files[fmt.Sprintf("f%d", i)] = nil
			}
		},
	}
	for name, mod := range cases {
		up := skillUpload("x")
		mod(&up)
		_, err := s.CreateSkill(ctx, up)
		if !errors.Is(err, core.ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
	list, _, err := s.ListSkills(ctx, "", 0)
	must(t, err)
	if len(list) != 0 {
		t.Fatalf("invalid skills were stored: %d", len(list))
	}
	sk := newSkill(t, s, "kept")
	up := skillUpload("kept")
	delete(up.Files, core.SkillManifestFile)
	_, err = s.UpdateSkill(ctx, sk.ID, up)
	wantErr(t, err, core.ErrInvalid)
	got, err := s.GetSkill(ctx, sk.ID, 0)
	must(t, err)
	sameJSON(t, "after a refused update", got, sk)
}

// twoVersions makes a skill whose version 2 renames it.
func twoVersions(t *testing.T, s SkillStore, first, second string) (*core.Skill, *core.Skill) {
	t.Helper()
	v1 := newSkill(t, s, first)
	v2, err := s.UpdateSkill(t.Context(), v1.ID, skillUpload(second))
	must(t, err)
	return v1, v2
}

func agentWithSkills(name string, refs ...core.SkillRef) *core.Agent {
	return &core.Agent{Name: name, Model: "anthropic/claude-test", System: "be brief", Skills: refs}
}

func testSkillAgentsPin(t *testing.T, s SkillStore) {
	ctx := t.Context()
	lint, _ := twoVersions(t, s, "lint", "lint")
	fmtSkill := newSkill(t, s, "fmt")
	a, err := s.CreateAgent(ctx, agentWithSkills("pinner",
		core.SkillRef{ID: "lint"}, core.SkillRef{ID: fmtSkill.ID, Version: 1}))
	must(t, err)
	want := []core.SkillRef{{ID: lint.ID, Version: 2}, {ID: fmtSkill.ID, Version: 1}}
	sameJSON(t, "created agent's skills", a.Skills, want)
	got, err := s.GetAgent(ctx, a.ID)
	must(t, err)
	sameJSON(t, "stored agent's skills", got.Skills, want)

	pinned, err := s.CreateAgent(ctx, agentWithSkills("old", core.SkillRef{ID: lint.ID, Version: 1}))
	must(t, err)
	sameJSON(t, "an older version pinned", pinned.Skills, []core.SkillRef{{ID: lint.ID, Version: 1}})

	// A skill's new version leaves the agents as they were; an update
	// that names a skill by name and no version pins its latest.
	_, err = s.UpdateSkill(ctx, fmtSkill.ID, skillUpload("fmt"))
	must(t, err)
	up, err := s.UpdateAgent(ctx, a.ID, 0, func(x *core.Agent) error {
		x.Skills = []core.SkillRef{{ID: "fmt"}}
		return nil
	})
	must(t, err)
	sameJSON(t, "updated agent's skills", up.Skills, []core.SkillRef{{ID: fmtSkill.ID, Version: 2}})
	v1, err := s.GetAgentVersion(ctx, a.ID, 1)
	must(t, err)
	sameJSON(t, "version 1's skills", v1.Skills, want)
	// An update of other fields keeps the pins.
	up, err = s.UpdateAgent(ctx, a.ID, 0, func(x *core.Agent) error { x.System = "be briefer"; return nil })
	must(t, err)
	sameJSON(t, "skills kept", up.Skills, []core.SkillRef{{ID: fmtSkill.ID, Version: 2}})
}

func testSkillAgentsRefused(t *testing.T, s SkillStore) {
	ctx := t.Context()
	// alpha is named beta from version 2, and another skill is now alpha.
	renamed, _ := twoVersions(t, s, "alpha", "beta")
	alpha := newSkill(t, s, "alpha")
	cases := []struct {
		name  string
		refs  []core.SkillRef
		entry string
	}{
		{"unknown id", []core.SkillRef{{ID: alpha.ID}, {ID: core.NewID(core.PrefixSkill)}}, "skills[1]"},
		{"unknown name", []core.SkillRef{{ID: "gamma"}}, "skills[0]"},
		{"no id", []core.SkillRef{{Version: 1}}, "skills[0]"},
		{"unknown version", []core.SkillRef{{ID: renamed.ID, Version: 3}}, "skills[0]"},
		{"negative version", []core.SkillRef{{ID: renamed.ID, Version: -1}}, "skills[0]"},
		{"one skill twice", []core.SkillRef{{ID: "beta"}, {ID: renamed.ID, Version: 1}}, "skills[1]"},
		{"two skills of one name", []core.SkillRef{{ID: alpha.ID}, {ID: renamed.ID, Version: 1}}, "skills[1]"},
	}
	base, err := s.CreateAgent(ctx, agentWithSkills("base"))
	must(t, err)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.CreateAgent(ctx, agentWithSkills("refused", tc.refs...))
			if !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), tc.entry) {
				t.Fatalf("create: err = %v, want ErrInvalid naming %s", err, tc.entry)
			}
			_, err = s.UpdateAgent(ctx, base.ID, 0, func(a *core.Agent) error { a.Skills = tc.refs; return nil })
			if !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), tc.entry) {
				t.Fatalf("update: err = %v, want ErrInvalid naming %s", err, tc.entry)
			}
		})
	}
	list, _, err := s.ListAgents(ctx, "", 0)
	must(t, err)
	sameJSON(t, "agents after refusals", list, []*core.Agent{base})
}

func testSkillDeleteAgent(t *testing.T, s SkillStore) {
	ctx := t.Context()
	sk, _ := twoVersions(t, s, "lint", "lint")
	a, err := s.CreateAgent(ctx, agentWithSkills("pinner", core.SkillRef{ID: sk.ID, Version: 1}))
	must(t, err)
	err = s.DeleteSkill(ctx, "lint")
	if !errors.Is(err, core.ErrConflict) || !strings.Contains(err.Error(), "pinner") {
		t.Fatalf("delete of a pinned skill = %v, want ErrConflict naming the agent", err)
	}
	got, err := s.GetSkill(ctx, sk.ID, 1)
	must(t, err)
	sameJSON(t, "after a refused delete", got, sk)

	// The agent moves on; its old version, which no session runs, does
	// not keep the skill.
	_, err = s.UpdateAgent(ctx, a.ID, 0, func(x *core.Agent) error { x.Skills = nil; return nil })
	must(t, err)
	must(t, s.DeleteSkill(ctx, sk.ID))
	for v := range 3 {
		_, err = s.GetSkill(ctx, sk.ID, v)
		wantErr(t, err, core.ErrNotFound)
	}
	_, err = s.SkillFile(ctx, sk.ID, 1, core.SkillManifestFile)
	wantErr(t, err, core.ErrNotFound)
	wantErr(t, s.DeleteSkill(ctx, sk.ID), core.ErrNotFound)
	// The name is free again, and the new skill has none of the old files.
	again := newSkill(t, s, "lint")
	if again.ID == sk.ID || again.Version != 1 {
		t.Fatalf("recreated = %+v", again)
	}
	_, err = s.GetSkill(ctx, again.ID, 2)
	wantErr(t, err, core.ErrNotFound)
}

func testSkillDeleteSessions(t *testing.T, s SkillStore) {
	ctx := t.Context()
	sk := newSkill(t, s, "lint")
	a, err := s.CreateAgent(ctx, agentWithSkills("pinner", core.SkillRef{ID: sk.ID}))
	must(t, err)
	var ids []string
	for range 12 {
		res, err := s.CreateSession(ctx, core.NewSession{Session: core.Session{Agent: core.AgentRef{ID: a.ID, Version: 1}}})
		must(t, err)
		ids = append(ids, res.Session.ID)
	}
	slices.Sort(ids)
	// A session of another agent, and another version of this one.
	other, err := s.CreateAgent(ctx, agentWithSkills("other"))
	must(t, err)
	_, err = s.CreateSession(ctx, core.NewSession{Session: core.Session{Agent: core.AgentRef{ID: other.ID, Version: 1}}})
	must(t, err)
	_, err = s.UpdateAgent(ctx, a.ID, 0, func(x *core.Agent) error { x.Skills = nil; return nil })
	must(t, err)
	_, err = s.CreateSession(ctx, core.NewSession{Session: core.Session{Agent: core.AgentRef{ID: a.ID, Version: 2}}})
	must(t, err)

	err = s.DeleteSkill(ctx, sk.ID)
	if !errors.Is(err, core.ErrConflict) || strings.Contains(err.Error(), "pinner") {
		t.Fatalf("delete = %v, want ErrConflict naming sessions only", err)
	}
	for i, id := range ids {
		if named := strings.Contains(err.Error(), id); named != (i < 10) {
			t.Fatalf("session %d (%s) named: %v, in %q", i, id, named, err)
		}
	}
	if !strings.Contains(err.Error(), "and 2 more") {
		t.Fatalf("delete = %q, want it to count the sessions not named", err)
	}
	for _, id := range ids[:11] {
		_, err := s.Archive(ctx, id)
		must(t, err)
	}
	err = s.DeleteSkill(ctx, sk.ID)
	if !errors.Is(err, core.ErrConflict) || !strings.Contains(err.Error(), ids[11]) || strings.Contains(err.Error(), "more") {
		t.Fatalf("delete with one session left = %v", err)
	}
	_, err = s.Archive(ctx, ids[11])
	must(t, err)
	must(t, s.DeleteSkill(ctx, "lint"))
	_, err = s.GetSkill(ctx, sk.ID, 0)
	wantErr(t, err, core.ErrNotFound)
}
