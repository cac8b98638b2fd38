package memory_test

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakememory"
	"github.com/switchboardhq/switchboard/providers"
	"github.com/switchboardhq/switchboard/sessions/memory"
	"github.com/switchboardhq/switchboard/sessions/store/bolt"
)

var _ providers.SessionTools = (*memory.SessionTools)(nil)

// eachBackend runs fn against the fake memory stores and against the
// bbolt store, so the fake the other tests trust keeps to the real
// semantics.
func eachBackend(t *testing.T, fn func(t *testing.T, stores core.MemoryStores)) {
	t.Run("fake", func(t *testing.T) { fn(t, &fakememory.Stores{}) })
	t.Run("bbolt", func(t *testing.T) {
		s, err := bolt.Open(filepath.Join(t.TempDir(), "switchboard.db"), bolt.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		fn(t, s)
	})
}

// newStore creates a memory store in stores.
func newStore(t *testing.T, stores core.MemoryStores, m core.MemoryStore) *core.MemoryStore {
	t.Helper()
	created, err := stores.CreateMemoryStore(t.Context(), &m)
	if err != nil {
		t.Fatal(err)
	}
	return created
}

// seed writes files into a partition of a store, as an admin would.
func seed(t *testing.T, stores core.MemoryStores, store, partition string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		if _, err := stores.ChangeMemory(t.Context(), core.MemoryChange{Store: store, Partition: partition, Op: core.MemoryOpWrite, Path: p, Content: content, By: "test"}); err != nil {
			t.Fatal(err)
		}
	}
}

// memoryTool is the tool SessionTools offers the session of agent a.
func memoryTool(t *testing.T, stores core.MemoryStores, s *core.Session, refs ...core.MemoryStoreRef) core.Tool {
	t.Helper()
	tools, err := (&memory.SessionTools{Stores: stores}).Tools(t.Context(), s, &core.Agent{ID: "agt_1", MemoryStores: refs})
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 1 || tools[0].Def().Name != "memory" {
		t.Fatalf("tools = %v", tools)
	}
	return tools[0]
}

// run calls the tool as session ses_1 in turn trn_1; a Go error fails
// the test.
func run(t *testing.T, tool core.Tool, in map[string]any) core.ToolResult {
	t.Helper()
	raw, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	res, err := tool.Call(t.Context(), core.ToolCall{SessionID: "ses_1", TurnID: "trn_1", ID: "tu_1", Name: "memory", Input: raw})
	if err != nil {
		t.Fatalf("%v: %v", in, err)
	}
	return res
}

// content is a file's latest content, or "<none>".
func content(t *testing.T, stores core.MemoryStores, store, partition, path string) string {
	t.Helper()
	v, err := stores.MemoryFile(t.Context(), store, partition, path, 0)
	if errors.Is(err, core.ErrNotFound) {
		return "<none>"
	}
	if err != nil {
		t.Fatal(err)
	}
	return v.Content
}

