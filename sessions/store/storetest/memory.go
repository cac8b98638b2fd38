package storetest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// MemoryStore is what the memory suite needs: memory stores, their
// files' embeddings, and the agents that name them.
type MemoryStore interface {
	core.MemoryStores
	core.MemoryEmbeddings
	core.AgentStore
}

// RunMemory runs the core.MemoryStores suite. open must return a fresh,
// empty store for each subtest and close it when the test ends.
func RunMemory[S MemoryStore](t *testing.T, open func(t *testing.T) S) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s MemoryStore)
	}{
		{"memory/stores", testMemoryStores},
		{"memory/stores_invalid", testMemoryStoresInvalid},
		{"memory/stores_update", testMemoryStoresUpdate},
		{"memory/write_read", testMemoryWriteRead},
		{"memory/partitions_isolated", testMemoryPartitions},
		{"memory/delete", testMemoryDelete},
		{"memory/rename", testMemoryRename},
		{"memory/revert", testMemoryRevert},
		{"memory/invalid_changes", testMemoryInvalid},
		{"memory/if_version", testMemoryIfVersion},
		{"memory/prune_versions", testMemoryPruneVersions},
		{"memory/prune_partition", testMemoryPrunePartition},
		{"memory/file_too_big", testMemoryFileTooBig},
		{"memory/agents_name_stores", testMemoryAgentRefs},
		{"memory/delete_store", testMemoryDeleteStore},
		{"memory/concurrent_if_version", testMemoryConcurrent},
		{"memory/embeddings", testMemoryEmbeddings},
		{"memory/embeddings_invalid", testMemoryEmbeddingsInvalid},
		{"memory/embeddings_go_with_files", testMemoryEmbeddingsGo},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
}

func newMemoryStore(t *testing.T, s MemoryStore, name string, lim core.MemoryLimits) *core.MemoryStore {
	t.Helper()
	m, err := s.CreateMemoryStore(t.Context(), &core.MemoryStore{Name: name, Limits: lim})
	must(t, err)
	return m
}

// change makes a change that must succeed.
func change(t *testing.T, s MemoryStore, c core.MemoryChange) []core.MemoryVersion {
	t.Helper()
	out, err := s.ChangeMemory(t.Context(), c)
	must(t, err)
	return out
}

func write(store, partition, path, content string) core.MemoryChange {
	return core.MemoryChange{Store: store, Partition: partition, Op: core.MemoryOpWrite, Path: path, Content: content}
}

// versionsOf is a history as "path@version:op" words, deletions marked.
func versionsOf(vs []core.MemoryVersion) string {
	var out []string
	for _, v := range vs {
		w := fmt.Sprintf("%s@%d:%s", v.Path, v.Version, v.Op)
		if v.Deleted {
			w += "(deleted)"
		}
		out = append(out, w)
	}
	return strings.Join(out, " ")
}

func history(t *testing.T, s MemoryStore, store, partition, path string) string {
	t.Helper()
	h, err := s.MemoryHistory(t.Context(), store, partition, path)
	must(t, err)
	return versionsOf(h)
}

func wantText(t *testing.T, what, got, want string) {
	t.Helper()
	if got != want {
		t.Fatalf("%s:\n got %s\nwant %s", what, got, want)
	}
}

// wantErrNaming wants err to be target and to say each of words.
func wantErrNaming(t *testing.T, err, target error, words ...string) {
	t.Helper()
	wantErr(t, err, target)
	for _, w := range words {
		if !strings.Contains(err.Error(), w) {
			t.Fatalf("err = %v, want it to name %q", err, w)
		}
	}
}

