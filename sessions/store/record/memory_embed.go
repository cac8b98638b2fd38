package record

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"

	"github.com/switchboardhq/switchboard/core"
)

// memoryEmbeddingBody is the stored form of a core.MemoryEmbedding: each
// vector is its float32 values, little-endian, in base64 (JSON's []byte),
// a quarter of the size of JSON numbers.
type memoryEmbeddingBody struct {
	Path    string           `json:"path"`
	Version int              `json:"version"`
	Model   string           `json:"model"`
	Dims    int              `json:"dims"`
	Chunks  []memoryChunkRaw `json:"chunks"`
}

type memoryChunkRaw struct {
	Start  int    `json:"start"`
	End    int    `json:"end"`
	Vector []byte `json:"vector"`
}

// CheckMemoryEmbedding refuses an embedding a store must not save: a bad
// path or version, no model, chunks out of order or of mixed dimensions.
func CheckMemoryEmbedding(partition string, e core.MemoryEmbedding) error {
	if err := ValidMemoryPartition(partition); err != nil {
		return err
	}
	if err := core.ValidMemoryPath(e.Path); err != nil {
		return err
	}
	if e.Version < 1 || e.Model == "" {
		return fmt.Errorf("memory embedding of %q: want a version from 1 and a model: %w", e.Path, core.ErrInvalid)
	}
	dims, end := e.Dims(), 0
	for i, c := range e.Chunks {
		if len(c.Vector) != dims || dims == 0 {
			return fmt.Errorf("memory embedding of %q: chunk %d has %d dimensions, want %d (and not 0): %w", e.Path, i, len(c.Vector), dims, core.ErrInvalid)
		}
		if c.Start < end || c.End < c.Start {
			return fmt.Errorf("memory embedding of %q: chunk %d spans [%d, %d) after %d: %w", e.Path, i, c.Start, c.End, end, core.ErrInvalid)
		}
		end = c.End
	}
	return nil
}

// MemoryEmbeddingBody encodes e as stored.
func MemoryEmbeddingBody(e core.MemoryEmbedding) ([]byte, error) {
	b := memoryEmbeddingBody{Path: e.Path, Version: e.Version, Model: e.Model, Dims: e.Dims(), Chunks: make([]memoryChunkRaw, len(e.Chunks))}
	for i, c := range e.Chunks {
		raw := make([]byte, 0, 4*len(c.Vector))
		for _, f := range c.Vector {
			raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(f))
		}
		b.Chunks[i] = memoryChunkRaw{Start: c.Start, End: c.End, Vector: raw}
	}
	return json.Marshal(b)
}

// DecodeMemoryEmbedding reads what MemoryEmbeddingBody wrote.
func DecodeMemoryEmbedding(raw []byte) (core.MemoryEmbedding, error) {
	var b memoryEmbeddingBody
	if err := json.Unmarshal(raw, &b); err != nil {
		return core.MemoryEmbedding{}, fmt.Errorf("decode memory embedding: %w", err)
	}
	e := core.MemoryEmbedding{Path: b.Path, Version: b.Version, Model: b.Model, Chunks: make([]core.MemoryChunk, len(b.Chunks))}
	for i, c := range b.Chunks {
		if len(c.Vector) != 4*b.Dims {
			return core.MemoryEmbedding{}, fmt.Errorf("decode memory embedding of %q: chunk %d has %d bytes, want %d", b.Path, i, len(c.Vector), 4*b.Dims)
		}
		v := make([]float32, b.Dims)
		for j := range v {
			v[j] = math.Float32frombits(binary.LittleEndian.Uint32(c.Vector[4*j:]))
		}
		e.Chunks[i] = core.MemoryChunk{Start: c.Start, End: c.End, Vector: v}
	}
	return e, nil
}
