package memory_test

import (
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakememory"
)

// order is the result paths of a search, best first.
func order(out string) []string {
	var paths []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, core.MemoryRoot+"/") {
			path, _, _ := strings.Cut(l, " (")
			paths = append(paths, path)
		}
	}
	return paths
}

func TestSearchRanking(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		query string
		want  []string
	}{
		{"the exact phrase ranks over more scattered hits", map[string]string{
			"scattered.md": "release notes\nthe train was late\nrelease the train\nanother release, another train\ntrain then release",
			"phrase.md":    "Our Release  Train leaves on Fridays.",
		}, "release train", []string{"/memories/phrase.md", "/memories/scattered.md"}},
		{"more of the words rank first", map[string]string{
			"one.md":  "deploy deploy deploy deploy",
			"both.md": "we deploy on friday; never on a monday",
		}, "deploy friday", []string{"/memories/both.md", "/memories/one.md"}},
		{"then more hits", map[string]string{
			"few.md":  "postgres",
			"many.md": "postgres postgres postgres",
		}, "postgres", []string{"/memories/many.md", "/memories/few.md"}},
		{"a path match counts", map[string]string{
			"people/alice.md": "prefers short answers",
			"misc.md":         "nothing here",
		}, "alice", []string{"/memories/people/alice.md"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eachBackend(t, func(t *testing.T, stores core.MemoryStores) {
				m := newStore(t, stores, core.MemoryStore{Name: "notes"})
				seed(t, stores, m.ID, "api", tt.files)
				tool := memoryTool(t, stores, &core.Session{ID: "ses_1"}, core.MemoryStoreRef{ID: m.ID})
				res := run(t, tool, map[string]any{"command": "search", "query": tt.query})
				if res.IsError || strings.Join(order(res.Output), " ") != strings.Join(tt.want, " ") {
					t.Fatalf("order %v, want %v:\n%s", order(res.Output), tt.want, res.Output)
				}
			})
		})
	}
}

func TestSearchSnippets(t *testing.T) {
	stores := &fakememory.Stores{}
	m := newStore(t, stores, core.MemoryStore{Name: "notes"})
	seed(t, stores, m.ID, "api", map[string]string{"a.md": "intro\nthe release train\nother\nrelease\ntrain\nrelease again\nend"})
	tool := memoryTool(t, stores, &core.Session{ID: "ses_1"}, core.MemoryStoreRef{ID: m.ID})
	res := run(t, tool, map[string]any{"command": "search", "query": "release train"})
	// The phrase's line first, then lines with a word, at most 3, in
	// file order.
	want := "/memories/a.md (exact phrase; 2 of 2 words, 5 hits)\n     2\tthe release train\n     4\trelease\n     5\ttrain\n"
	if !strings.Contains(res.Output, want) {
		t.Fatalf("got\n%s\nwant\n%s", res.Output, want)
	}
}
