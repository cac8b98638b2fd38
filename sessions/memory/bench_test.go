package memory

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/bolt"
)

// benchDims is a common embedding model's dimension
// (text-embedding-3-small).
const benchDims = 1536

// fixedEmbedder answers every text with one vector.
type fixedEmbedder struct{ v []float32 }

func (e fixedEmbedder) Model() string { return "m" }
func (e fixedEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = e.v
	}
	return out, nil
}

func randomVector(r *rand.Rand) []float32 {
	v := make([]float32, benchDims)
	for i := range v {
		v[i] = r.Float32()*2 - 1
	}
	return v
}

// BenchmarkSearchByMeaningFullPartition: one search by meaning over a
// partition at the default 10 MiB limit (100 files of 100 KB, 10,000
// chunks of 1536 dimensions), every embedding current, on the bbolt
// store. The baseline is the brute-force cosine alone over the same
// vectors already in memory: the figure's excess over it is reading and
// decoding the embeddings from the store.
func BenchmarkSearchByMeaningFullPartition(b *testing.B) {
	ctx := b.Context()
	s, err := bolt.Open(filepath.Join(b.TempDir(), "switchboard.db"), bolt.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	m, err := s.CreateMemoryStore(ctx, &core.MemoryStore{Name: "notes"})
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	content := strings.Repeat(strings.Repeat("x", 99)+"\n", 1000)
	var all [][]float32
	for f := range 100 {
		path := fmt.Sprintf("f%03d.md", f)
		if _, err := s.ChangeMemory(ctx, core.MemoryChange{Store: m.ID, Partition: "api", Op: core.MemoryOpWrite, Path: path, Content: content}); err != nil {
			b.Fatal(err)
		}
		e := core.MemoryEmbedding{Path: path, Version: 1, Model: "m"}
		for _, sp := range chunks(content) {
			v := randomVector(r)
			all = append(all, v)
			e.Chunks = append(e.Chunks, core.MemoryChunk{Start: sp.start, End: sp.end, Vector: v})
		}
		if err := s.PutMemoryEmbedding(ctx, m.ID, "api", e); err != nil {
			b.Fatal(err)
		}
	}
	q := randomVector(r)
	st := &SessionTools{Stores: s, Embeddings: s, Embedder: fixedEmbedder{q}}
	tools, err := st.Tools(ctx, &core.Session{ID: "ses_1"}, &core.Agent{ID: "agt_1", MemoryStores: []core.MemoryStoreRef{{ID: m.ID}}})
	if err != nil {
		b.Fatal(err)
	}
	call := core.ToolCall{SessionID: "ses_1", TurnID: "trn_1", Name: "memory", Input: json.RawMessage(`{"command":"search","query":"anything"}`)}

	var base time.Duration
	var sink float64
	b.ResetTimer()
	for b.Loop() {
		res, err := tools[0].Call(ctx, call)
		if err != nil || res.IsError || !strings.Contains(res.Output, "ranked by meaning") {
			b.Fatalf("search: %v %+v", err, res)
		}
		start := time.Now()
		for _, v := range all {
			sink += cosine(q, v)
		}
		base += time.Since(start)
	}
	n := float64(b.N)
	b.ReportMetric(float64(b.Elapsed()-base)/n/float64(time.Millisecond), "ms/search")
	b.ReportMetric(float64(base)/n/float64(time.Millisecond), "baseline-ms/search")
	b.ReportMetric(float64(len(all)), "chunks")
	_ = sink
}