func testMemoryStores(t *testing.T, s MemoryStore) {
	ctx := t.Context()
	in := &core.MemoryStore{Name: "notes", Description: "what the team learnt", Shared: true,
		Limits: core.MemoryLimits{MaxFileBytes: 10, MaxVersions: 2}, Metadata: map[string]string{"team": "a"}}
	m, err := s.CreateMemoryStore(ctx, in)
	must(t, err)
	if !core.HasPrefix(m.ID, core.PrefixMemoryStore) || m.CreatedAt.IsZero() || !m.UpdatedAt.Equal(m.CreatedAt.Time) || in.ID != "" {
		t.Fatalf("created = %+v (argument %+v)", m, in)
	}
	want := *in
	want.ID, want.CreatedAt, want.UpdatedAt = m.ID, m.CreatedAt, m.UpdatedAt
	sameJSON(t, "created", m, &want)
	for _, ref := range []string{m.ID, "notes"} {
		got, err := s.GetMemoryStore(ctx, ref)
		must(t, err)
		sameJSON(t, "get "+ref, got, m)
	}
	_, err = s.GetMemoryStore(ctx, "nothing")
	wantErr(t, err, core.ErrNotFound)
	_, err = s.CreateMemoryStore(ctx, &core.MemoryStore{Name: "notes"})
	wantErr(t, err, core.ErrConflict)

	ids := []string{m.ID}
	for _, n := range []string{"b", "c"} {
		ids = append(ids, newMemoryStore(t, s, n, core.MemoryLimits{}).ID)
	}
	slices.Sort(ids)
	page, more, err := s.ListMemoryStores(ctx, "", 2)
	must(t, err)
	if len(page) != 2 || !more || page[0].ID != ids[0] || page[1].ID != ids[1] {
		t.Fatalf("first page: %d, more %v", len(page), more)
	}
	page, more, err = s.ListMemoryStores(ctx, page[1].ID, 2)
	must(t, err)
	if len(page) != 1 || more || page[0].ID != ids[2] {
		t.Fatalf("second page: %d, more %v", len(page), more)
	}
}

