package storetest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// embedding is a one-chunk embedding of a file's version by model "m".
func embedding(path string, version int, vector ...float32) core.MemoryEmbedding {
	return core.MemoryEmbedding{Path: path, Version: version, Model: "m", Chunks: []core.MemoryChunk{{Start: 0, End: 1, Vector: vector}}}
}

// embeddingsOf is a partition's embeddings as "path@version:model[vector]" words.
func embeddingsOf(t *testing.T, s MemoryStore, store, partition string) string {
	t.Helper()
	list, err := s.MemoryEmbeddings(t.Context(), store, partition)
	must(t, err)
	var out []string
	for _, e := range list {
		w := fmt.Sprintf("%s@%d:%s", e.Path, e.Version, e.Model)
		for _, c := range e.Chunks {
			w += fmt.Sprintf("%v", c.Vector)
		}
		out = append(out, w)
	}
	return strings.Join(out, " ")
}

// testMemoryEmbeddings: an embedding round-trips exactly, stays in its
// partition and store, and is saved only for a file's latest version.
func testMemoryEmbeddings(t *testing.T, s MemoryStore) {
	ctx := t.Context()
	m := newMemoryStore(t, s, "notes", core.MemoryLimits{})
	other := newMemoryStore(t, s, "other", core.MemoryLimits{})
	change(t, s, write(m.ID, "p", "a.md", "alpha"))
	change(t, s, write(m.ID, "p", "b.md", "beta"))
	change(t, s, write(m.ID, "q", "a.md", "alpha in q"))
	change(t, s, write(other.ID, "p", "a.md", "alpha elsewhere"))

	wantText(t, "embeddings before any", embeddingsOf(t, s, m.ID, "p"), "")
	two := core.MemoryEmbedding{Path: "a.md", Version: 1, Model: "m", Chunks: []core.MemoryChunk{
		{Start: 0, End: 3, Vector: []float32{0.25, -1.5, 3e-7}},
		{Start: 3, End: 5, Vector: []float32{1, 0, -0.125}},
	}}
	must(t, s.PutMemoryEmbedding(ctx, m.ID, "p", two))
	must(t, s.PutMemoryEmbedding(ctx, m.Name, "p", embedding("b.md", 1, 1, 2, 3)))
	got, err := s.MemoryEmbeddings(ctx, m.ID, "p")
	must(t, err)
	sameJSON(t, "embeddings", got, []core.MemoryEmbedding{two, embedding("b.md", 1, 1, 2, 3)})
	wantText(t, "another partition", embeddingsOf(t, s, m.ID, "q"), "")
	wantText(t, "another store", embeddingsOf(t, s, other.ID, "p"), "")

	// Not the latest version, a file that does not exist: nothing saved.
	change(t, s, write(m.ID, "p", "b.md", "beta 2"))
	must(t, s.PutMemoryEmbedding(ctx, m.ID, "p", embedding("b.md", 1, 9, 9, 9)))
	must(t, s.PutMemoryEmbedding(ctx, m.ID, "p", embedding("c.md", 1, 9, 9, 9)))
	must(t, s.PutMemoryEmbedding(ctx, m.ID, "p", embedding("b.md", 3, 9, 9, 9)))
	// A write leaves the older version's embedding, which says its version.
	wantText(t, "after a write", embeddingsOf(t, s, m.ID, "p"), "a.md@1:m[0.25 -1.5 3e-07][1 0 -0.125] b.md@1:m[1 2 3]")
	replaced := embedding("b.md", 2, 4, 5)
	replaced.Model = "m2"
	must(t, s.PutMemoryEmbedding(ctx, m.ID, "p", replaced))
	wantText(t, "replaced", embeddingsOf(t, s, m.ID, "p"), "a.md@1:m[0.25 -1.5 3e-07][1 0 -0.125] b.md@2:m2[4 5]")

	// An empty file has an embedding without chunks.
	change(t, s, write(m.ID, "p", "empty.md", ""))
	must(t, s.PutMemoryEmbedding(ctx, m.ID, "p", core.MemoryEmbedding{Path: "empty.md", Version: 1, Model: "m"}))
	wantText(t, "empty file", embeddingsOf(t, s, m.ID, "p"), "a.md@1:m[0.25 -1.5 3e-07][1 0 -0.125] b.md@2:m2[4 5] empty.md@1:m")

	_, err = s.MemoryEmbeddings(ctx, "mem_nothere", "p")
	wantErr(t, err, core.ErrNotFound)
	wantErr(t, s.PutMemoryEmbedding(ctx, "mem_nothere", "p", embedding("a.md", 1, 1)), core.ErrNotFound)
}

