package record

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// TestMemoryEmbeddingBodyCorrupt: a body cut short or with a wrong count
// of vector bytes is an error, never a wrong vector.
func TestMemoryEmbeddingBodyCorrupt(t *testing.T) {
	e := core.MemoryEmbedding{Path: "a.md", Version: 2, Model: "m", Chunks: []core.MemoryChunk{{Start: 0, End: 4, Vector: []float32{1, -2}}, {Start: 4, End: 9, Vector: []float32{0.5, 3}}}}
	body, err := MemoryEmbeddingBody(e)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeMemoryEmbedding(body)
	if err != nil || got.Path != "a.md" || got.Version != 2 || len(got.Chunks) != 2 || got.Chunks[1].Vector[1] != 3 || got.Chunks[1].End != 9 {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	huge := binary.BigEndian.AppendUint32(nil, 1<<31)
	tests := []struct {
		name string
		raw  []byte
		want string
	}{
		{"empty", nil, "truncated"},
		{"a head longer than the body", append(huge, '{', '}'), "truncated"},
		{"a vector byte missing", body[:len(body)-1], "bytes of vectors"},
		{"a vector byte too many", append(body, 0), "bytes of vectors"},
		{"a head that is not JSON", append(binary.BigEndian.AppendUint32(nil, 2), 'x', 'y'), "decode memory embedding"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := DecodeMemoryEmbedding(tt.raw); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}
