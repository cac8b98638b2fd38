package memory_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakememory"
	"github.com/switchboardhq/switchboard/sessions/memory"
)

func TestNoStoresNoTool(t *testing.T) {
	stores := &fakememory.Stores{}
	st := &memory.SessionTools{Stores: stores}
	tools, err := st.Tools(t.Context(), &core.Session{ID: "ses_1"}, &core.Agent{ID: "agt_1"})
	if err != nil || tools != nil {
		t.Fatalf("agent without stores: %v, %v", tools, err)
	}
	// A store deleted since the agent version was saved is left out.
	tools, err = st.Tools(t.Context(), &core.Session{ID: "ses_1"}, &core.Agent{ID: "agt_1", MemoryStores: []core.MemoryStoreRef{{ID: "mem_gone"}}})
	if err != nil || tools != nil {
		t.Fatalf("agent with a deleted store: %v, %v", tools, err)
	}
}

// TestPartitions: a session reads and writes its tenant's partition (the
// default tenant when it has none), and a shared store's one partition.
func TestPartitions(t *testing.T) { eachBackend(t, testPartitions) }

func testPartitions(t *testing.T, stores core.MemoryStores) {
	own := newStore(t, stores, core.MemoryStore{Name: "own"})
	shared := newStore(t, stores, core.MemoryStore{Name: "shared", Shared: true})
	refs := []core.MemoryStoreRef{{ID: own.ID}, {ID: shared.ID}}
	slack := memoryTool(t, stores, &core.Session{ID: "ses_1", Tenant: "slack:T1"}, refs...)
	api := memoryTool(t, stores, &core.Session{ID: "ses_2"}, refs...)

	for _, in := range []map[string]any{
		{"command": "create", "path": "/memories/own/who.md", "file_text": "slack team T1"},
		{"command": "create", "path": "/memories/shared/all.md", "file_text": "everyone"},
	} {
		if res := run(t, slack, in); res.IsError {
			t.Fatal(res.Output)
		}
	}
	if got := content(t, stores, own.ID, "slack:T1", "who.md"); got != "slack team T1" {
		t.Errorf("own store, tenant partition: %q", got)
	}
	if got := content(t, stores, shared.ID, core.SharedPartition, "all.md"); got != "everyone" {
		t.Errorf("shared store: %q", got)
	}
	if res := run(t, api, map[string]any{"command": "view", "path": "/memories/own/who.md"}); !res.IsError {
		t.Errorf("another tenant read the file: %s", res.Output)
	}
	if res := run(t, api, map[string]any{"command": "view", "path": "/memories/shared/all.md"}); res.IsError || !strings.Contains(res.Output, "everyone") {
		t.Errorf("shared file from another tenant: %s", res.Output)
	}
	if res := run(t, api, map[string]any{"command": "create", "path": "/memories/own/who.md", "file_text": "api"}); res.IsError {
		t.Fatal(res.Output)
	}
	if got := content(t, stores, own.ID, core.DefaultTenant, "who.md"); got != "api" {
		t.Errorf("a session without a tenant writes to %q: %q", core.DefaultTenant, got)
	}
}

// TestSeveralStores: each store is a directory of /memories.
func TestSeveralStores(t *testing.T) { eachBackend(t, testSeveralStores) }

func testSeveralStores(t *testing.T, stores core.MemoryStores) {
	notes := newStore(t, stores, core.MemoryStore{Name: "notes"})
	team := newStore(t, stores, core.MemoryStore{Name: "team", Description: "the team's conventions"})
	seed(t, stores, team.ID, "slack:T1", map[string]string{"style.md": "tabs"})
	tool := memoryTool(t, stores, &core.Session{ID: "ses_1", Tenant: "slack:T1"},
		core.MemoryStoreRef{ID: notes.ID, Access: core.MemoryReadWrite}, core.MemoryStoreRef{ID: team.ID, Access: core.MemoryReadOnly})

	res := run(t, tool, map[string]any{"command": "view", "path": "/memories"})
	for _, w := range []string{"/memories/notes/\n", "/memories/team/\n", "/memories/team/style.md", "/memories/team/ (read-only): the team's conventions"} {
		if res.IsError || !strings.Contains(res.Output, w) {
			t.Errorf("view /memories lacks %q:\n%s", w, res.Output)
		}
	}
	tests := []struct {
		name string
		in   map[string]any
		want string // in an error
	}{
		{"write to the read-only store", map[string]any{"command": "create", "path": "/memories/team/x.md", "file_text": "x"}, `memory store "team" is read-only`},
		{"edit in the read-only store", map[string]any{"command": "str_replace", "path": "/memories/team/style.md", "old_str": "tabs", "new_str": "spaces"}, `memory store "team" is read-only`},
		{"delete in the read-only store", map[string]any{"command": "delete", "path": "/memories/team/style.md"}, `memory store "team" is read-only`},
		{"a store that is not the agent's", map[string]any{"command": "view", "path": "/memories/other/x.md"}, `no memory store "other"`},
		{"a file at the root", map[string]any{"command": "create", "path": "/memories/x.md", "file_text": "x"}, `no memory store "x.md"`},
		{"a store's root", map[string]any{"command": "delete", "path": "/memories/notes"}, "/memories/notes itself cannot be deleted"},
		{"a move between stores", map[string]any{"command": "rename", "old_path": "/memories/team/style.md", "new_path": "/memories/notes/style.md"}, "different memory stores"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, tool, tt.in)
			if !res.IsError || !strings.Contains(res.Output, tt.want) {
				t.Fatalf("got %v %q, want an error with %q", res.IsError, res.Output, tt.want)
			}
		})
	}
	if got := content(t, stores, team.ID, "slack:T1", "style.md"); got != "tabs" {
		t.Errorf("read-only file changed: %q", got)
	}
	if res := run(t, tool, map[string]any{"command": "create", "path": "/memories/notes/todo.md", "file_text": "ship"}); res.IsError {
		t.Fatal(res.Output)
	}
	if got := content(t, stores, notes.ID, "slack:T1", "todo.md"); got != "ship" {
		t.Errorf("notes/todo.md = %q", got)
	}
	res = run(t, tool, map[string]any{"command": "search", "query": "tabs"})
	if !strings.Contains(res.Output, "/memories/team/style.md") {
		t.Errorf("search across stores:\n%s", res.Output)
	}
}