// testMemoryEmbeddingsInvalid: a malformed embedding is refused.
func testMemoryEmbeddingsInvalid(t *testing.T, s MemoryStore) {
	m := newMemoryStore(t, s, "notes", core.MemoryLimits{})
	change(t, s, write(m.ID, "p", "a.md", "alpha"))
	mixed := embedding("a.md", 1, 1, 2)
	mixed.Chunks = append(mixed.Chunks, core.MemoryChunk{Start: 1, End: 2, Vector: []float32{1}})
	noModel := embedding("a.md", 1, 1)
	noModel.Model = ""
	backwards := embedding("a.md", 1, 1)
	backwards.Chunks[0].Start, backwards.Chunks[0].End = 3, 2
	tests := []struct {
		name      string
		partition string
		e         core.MemoryEmbedding
	}{
		{"mixed dimensions", "p", mixed},
		{"no model", "p", noModel},
		{"no version", "p", embedding("a.md", 0, 1)},
		{"an unclean path", "p", embedding("/a.md", 1, 1)},
		{"no partition", "", embedding("a.md", 1, 1)},
		{"a chunk ending before it starts", "p", backwards},
		{"an empty vector", "p", embedding("a.md", 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantErr(t, s.PutMemoryEmbedding(t.Context(), m.ID, tt.partition, tt.e), core.ErrInvalid)
		})
	}
	wantText(t, "after the refusals", embeddingsOf(t, s, m.ID, "p"), "")
}

// testMemoryEmbeddingsGo: a file's deletion or rename deletes its
// embedding, and a store's deletion every one of its embeddings.
func testMemoryEmbeddingsGo(t *testing.T, s MemoryStore) {
	ctx := t.Context()
	m := newMemoryStore(t, s, "notes", core.MemoryLimits{})
	for _, p := range []string{"a.md", "b.md", "c.md"} {
		change(t, s, write(m.ID, "p", p, p))
		must(t, s.PutMemoryEmbedding(ctx, m.ID, "p", embedding(p, 1, 1)))
	}
	change(t, s, core.MemoryChange{Store: m.ID, Partition: "p", Op: core.MemoryOpDelete, Path: "a.md"})
	change(t, s, core.MemoryChange{Store: m.ID, Partition: "p", Op: core.MemoryOpRename, Path: "b.md", NewPath: "d.md"})
	wantText(t, "after a delete and a rename", embeddingsOf(t, s, m.ID, "p"), "c.md@1:m[1]")

	// A file written again after its deletion gets an embedding anew.
	change(t, s, write(m.ID, "p", "a.md", "again"))
	must(t, s.PutMemoryEmbedding(ctx, m.ID, "p", embedding("a.md", 3, 2)))
	wantText(t, "a file written again", embeddingsOf(t, s, m.ID, "p"), "a.md@3:m[2] c.md@1:m[1]")

	must(t, s.DeleteMemoryStore(ctx, m.ID))
	again := newMemoryStore(t, s, "notes", core.MemoryLimits{})
	change(t, s, write(again.ID, "p", "c.md", "c"))
	wantText(t, "a new store of the same name", embeddingsOf(t, s, again.ID, "p"), "")
}
