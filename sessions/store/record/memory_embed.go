package record

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"

	"github.com/switchboardhq/switchboard/core"
)

// memoryEmbeddingHead is the JSON part of a stored core.MemoryEmbedding;
// the vectors follow it in binary (MemoryEmbeddingBody).
type memoryEmbeddingHead struct {
	Path    string   `json:"path"`
	Version int      `json:"version"`
	Model   string   `json:"model"`
	Dims    int      `json:"dims"`
	Spans   [][2]int `json:"spans"` // each chunk's [start, end)
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

// MemoryEmbeddingBody encodes e as stored: a 4-byte big-endian length,
// that many bytes of JSON (path, version, model, dims, spans), then every
// chunk's vector in order, each value a little-endian float32. Binary
// vectors read back at memory speed: a search reads every chunk of a
// partition.
func MemoryEmbeddingBody(e core.MemoryEmbedding) ([]byte, error) {
	h := memoryEmbeddingHead{Path: e.Path, Version: e.Version, Model: e.Model, Dims: e.Dims(), Spans: make([][2]int, len(e.Chunks))}
	for i, c := range e.Chunks {
		h.Spans[i] = [2]int{c.Start, c.End}
	}
	head, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, 4+len(head)+4*h.Dims*len(e.Chunks))
	out = binary.BigEndian.AppendUint32(out, uint32(len(head)))
	out = append(out, head...)
	for _, c := range e.Chunks {
		for _, f := range c.Vector {
			out = binary.LittleEndian.AppendUint32(out, math.Float32bits(f))
		}
	}
	return out, nil
}

// DecodeMemoryEmbedding reads what MemoryEmbeddingBody wrote.
func DecodeMemoryEmbedding(raw []byte) (core.MemoryEmbedding, error) {
	if len(raw) < 4 || uint64(len(raw)-4) < uint64(binary.BigEndian.Uint32(raw)) {
		return core.MemoryEmbedding{}, fmt.Errorf("decode memory embedding: %d bytes are truncated", len(raw))
	}
	n := int(binary.BigEndian.Uint32(raw))
	var h memoryEmbeddingHead
	if err := json.Unmarshal(raw[4:4+n], &h); err != nil {
		return core.MemoryEmbedding{}, fmt.Errorf("decode memory embedding: %w", err)
	}
	vectors := raw[4+n:]
	if h.Dims < 0 || len(vectors) != 4*h.Dims*len(h.Spans) {
		return core.MemoryEmbedding{}, fmt.Errorf("decode memory embedding of %q: %d bytes of vectors, want %d chunks of %d dimensions", h.Path, len(vectors), len(h.Spans), h.Dims)
	}
	e := core.MemoryEmbedding{Path: h.Path, Version: h.Version, Model: h.Model, Chunks: make([]core.MemoryChunk, len(h.Spans))}
	all := make([]float32, h.Dims*len(h.Spans))
	for i := range all {
		all[i] = math.Float32frombits(binary.LittleEndian.Uint32(vectors[4*i:]))
	}
	for i, sp := range h.Spans {
		e.Chunks[i] = core.MemoryChunk{Start: sp[0], End: sp[1], Vector: all[i*h.Dims : (i+1)*h.Dims : (i+1)*h.Dims]}
	}
	return e, nil
}