func TestCommands(t *testing.T) {
	const tenant = "slack:T1"
	type file = map[string]string
	tests := []struct {
		name    string
		in      map[string]any
		isError bool
		want    []string // in the output
		notWant []string
		files   file // expected contents after the call ("<none>": absent)
	}{
		{name: "view the root, 2 levels deep", in: map[string]any{"command": "view", "path": "/memories"},
			want:    []string{"/memories/a.md", "/memories/dir/\n", "/memories/dir/b.md", "/memories/dir/sub/\n", "/memories/\n"},
			notWant: []string{"c.md", "d.md"}},
		{name: "view with no path is the root", in: map[string]any{"command": "view"}, want: []string{"/memories/a.md"}},
		{name: "view a directory", in: map[string]any{"command": "view", "path": "/memories/dir/"},
			want: []string{"/memories/dir/b.md", "/memories/dir/sub/c.md", "/memories/dir/sub/deeper/\n"}, notWant: []string{"a.md", "d.md"}},
		{name: "view a file", in: map[string]any{"command": "view", "path": "/memories/a.md"},
			want: []string{"     1\talpha\n", "     2\tbeta\n", "     3\tgamma\n"}},
		{name: "view a range", in: map[string]any{"command": "view", "path": "/memories/a.md", "view_range": []int{2, 3}},
			want: []string{"2\tbeta", "3\tgamma"}, notWant: []string{"alpha"}},
		{name: "view a range to the end", in: map[string]any{"command": "view", "path": "/memories/a.md", "view_range": []int{3, -1}},
			want: []string{"3\tgamma"}, notWant: []string{"beta"}},
		{name: "view a range past the end", in: map[string]any{"command": "view", "path": "/memories/a.md", "view_range": []int{9, 10}},
			isError: true, want: []string{"start 9", "3 lines"}},
		{name: "view a range backwards", in: map[string]any{"command": "view", "path": "/memories/a.md", "view_range": []int{3, 2}},
			isError: true, want: []string{"end 2 is before its start 3"}},
		{name: "view a range of a directory", in: map[string]any{"command": "view", "path": "/memories/dir", "view_range": []int{1, 2}},
			isError: true, want: []string{"/memories/dir is a directory"}},
		{name: "view what is not there", in: map[string]any{"command": "view", "path": "/memories/nope.md"},
			isError: true, want: []string{"/memories/nope.md does not exist"}},

		{name: "create", in: map[string]any{"command": "create", "path": "/memories/new/n.md", "file_text": "hello\n"},
			want: []string{"Created /memories/new/n.md"}, files: file{"new/n.md": "hello\n"}},
		{name: "create overwrites", in: map[string]any{"command": "create", "path": "/memories/a.md", "file_text": "replaced"},
			want: []string{"Replaced /memories/a.md"}, files: file{"a.md": "replaced"}},
		{name: "create without file_text", in: map[string]any{"command": "create", "path": "/memories/x.md"},
			isError: true, want: []string{"file_text is required"}, files: file{"x.md": "<none>"}},
		{name: "create over a directory", in: map[string]any{"command": "create", "path": "/memories/dir", "file_text": "x"},
			isError: true, want: []string{"/memories/dir is a directory"}},
		{name: "create under a file", in: map[string]any{"command": "create", "path": "/memories/a.md/x", "file_text": "x"},
			isError: true, want: []string{"/memories/a.md is a file"}, files: file{"a.md/x": "<none>"}},
		{name: "create the root", in: map[string]any{"command": "create", "path": "/memories", "file_text": "x"},
			isError: true, want: []string{"is a directory"}},

		{name: "str_replace", in: map[string]any{"command": "str_replace", "path": "/memories/a.md", "old_str": "beta", "new_str": "BETA"},
			want: []string{"Edited /memories/a.md at line 2"}, files: file{"a.md": "alpha\nBETA\ngamma\n"}},
		{name: "str_replace without new_str deletes", in: map[string]any{"command": "str_replace", "path": "/memories/a.md", "old_str": "beta\n"},
			files: file{"a.md": "alpha\ngamma\n"}},
		{name: "str_replace of nothing", in: map[string]any{"command": "str_replace", "path": "/memories/a.md", "old_str": "delta", "new_str": "x"},
			isError: true, want: []string{"occurs 0 times in /memories/a.md"}, files: file{"a.md": "alpha\nbeta\ngamma\n"}},
		{name: "str_replace of a repeated string", in: map[string]any{"command": "str_replace", "path": "/memories/dup.md", "old_str": "x", "new_str": "y"},
			isError: true, want: []string{"occurs 3 times in /memories/dup.md"}, files: file{"dup.md": "x x x"}},
		{name: "str_replace without old_str", in: map[string]any{"command": "str_replace", "path": "/memories/a.md", "new_str": "x"},
			isError: true, want: []string{"old_str is required"}},
		{name: "str_replace in a missing file", in: map[string]any{"command": "str_replace", "path": "/memories/nope.md", "old_str": "a", "new_str": "b"},
			isError: true, want: []string{"/memories/nope.md does not exist"}},

		{name: "insert at the top", in: map[string]any{"command": "insert", "path": "/memories/a.md", "insert_line": 0, "insert_text": "zero"},
			files: file{"a.md": "zero\nalpha\nbeta\ngamma\n"}},
		{name: "insert in the middle", in: map[string]any{"command": "insert", "path": "/memories/a.md", "insert_line": 1, "insert_text": "one\ntwo\n"},
			want: []string{"Inserted 2 line(s) into /memories/a.md after line 1"}, files: file{"a.md": "alpha\none\ntwo\nbeta\ngamma\n"}},
		{name: "insert at the end", in: map[string]any{"command": "insert", "path": "/memories/a.md", "insert_line": 3, "insert_text": "delta"},
			files: file{"a.md": "alpha\nbeta\ngamma\ndelta\n"}},
		{name: "insert after a last line without newline", in: map[string]any{"command": "insert", "path": "/memories/dir/sub/c.md", "insert_line": 1, "insert_text": "more"},
			files: file{"dir/sub/c.md": "deep\nmore\n"}},
		{name: "insert out of range", in: map[string]any{"command": "insert", "path": "/memories/a.md", "insert_line": 4, "insert_text": "x"},
			isError: true, want: []string{"insert_line 4 is out of range", "0 to 3"}, files: file{"a.md": "alpha\nbeta\ngamma\n"}},
		{name: "insert without insert_line", in: map[string]any{"command": "insert", "path": "/memories/a.md", "insert_text": "x"},
			isError: true, want: []string{"insert_line is required"}},
		{name: "insert without insert_text", in: map[string]any{"command": "insert", "path": "/memories/a.md", "insert_line": 1},
			isError: true, want: []string{"insert_text is required"}},

		{name: "delete a file", in: map[string]any{"command": "delete", "path": "/memories/a.md"},
			want: []string{"Deleted /memories/a.md."}, files: file{"a.md": "<none>", "dir/b.md": "one\ntwo\n"}},
		{name: "delete a directory", in: map[string]any{"command": "delete", "path": "/memories/dir/sub"},
			want: []string{"and the 2 file(s) in it"}, files: file{"dir/sub/c.md": "<none>", "dir/sub/deeper/d.md": "<none>", "dir/b.md": "one\ntwo\n"}},
		{name: "delete what is not there", in: map[string]any{"command": "delete", "path": "/memories/di"},
			isError: true, want: []string{"/memories/di does not exist"}, files: file{"dir/b.md": "one\ntwo\n"}},
		{name: "delete the root", in: map[string]any{"command": "delete", "path": "/memories"},
			isError: true, want: []string{"/memories itself cannot be deleted"}, files: file{"a.md": "alpha\nbeta\ngamma\n"}},

		{name: "rename a file", in: map[string]any{"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/archive/a.md"},
			want: []string{"Renamed /memories/a.md to /memories/archive/a.md"}, files: file{"a.md": "<none>", "archive/a.md": "alpha\nbeta\ngamma\n"}},
		{name: "rename a directory", in: map[string]any{"command": "rename", "old_path": "/memories/dir/sub", "new_path": "/memories/moved"},
			files: file{"moved/c.md": "deep", "moved/deeper/d.md": "x", "dir/sub/c.md": "<none>"}},
		{name: "rename onto a file", in: map[string]any{"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/dir/b.md"},
			isError: true, want: []string{"new_path /memories/dir/b.md exists"}, files: file{"a.md": "alpha\nbeta\ngamma\n", "dir/b.md": "one\ntwo\n"}},
		{name: "rename onto a directory", in: map[string]any{"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/dir"},
			isError: true, want: []string{"new_path /memories/dir exists"}},
		{name: "rename into itself", in: map[string]any{"command": "rename", "old_path": "/memories/dir", "new_path": "/memories/dir/inner"},
			isError: true, want: []string{"is inside old_path"}},
		{name: "rename what is not there", in: map[string]any{"command": "rename", "old_path": "/memories/nope.md", "new_path": "/memories/x.md"},
			isError: true, want: []string{"old_path /memories/nope.md does not exist"}},
		{name: "rename without new_path", in: map[string]any{"command": "rename", "old_path": "/memories/a.md"},
			isError: true, want: []string{"new_path is required"}},

		{name: "search", in: map[string]any{"command": "search", "query": "Gamma"},
			want: []string{"/memories/a.md", "     3\tgamma"}, notWant: []string{"b.md"}},
		{name: "search within a directory", in: map[string]any{"command": "search", "query": "one deep", "path": "/memories/dir/sub"},
			want: []string{"/memories/dir/sub/c.md"}, notWant: []string{"b.md"}},
		{name: "search finding nothing", in: map[string]any{"command": "search", "query": "zebra"}, want: []string{"No memory file matches"}},
		{name: "search without a query", in: map[string]any{"command": "search", "query": " ,, "},
			isError: true, want: []string{"query is required"}},

		{name: "a path escaping /memories", in: map[string]any{"command": "view", "path": "/memories/../etc/passwd"},
			isError: true, want: []string{`"/memories/../etc/passwd" escapes /memories`}},
		{name: "an absolute path elsewhere", in: map[string]any{"command": "create", "path": "/etc/passwd", "file_text": "x"},
			isError: true, want: []string{`"/etc/passwd" is outside /memories`}},
		{name: "a path that only starts like /memories", in: map[string]any{"command": "view", "path": "/memoriesx/a"},
			isError: true, want: []string{"is outside /memories"}},
		{name: "a relative path", in: map[string]any{"command": "view", "path": "a.md"},
			isError: true, want: []string{`"a.md" is outside /memories`}},
		{name: "a NUL byte", in: map[string]any{"command": "view", "path": "/memories/a\x00.md"},
			isError: true, want: []string{"contains a NUL byte"}},
		{name: "a control character", in: map[string]any{"command": "create", "path": "/memories/a\x01.md", "file_text": "x"},
			isError: true, want: []string{"control characters"}},
		{name: "an escaping rename", in: map[string]any{"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/../../a.md"},
			isError: true, want: []string{"new_path", "escapes /memories"}, files: file{"a.md": "alpha\nbeta\ngamma\n"}},

		{name: "no command", in: map[string]any{"path": "/memories"}, isError: true, want: []string{"command is required"}},
		{name: "an unknown command", in: map[string]any{"command": "cat"}, isError: true, want: []string{`unknown command "cat"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eachBackend(t, func(t *testing.T, stores core.MemoryStores) {
				m := newStore(t, stores, core.MemoryStore{Name: "notes"})
				seed(t, stores, m.ID, tenant, map[string]string{
					"a.md": "alpha\nbeta\ngamma\n", "dup.md": "x x x", "dir/b.md": "one\ntwo\n", "dir/sub/c.md": "deep", "dir/sub/deeper/d.md": "x",
				})
				tool := memoryTool(t, stores, &core.Session{ID: "ses_1", Tenant: tenant}, core.MemoryStoreRef{ID: m.ID})
				res := run(t, tool, tt.in)
				if res.IsError != tt.isError {
					t.Fatalf("IsError = %v, want %v: %s", res.IsError, tt.isError, res.Output)
				}
				for _, w := range tt.want {
					if !strings.Contains(res.Output, w) {
						t.Errorf("output lacks %q:\n%s", w, res.Output)
					}
				}
				for _, w := range tt.notWant {
					if strings.Contains(res.Output, w) {
						t.Errorf("output has %q:\n%s", w, res.Output)
					}
				}
				for p, want := range tt.files {
					if got := content(t, stores, m.ID, tenant, p); got != want {
						t.Errorf("%s = %q, want %q", p, got, want)
					}
				}
			})
		})
	}
}

func TestMalformedInput(t *testing.T) {
	stores := &fakememory.Stores{}
	m := newStore(t, stores, core.MemoryStore{Name: "notes"})
	tool := memoryTool(t, stores, &core.Session{ID: "ses_1"}, core.MemoryStoreRef{ID: m.ID})
	res, err := tool.Call(t.Context(), core.ToolCall{SessionID: "ses_1", Input: json.RawMessage(`{"command":"view","insert_line":"x"}`)})
	if err != nil || !res.IsError || !strings.Contains(res.Output, "JSON object") {
		t.Fatalf("%+v, %v", res, err)
	}
}

// TestWritesRecordTheTurn: every version says which session's turn wrote
// it.
func TestWritesRecordTheTurn(t *testing.T) { eachBackend(t, testWritesRecordTheTurn) }

func testWritesRecordTheTurn(t *testing.T, stores core.MemoryStores) {
	m := newStore(t, stores, core.MemoryStore{Name: "notes"})
	tool := memoryTool(t, stores, &core.Session{ID: "ses_1", Tenant: "github:acme/app"}, core.MemoryStoreRef{ID: m.ID})
	for _, in := range []map[string]any{
		{"command": "create", "path": "/memories/a.md", "file_text": "one\n"},
		{"command": "str_replace", "path": "/memories/a.md", "old_str": "one", "new_str": "two"},
		{"command": "insert", "path": "/memories/a.md", "insert_line": 1, "insert_text": "three"},
		{"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/b.md"},
		{"command": "delete", "path": "/memories/b.md"},
	} {
		if res := run(t, tool, in); res.IsError {
			t.Fatalf("%v: %s", in, res.Output)
		}
	}
	for _, p := range []string{"a.md", "b.md"} {
		history, err := stores.MemoryHistory(t.Context(), m.ID, "github:acme/app", p)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range history {
			if v.SessionID != "ses_1" || v.TurnID != "trn_1" || v.By != "" {
				t.Errorf("%s version %d: session %q turn %q by %q", p, v.Version, v.SessionID, v.TurnID, v.By)
			}
		}
	}
	if n, _ := stores.MemoryHistory(t.Context(), m.ID, "github:acme/app", "a.md"); len(n) != 4 {
		t.Errorf("a.md has %d versions, want 4 (3 writes and the rename's deletion)", len(n))
	}
}