// TestConcurrentEdit: an edit whose file another session changed after
// it was read fails, and the other session's edit stays.
func TestConcurrentEdit(t *testing.T) {
	stores := &fakememory.Stores{}
	m := newStore(t, stores, core.MemoryStore{Name: "notes"})
	seed(t, stores, m.ID, "api", map[string]string{"a.md": "count: 1\n"})
	interleaved := false
	stores.BeforeChange = func(c core.MemoryChange) {
		if c.SessionID != "ses_1" || interleaved {
			return
		}
		interleaved = true
		if _, err := stores.ChangeMemory(context.Background(), core.MemoryChange{Store: m.ID, Partition: "api", Op: core.MemoryOpWrite, Path: "a.md", Content: "count: 2\n", SessionID: "ses_2"}); err != nil {
			t.Error(err)
		}
	}
	tool := memoryTool(t, stores, &core.Session{ID: "ses_1"}, core.MemoryStoreRef{ID: m.ID})
	res := run(t, tool, map[string]any{"command": "str_replace", "path": "/memories/a.md", "old_str": "count: 1", "new_str": "count: 9"})
	if !res.IsError || !strings.Contains(res.Output, "changed by another session") || !strings.Contains(res.Output, "view it again and retry") {
		t.Fatalf("got %+v", res)
	}
	if got := content(t, stores, m.ID, "api", "a.md"); got != "count: 2\n" {
		t.Fatalf("a.md = %q: the other session's edit was lost", got)
	}
	// Read again, the edit goes through.
	res = run(t, tool, map[string]any{"command": "str_replace", "path": "/memories/a.md", "old_str": "count: 2", "new_str": "count: 3"})
	if res.IsError || content(t, stores, m.ID, "api", "a.md") != "count: 3\n" {
		t.Fatalf("retry: %+v", res)
	}
}

func TestLimits(t *testing.T) { eachBackend(t, testLimits) }

func testLimits(t *testing.T, stores core.MemoryStores) {
	m := newStore(t, stores, core.MemoryStore{Name: "small", Limits: core.MemoryLimits{MaxFileBytes: 10, MaxPartitionBytes: 15}})
	tool := memoryTool(t, stores, &core.Session{ID: "ses_1"}, core.MemoryStoreRef{ID: m.ID})
	res := run(t, tool, map[string]any{"command": "create", "path": "/memories/big.md", "file_text": strings.Repeat("x", 11)})
	if !res.IsError || !strings.Contains(res.Output, "/memories/big.md") || !strings.Contains(res.Output, "max_file_bytes 10") {
		t.Fatalf("file over the limit: %+v", res)
	}
	if res := run(t, tool, map[string]any{"command": "create", "path": "/memories/a.md", "file_text": strings.Repeat("a", 10)}); res.IsError {
		t.Fatal(res.Output)
	}
	res = run(t, tool, map[string]any{"command": "create", "path": "/memories/b.md", "file_text": strings.Repeat("b", 6)})
	if !res.IsError || !strings.Contains(res.Output, "max_partition_bytes 15") {
		t.Fatalf("partition over the limit: %+v", res)
	}
	if got := content(t, stores, m.ID, "api", "b.md"); got != "<none>" {
		t.Fatalf("b.md stored: %q", got)
	}
}

// failing is a store whose reads fail.
type failing struct{ *fakememory.Stores }

var errDown = errors.New("database down")

func (failing) MemoryFiles(context.Context, string, string, bool) ([]core.MemoryVersion, error) {
	return nil, errDown
}

func TestStoreFailureIsAnError(t *testing.T) {
	stores := failing{&fakememory.Stores{}}
	m := newStore(t, stores, core.MemoryStore{Name: "notes"})
	tool := memoryTool(t, stores, &core.Session{ID: "ses_1"}, core.MemoryStoreRef{ID: m.ID})
	for _, cmd := range []string{"view", "search", "delete"} {
		_, err := tool.Call(t.Context(), core.ToolCall{SessionID: "ses_1", Input: []byte(`{"command":"` + cmd + `","path":"/memories/a","query":"x"}`)})
		if !errors.Is(err, errDown) {
			t.Errorf("%s: err = %v, want the store's", cmd, err)
		}
	}
}