func testMemoryStoresInvalid(t *testing.T, s MemoryStore) {
	for name, m := range map[string]*core.MemoryStore{
		"no name":           {},
		"blank name":        {Name: "  "},
		"name like an id":   {Name: core.NewID(core.PrefixMemoryStore)},
		"not a store id":    {ID: core.NewID(core.PrefixEnvironment), Name: "x"},
		"negative file":     {Name: "x", Limits: core.MemoryLimits{MaxFileBytes: -1}},
		"negative bytes":    {Name: "x", Limits: core.MemoryLimits{MaxPartitionBytes: -1}},
		"negative versions": {Name: "x", Limits: core.MemoryLimits{MaxVersions: -1}},
	} {
		_, err := s.CreateMemoryStore(t.Context(), m)
		if !errors.Is(err, core.ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
	list, _, err := s.ListMemoryStores(t.Context(), "", 0)
	must(t, err)
	if len(list) != 0 {
		t.Fatalf("invalid memory stores were stored: %d", len(list))
	}
}

func testMemoryStoresUpdate(t *testing.T, s MemoryStore) {
	ctx := t.Context()
	m := newMemoryStore(t, s, "old", core.MemoryLimits{})
	newMemoryStore(t, s, "taken", core.MemoryLimits{})
	up, err := s.UpdateMemoryStore(ctx, "old", func(x *core.MemoryStore) error {
		x.Name, x.Limits.MaxVersions = "new", 5
		x.ID, x.CreatedAt = "mem_hijack", core.Time{} // the store keeps identity
		return nil
	})
	must(t, err)
	if up.ID != m.ID || up.Name != "new" || up.Limits.MaxVersions != 5 || !up.CreatedAt.Equal(m.CreatedAt.Time) {
		t.Fatalf("updated = %+v", up)
	}
	got, err := s.GetMemoryStore(ctx, "new")
	must(t, err)
	sameJSON(t, "after update", got, up)
	_, err = s.GetMemoryStore(ctx, "old")
	wantErr(t, err, core.ErrNotFound)
	_, err = s.UpdateMemoryStore(ctx, m.ID, func(x *core.MemoryStore) error { x.Name = "taken"; return nil })
	wantErr(t, err, core.ErrConflict)
	_, err = s.UpdateMemoryStore(ctx, m.ID, func(x *core.MemoryStore) error { x.Limits.MaxFileBytes = -1; return nil })
	wantErr(t, err, core.ErrInvalid)
	_, err = s.UpdateMemoryStore(ctx, "missing", func(*core.MemoryStore) error { return nil })
	wantErr(t, err, core.ErrNotFound)
	got, err = s.GetMemoryStore(ctx, m.ID)
	must(t, err)
	sameJSON(t, "after refused updates", got, up)
}

func testMemoryWriteRead(t *testing.T, s MemoryStore) {
	ctx := t.Context()
	m := newMemoryStore(t, s, "notes", core.MemoryLimits{})
	first := change(t, s, core.MemoryChange{Store: "notes", Partition: "chat:T1", Op: core.MemoryOpWrite, Path: "b/plan.md",
		Content: "draft", SessionID: "ses_1", TurnID: "turn_1"})
	if len(first) != 1 || first[0].Store != m.ID || first[0].Version != 1 || first[0].Size != 5 || first[0].Content != "draft" || first[0].CreatedAt.IsZero() {
		t.Fatalf("first write = %+v", first)
	}
	change(t, s, core.MemoryChange{Store: m.ID, Partition: "chat:T1", Op: core.MemoryOpWrite, Path: "b/plan.md", Content: "final ✓", SessionID: "ses_2"})
	change(t, s, write(m.ID, "chat:T1", "a.md", ""))

	latest, err := s.MemoryFile(ctx, m.ID, "chat:T1", "b/plan.md", 0)
	must(t, err)
	if latest.Version != 2 || latest.Content != "final ✓" || latest.Size != len("final ✓") || latest.Op != core.MemoryOpWrite || latest.SessionID != "ses_2" {
		t.Fatalf("latest = %+v", latest)
	}
	v1, err := s.MemoryFile(ctx, "notes", "chat:T1", "b/plan.md", 1)
	must(t, err)
	if v1.Content != "draft" || v1.TurnID != "turn_1" {
		t.Fatalf("version 1 = %+v", v1)
	}
	_, err = s.MemoryFile(ctx, m.ID, "chat:T1", "b/plan.md", 3)
	wantErr(t, err, core.ErrNotFound)
	_, err = s.MemoryFile(ctx, m.ID, "chat:T1", "none.md", 0)
	wantErr(t, err, core.ErrNotFound)

	files, err := s.MemoryFiles(ctx, m.ID, "chat:T1", false)
	must(t, err)
	wantText(t, "files", versionsOf(files), "a.md@1:write b/plan.md@2:write")
	if files[1].Content != "" || files[1].Size != len("final ✓") {
		t.Fatalf("a listing without content = %+v", files[1])
	}
	files, err = s.MemoryFiles(ctx, m.ID, "chat:T1", true)
	must(t, err)
	if files[1].Content != "final ✓" {
		t.Fatalf("a listing with content = %+v", files[1])
	}
	h, err := s.MemoryHistory(ctx, m.ID, "chat:T1", "b/plan.md")
	must(t, err)
	if versionsOf(h) != "b/plan.md@2:write b/plan.md@1:write" || h[0].SessionID != "ses_2" || h[1].SessionID != "ses_1" || h[0].Content != "" {
		t.Fatalf("history = %+v", h)
	}
	_, err = s.MemoryHistory(ctx, m.ID, "chat:T1", "none.md")
	wantErr(t, err, core.ErrNotFound)
	_, err = s.MemoryFiles(ctx, "missing", "chat:T1", false)
	wantErr(t, err, core.ErrNotFound)
}

func testMemoryPartitions(t *testing.T, s MemoryStore) {
	ctx := t.Context()
	m := newMemoryStore(t, s, "notes", core.MemoryLimits{})
	other := newMemoryStore(t, s, "other", core.MemoryLimits{})
	change(t, s, write(m.ID, "chat:T1", "a.md", "one"))
	change(t, s, write(m.ID, "chat:T1", "b.md", "one"))
	change(t, s, write(m.ID, core.SharedPartition, "a.md", "shared"))
	change(t, s, write(other.ID, "chat:T2", "a.md", "elsewhere"))

	files, err := s.MemoryFiles(ctx, m.ID, "chat:T2", false)
	must(t, err)
	if len(files) != 0 {
		t.Fatalf("chat:T2 sees %s", versionsOf(files))
	}
	_, err = s.MemoryFile(ctx, m.ID, "chat:T2", "a.md", 0)
	wantErr(t, err, core.ErrNotFound)
	// The same path in another partition starts its own versions.
	out := change(t, s, write(m.ID, "chat:T2", "a.md", "two"))
	if out[0].Version != 1 {
		t.Fatalf("a.md in chat:T2 = %+v", out[0])
	}
	got, err := s.MemoryFile(ctx, m.ID, "chat:T1", "a.md", 0)
	must(t, err)
	wantText(t, "chat:T1's a.md", got.Content, "one")
	parts, err := s.MemoryPartitions(ctx, m.ID)
	must(t, err)
	wantText(t, "partitions", strings.Join(parts, " "), "* chat:T1 chat:T2")
	parts, err = s.MemoryPartitions(ctx, other.ID)
	must(t, err)
	wantText(t, "other's partitions", strings.Join(parts, " "), "chat:T2")
	_, err = s.MemoryPartitions(ctx, "missing")
	wantErr(t, err, core.ErrNotFound)
}

func testMemoryDelete(t *testing.T, s MemoryStore) {
	ctx := t.Context()
	m := newMemoryStore(t, s, "notes", core.MemoryLimits{})
	del := core.MemoryChange{Store: m.ID, Partition: "p", Op: core.MemoryOpDelete, Path: "a.md", By: "admin"}
	_, err := s.ChangeMemory(ctx, del)
	wantErr(t, err, core.ErrNotFound)
	change(t, s, write(m.ID, "p", "a.md", "x"))
	change(t, s, write(m.ID, "p", "b.md", "y"))
	out := change(t, s, del)
	if len(out) != 1 || !out[0].Deleted || out[0].Version != 2 || out[0].Size != 0 || out[0].By != "admin" {
		t.Fatalf("delete = %+v", out)
	}
	_, err = s.ChangeMemory(ctx, del)
	wantErr(t, err, core.ErrNotFound)
	_, err = s.MemoryFile(ctx, m.ID, "p", "a.md", 0)
	wantErr(t, err, core.ErrNotFound)
	gone, err := s.MemoryFile(ctx, m.ID, "p", "a.md", 2)
	must(t, err)
	if !gone.Deleted || gone.Content != "" {
		t.Fatalf("the deletion = %+v", gone)
	}
	files, err := s.MemoryFiles(ctx, m.ID, "p", false)
	must(t, err)
	wantText(t, "files", versionsOf(files), "b.md@1:write")
	change(t, s, write(m.ID, "p", "a.md", "again"))
	wantText(t, "history", history(t, s, m.ID, "p", "a.md"), "a.md@3:write a.md@2:delete(deleted) a.md@1:write")
}

func testMemoryRename(t *testing.T, s MemoryStore) {
	ctx := t.Context()
	m := newMemoryStore(t, s, "notes", core.MemoryLimits{})
	rename := func(from, to string) core.MemoryChange {
		return core.MemoryChange{Store: m.ID, Partition: "p", Op: core.MemoryOpRename, Path: from, NewPath: to, SessionID: "ses_r"}
	}
	_, err := s.ChangeMemory(ctx, rename("a.md", "b.md"))
	wantErr(t, err, core.ErrNotFound)
	change(t, s, write(m.ID, "p", "a.md", "alpha"))
	change(t, s, write(m.ID, "p", "c.md", "gamma"))
	out := change(t, s, rename("a.md", "dir/b.md"))
	wantText(t, "rename wrote", versionsOf(out), "a.md@2:rename(deleted) dir/b.md@1:rename")
	if out[1].Content != "alpha" || out[1].SessionID != "ses_r" {
		t.Fatalf("the renamed file = %+v", out[1])
	}
	got, err := s.MemoryFile(ctx, m.ID, "p", "dir/b.md", 0)
	must(t, err)
	wantText(t, "renamed content", got.Content, "alpha")
	_, err = s.MemoryFile(ctx, m.ID, "p", "a.md", 0)
	wantErr(t, err, core.ErrNotFound)
	_, err = s.ChangeMemory(ctx, rename("c.md", "dir/b.md"))
	wantErrNaming(t, err, core.ErrConflict, "dir/b.md")
	// Back onto a deleted file: a new version of it.
	out = change(t, s, rename("dir/b.md", "a.md"))
	wantText(t, "rename back wrote", versionsOf(out), "dir/b.md@2:rename(deleted) a.md@3:rename")
	files, err := s.MemoryFiles(ctx, m.ID, "p", false)
	must(t, err)
	wantText(t, "files", versionsOf(files), "a.md@3:rename c.md@1:write")
}

func testMemoryRevert(t *testing.T, s MemoryStore) {
	ctx := t.Context()
	m := newMemoryStore(t, s, "notes", core.MemoryLimits{})
	revert := func(v int) core.MemoryChange {
		return core.MemoryChange{Store: m.ID, Partition: "p", Op: core.MemoryOpRevert, Path: "a.md", Version: v, By: "admin"}
	}
	change(t, s, write(m.ID, "p", "a.md", "one"))
	change(t, s, write(m.ID, "p", "a.md", "two"))
	out := change(t, s, revert(1))
	if len(out) != 1 || out[0].Version != 3 || out[0].Op != core.MemoryOpRevert || out[0].Content != "one" || out[0].By != "admin" {
		t.Fatalf("revert = %+v", out)
	}
	change(t, s, core.MemoryChange{Store: m.ID, Partition: "p", Op: core.MemoryOpDelete, Path: "a.md"})
	_, err := s.ChangeMemory(ctx, revert(4))
	wantErr(t, err, core.ErrNotFound) // a deletion has no content to write again
	_, err = s.ChangeMemory(ctx, revert(9))
	wantErr(t, err, core.ErrNotFound)
	// Reverting a deleted file brings it back.
	change(t, s, revert(2))
	got, err := s.MemoryFile(ctx, m.ID, "p", "a.md", 0)
	must(t, err)
	if got.Version != 5 || got.Content != "two" {
		t.Fatalf("after reverting the deleted file: %+v", got)
	}
}

func testMemoryInvalid(t *testing.T, s MemoryStore) {
	ctx := t.Context()
	m := newMemoryStore(t, s, "notes", core.MemoryLimits{})
	change(t, s, write(m.ID, "p", "a.md", "x"))
	for name, c := range map[string]core.MemoryChange{
		"absolute path":  write(m.ID, "p", "/a.md", "x"),
		"dot dot":        write(m.ID, "p", "../a.md", "x"),
		"empty segment":  write(m.ID, "p", "a//b.md", "x"),
		"empty path":     write(m.ID, "p", "", "x"),
		"nul in path":    write(m.ID, "p", "a\x00b", "x"),
		"not utf-8":      write(m.ID, "p", "b.md", "\xff\xfe"),
		"no partition":   write(m.ID, "", "b.md", "x"),
		"nul partition":  write(m.ID, "p\x00q", "b.md", "x"),
		"unknown op":     {Store: m.ID, Partition: "p", Op: "append", Path: "a.md"},
		"rename to self": {Store: m.ID, Partition: "p", Op: core.MemoryOpRename, Path: "a.md", NewPath: "a.md"},
		"rename to bad":  {Store: m.ID, Partition: "p", Op: core.MemoryOpRename, Path: "a.md", NewPath: "../b"},
		"revert to 0":    {Store: m.ID, Partition: "p", Op: core.MemoryOpRevert, Path: "a.md"},
		"no store":       write("", "p", "b.md", "x"),
	} {
		_, err := s.ChangeMemory(ctx, c)
		if !errors.Is(err, core.ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
	_, err := s.ChangeMemory(ctx, write("missing", "p", "b.md", "x"))
	wantErr(t, err, core.ErrNotFound)
	files, err := s.MemoryFiles(ctx, m.ID, "p", false)
	must(t, err)
	wantText(t, "files after refusals", versionsOf(files), "a.md@1:write")
	parts, err := s.MemoryPartitions(ctx, m.ID)
	must(t, err)
	wantText(t, "partitions after refusals", strings.Join(parts, " "), "p")
}

func testMemoryIfVersion(t *testing.T, s MemoryStore) {
	ctx := t.Context()
	m := newMemoryStore(t, s, "notes", core.MemoryLimits{})
	at := func(c core.MemoryChange, v int) core.MemoryChange { c.IfVersion = &v; return c }
	change(t, s, at(write(m.ID, "p", "a.md", "one"), 0))
	_, err := s.ChangeMemory(ctx, at(write(m.ID, "p", "a.md", "lost"), 0))
	wantErrNaming(t, err, core.ErrConflict, "a.md", "expected version 0", "latest is 1")
	_, err = s.ChangeMemory(ctx, at(write(m.ID, "p", "a.md", "lost"), 2))
	wantErrNaming(t, err, core.ErrConflict, "expected version 2", "latest is 1")
	change(t, s, at(write(m.ID, "p", "a.md", "two"), 1))
	_, err = s.ChangeMemory(ctx, at(core.MemoryChange{Store: m.ID, Partition: "p", Op: core.MemoryOpDelete, Path: "a.md"}, 1))
	wantErr(t, err, core.ErrConflict)
	change(t, s, at(core.MemoryChange{Store: m.ID, Partition: "p", Op: core.MemoryOpDelete, Path: "a.md"}, 2))
	// A deleted file is expected as none.
	change(t, s, at(write(m.ID, "p", "a.md", "three"), 0))
	wantText(t, "history", history(t, s, m.ID, "p", "a.md"), "a.md@4:write a.md@3:delete(deleted) a.md@2:write a.md@1:write")
}

func testMemoryPruneVersions(t *testing.T, s MemoryStore) {
	ctx := t.Context()
	m := newMemoryStore(t, s, "notes", core.MemoryLimits{MaxVersions: 3})
	for i := 1; i <= 5; i++ {
		change(t, s, write(m.ID, "p", "a.md", fmt.Sprint("v", i)))
	}
	change(t, s, write(m.ID, "p", "b.md", "other file"))
	wantText(t, "history", history(t, s, m.ID, "p", "a.md"), "a.md@5:write a.md@4:write a.md@3:write")
	_, err := s.MemoryFile(ctx, m.ID, "p", "a.md", 2)
	wantErr(t, err, core.ErrNotFound)
	_, err = s.ChangeMemory(ctx, core.MemoryChange{Store: m.ID, Partition: "p", Op: core.MemoryOpRevert, Path: "a.md", Version: 1})
	wantErr(t, err, core.ErrNotFound)
	// Numbers are never reused after pruning.
	out := change(t, s, core.MemoryChange{Store: m.ID, Partition: "p", Op: core.MemoryOpDelete, Path: "a.md"})
	if out[0].Version != 6 {
		t.Fatalf("the deletion = %+v, want version 6", out[0])
	}
	wantText(t, "history", history(t, s, m.ID, "p", "a.md"), "a.md@6:delete(deleted) a.md@5:write a.md@4:write")
	wantText(t, "b's history", history(t, s, m.ID, "p", "b.md"), "b.md@1:write")
}

func testMemoryPrunePartition(t *testing.T, s MemoryStore) {
	ctx := t.Context()
	m := newMemoryStore(t, s, "notes", core.MemoryLimits{MaxPartitionBytes: 10})
	change(t, s, write(m.ID, "p", "a.md", "aaa"))  // 3
	change(t, s, write(m.ID, "p", "b.md", "bbb"))  // 6
	change(t, s, write(m.ID, "p", "a.md", "a"))    // 7
	change(t, s, write(m.ID, "p", "b.md", "b"))    // 8
	change(t, s, write(m.ID, "q", "a.md", "full")) // another partition counts alone
	// 11 bytes: a.md@1 goes, the oldest version that is not a latest.
	change(t, s, write(m.ID, "p", "c.md", "ccc"))
	wantText(t, "a", history(t, s, m.ID, "p", "a.md"), "a.md@2:write")
	wantText(t, "b", history(t, s, m.ID, "p", "b.md"), "b.md@2:write b.md@1:write")
	// The latest versions alone would hold 11 bytes: refused, naming the
	// store, the tenant and the sizes; nothing is stored or pruned.
	_, err := s.ChangeMemory(ctx, write(m.ID, "p", "d.md", "dddddd"))
	wantErrNaming(t, err, core.ErrInvalid, m.ID, `"p"`, "11 bytes", "10")
	wantText(t, "b after the refusal", history(t, s, m.ID, "p", "b.md"), "b.md@2:write b.md@1:write")
	_, err = s.MemoryHistory(ctx, m.ID, "p", "d.md")
	wantErr(t, err, core.ErrNotFound)
	// A deletion frees its file's bytes for others.
	change(t, s, core.MemoryChange{Store: m.ID, Partition: "p", Op: core.MemoryOpDelete, Path: "c.md"})
	change(t, s, write(m.ID, "p", "d.md", "dddddd"))
	wantText(t, "b once d fits", history(t, s, m.ID, "p", "b.md"), "b.md@2:write")
	wantText(t, "c once d fits", history(t, s, m.ID, "p", "c.md"), "c.md@2:delete(deleted)")
	files, err := s.MemoryFiles(ctx, m.ID, "p", false)
	must(t, err)
	total := 0
	for _, f := range files {
		total += f.Size
	}
	if total != 8 {
		t.Fatalf("files %s hold %d bytes, want 8", versionsOf(files), total)
	}
}

func testMemoryFileTooBig(t *testing.T, s MemoryStore) {
	ctx := t.Context()
	m := newMemoryStore(t, s, "notes", core.MemoryLimits{MaxFileBytes: 10})
	change(t, s, write(m.ID, "p", "a.md", "0123456789"))
	_, err := s.ChangeMemory(ctx, write(m.ID, "p", "a.md", "0123456789x"))
	wantErrNaming(t, err, core.ErrInvalid, "a.md", "11 bytes", "10")
	_, err = s.ChangeMemory(ctx, write(m.ID, "p", "big.md", strings.Repeat("x", 11)))
	wantErr(t, err, core.ErrInvalid)
	wantText(t, "history", history(t, s, m.ID, "p", "a.md"), "a.md@1:write")
	_, err = s.MemoryHistory(ctx, m.ID, "p", "big.md")
	wantErr(t, err, core.ErrNotFound)
	// The default applies where the store leaves zero.
	d := newMemoryStore(t, s, "defaults", core.MemoryLimits{})
	_, err = s.ChangeMemory(ctx, write(d.ID, "p", "a.md", strings.Repeat("x", core.DefaultMemoryLimits.MaxFileBytes+1)))
	wantErr(t, err, core.ErrInvalid)
}

func testMemoryAgentRefs(t *testing.T, s MemoryStore) {
	ctx := t.Context()
	notes := newMemoryStore(t, s, "notes", core.MemoryLimits{})
	docs := newMemoryStore(t, s, "docs", core.MemoryLimits{})
	agent := func(refs ...core.MemoryStoreRef) *core.Agent {
		return &core.Agent{Name: "helper", Model: "anthropic/claude-test", System: "s", MemoryStores: refs}
	}
	for name, c := range map[string]struct {
		refs  []core.MemoryStoreRef
		field string
	}{
		"unknown store": {[]core.MemoryStoreRef{{ID: "notes"}, {ID: "missing"}}, "memory_stores[1]"},
		"no id":         {[]core.MemoryStoreRef{{}}, "memory_stores[0]"},
		"bad access":    {[]core.MemoryStoreRef{{ID: "notes", Access: "write"}}, "memory_stores[0]"},
		"twice":         {[]core.MemoryStoreRef{{ID: "notes"}, {ID: docs.ID}, {ID: notes.ID}}, "memory_stores[2]"},
	} {
		_, err := s.CreateAgent(ctx, agent(c.refs...))
		if !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%s: err = %v, want ErrInvalid naming %s", name, err, c.field)
		}
	}
	if list, _, err := s.ListAgents(ctx, "", 0); err != nil || len(list) != 0 {
		t.Fatalf("refused agents were stored: %d, %v", len(list), err)
	}
	a, err := s.CreateAgent(ctx, agent(core.MemoryStoreRef{ID: "notes"}, core.MemoryStoreRef{ID: docs.ID, Access: core.MemoryReadOnly}))
	must(t, err)
	want := []core.MemoryStoreRef{{ID: notes.ID, Access: core.MemoryReadWrite}, {ID: docs.ID, Access: core.MemoryReadOnly}}
	sameJSON(t, "created agent's stores", a.MemoryStores, want)
	got, err := s.GetAgent(ctx, a.ID)
	must(t, err)
	sameJSON(t, "stored agent's stores", got.MemoryStores, want)

	_, err = s.UpdateAgent(ctx, a.ID, 0, func(x *core.Agent) error {
		x.MemoryStores = append(x.MemoryStores, core.MemoryStoreRef{ID: "gone"})
		return nil
	})
	if !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), "memory_stores[2]") {
		t.Fatalf("update naming a missing store: %v", err)
	}
	up, err := s.UpdateAgent(ctx, a.ID, 1, func(x *core.Agent) error {
		x.MemoryStores = []core.MemoryStoreRef{{ID: "docs", Access: core.MemoryReadWrite}}
		return nil
	})
	must(t, err)
	if up.Version != 2 {
		t.Fatalf("updated = version %d, want 2 (the refused update saved nothing)", up.Version)
	}
	sameJSON(t, "updated agent's stores", up.MemoryStores, []core.MemoryStoreRef{{ID: docs.ID, Access: core.MemoryReadWrite}})
}

func testMemoryDeleteStore(t *testing.T, s MemoryStore) {
	ctx := t.Context()
	m := newMemoryStore(t, s, "notes", core.MemoryLimits{})
	change(t, s, write(m.ID, "p", "a.md", "x"))
	change(t, s, write(m.ID, "q", "a.md", "y"))
	a, err := s.CreateAgent(ctx, &core.Agent{Name: "pinning", Model: "anthropic/claude-test", System: "s", MemoryStores: []core.MemoryStoreRef{{ID: "notes"}}})
	must(t, err)
	wantErrNaming(t, s.DeleteMemoryStore(ctx, "notes"), core.ErrConflict, "pinning")
	files, err := s.MemoryFiles(ctx, m.ID, "p", false)
	must(t, err)
	wantText(t, "files after the refusal", versionsOf(files), "a.md@1:write")

	// Only the latest version counts: an older one may name the store.
	_, err = s.UpdateAgent(ctx, a.ID, 0, func(x *core.Agent) error { x.MemoryStores = nil; return nil })
	must(t, err)
	must(t, s.DeleteMemoryStore(ctx, "notes"))
	_, err = s.GetMemoryStore(ctx, m.ID)
	wantErr(t, err, core.ErrNotFound)
	wantErr(t, s.DeleteMemoryStore(ctx, m.ID), core.ErrNotFound)
	_, err = s.ChangeMemory(ctx, write(m.ID, "p", "a.md", "z"))
	wantErr(t, err, core.ErrNotFound)
	// The name is free again, and the new store holds no file.
	again := newMemoryStore(t, s, "notes", core.MemoryLimits{})
	parts, err := s.MemoryPartitions(ctx, again.ID)
	must(t, err)
	if len(parts) != 0 {
		t.Fatalf("a new store has partitions %q", parts)
	}
}

// testMemoryConcurrent: writers racing on one file, each expecting the
// version they read, end with exactly one winner and every other
// refused.
func testMemoryConcurrent(t *testing.T, s MemoryStore) {
	ctx := t.Context()
	m := newMemoryStore(t, s, "notes", core.MemoryLimits{})
	change(t, s, write(m.ID, "p", "a.md", "base"))
	const writers = 8
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make([]error, writers)
	for i := range writers {
		wg.Go(func() {
			<-start
			one := 1
			c := write(m.ID, "p", "a.md", fmt.Sprint("writer ", i))
			c.IfVersion = &one
			_, errs[i] = s.ChangeMemory(ctx, c)
		})
	}
	close(start)
	wg.Wait()
	won := -1
	for i, err := range errs {
		switch {
		case err == nil && won >= 0:
			t.Fatalf("writers %d and %d both won", won, i)
		case err == nil:
			won = i
		case !errors.Is(err, core.ErrConflict):
			t.Fatalf("writer %d: %v, want ErrConflict", i, err)
		}
	}
	if won < 0 {
		t.Fatal("no writer won")
	}
	got, err := s.MemoryFile(ctx, m.ID, "p", "a.md", 0)
	must(t, err)
	if got.Version != 2 || got.Content != fmt.Sprint("writer ", won) {
		t.Fatalf("latest = %+v, want writer %d's at version 2", got, won)
	}
}
