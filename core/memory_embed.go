package core

import "context"

// MemoryEmbedding is how an embedding model placed one version of a
// memory file: its content in chunks, each with the chunk's vector. It is
// derived data, re-made from the file whenever it is missing or was made
// by another model or with another dimension.
type MemoryEmbedding struct {
	Path    string // the file's path, relative to the partition's root
	Version int    // the file version whose content was embedded
	Model   string // the embedding model that made the vectors
	Chunks  []MemoryChunk
}

// MemoryChunk is a piece of a file's content and its vector.
type MemoryChunk struct {
	Start, End int // byte offsets in the version's content
	Vector     []float32
}

// Dims is the length of e's vectors; 0 when it has no chunk (an empty
// file).
func (e *MemoryEmbedding) Dims() int {
	if len(e.Chunks) == 0 {
		return 0
	}
	return len(e.Chunks[0].Vector)
}

// MemoryEmbeddings keeps the embeddings of memory files, beside the files
// and in the same partitions.
type MemoryEmbeddings interface {
	// PutMemoryEmbedding saves e as the embedding of its file in the
	// partition, replacing the one saved before. It saves nothing (and
	// returns nil) when e.Version is not the file's latest version, or the
	// file is deleted, or a later version's embedding is saved already: a
	// slow embedding never overwrites a newer one.
	PutMemoryEmbedding(ctx context.Context, store, partition string, e MemoryEmbedding) error
	// MemoryEmbeddings lists the partition's embeddings by path. A deleted
	// file's embedding is gone with its deletion (ChangeMemory); one of a
	// file's older version stays until a newer replaces it, so a reader
	// compares Version with the file's.
	MemoryEmbeddings(ctx context.Context, store, partition string) ([]MemoryEmbedding, error)
}
