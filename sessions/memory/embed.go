package memory

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard/core"
)

// Embedder turns texts into vectors of one model (an embeddings.Client).
type Embedder interface {
	// Model names the model; an embedding made by another is re-made.
	Model() string
	// Embed returns one vector per text, in order, all of one length.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Bounds of search by meaning.
const (
	// chunkBytes bounds the piece of a file one vector stands for: small
	// enough that a vector keeps a topic, large enough that a default
	// partition (10 MiB) is at most about ten thousand chunks.
	chunkBytes = 1000
	// searchEmbedChunks bounds the chunks one search embeds when it finds
	// files without a current embedding (written by an admin's revert, or
	// before the model changed, or while the embedder failed): a search
	// stays one or a few requests; the files left are matched by words.
	searchEmbedChunks = 256
	// maxMeaningResults bounds the files a search by meaning lists: every
	// file is somewhat similar to any query.
	maxMeaningResults = 10
)

// semantic is search by meaning: the embedder and where embeddings live.
type semantic struct {
	embedder Embedder
	store    core.MemoryEmbeddings
	log      *slog.Logger
}

// span is a chunk's byte range in a file's content.
type span struct{ start, end int }

// chunks splits content into spans of at most chunkBytes, at line ends
// where a line fits, else at a rune boundary.
func chunks(content string) []span {
	var out []span
	start := 0
	for start < len(content) {
		end := min(len(content), start+chunkBytes)
		if end < len(content) {
			if nl := strings.LastIndexByte(content[start:end], '\n'); nl >= 0 {
				end = start + nl + 1
			} else {
				for end > start && !utf8.RuneStart(content[end]) {
					end--
				}
			}
		}
		out = append(out, span{start, end})
		start = end
	}
	return out
}

// chunkText is what is embedded for a chunk: the file's path, which names
// its topic, then the chunk.
func chunkText(path, content string, s span) string {
	return path + "\n\n" + content[s.start:s.end]
}

// embed makes and saves the embeddings of files of m, in one request per
// batch of the embedder's. A file whose embedding the store no longer
// wants (changed since) is skipped by the store.
func (s *semantic) embed(ctx context.Context, m *mount, files []core.MemoryVersion) ([]core.MemoryEmbedding, error) {
	var texts []string
	spans := make([][]span, len(files))
	for i, f := range files {
		spans[i] = chunks(f.Content)
		for _, sp := range spans[i] {
			texts = append(texts, chunkText(f.Path, f.Content, sp))
		}
	}
	var vectors [][]float32
	if len(texts) > 0 {
		var err error
		if vectors, err = s.embedder.Embed(ctx, texts); err != nil {
			return nil, err
		}
		if len(vectors) != len(texts) {
			return nil, fmt.Errorf("embedder answered %d vectors for %d texts", len(vectors), len(texts))
		}
	}
	out := make([]core.MemoryEmbedding, len(files))
	for i, f := range files {
		e := core.MemoryEmbedding{Path: f.Path, Version: f.Version, Model: s.embedder.Model()}
		for _, sp := range spans[i] {
			e.Chunks = append(e.Chunks, core.MemoryChunk{Start: sp.start, End: sp.end, Vector: vectors[0]})
			vectors = vectors[1:]
		}
		if err := s.store.PutMemoryEmbedding(ctx, m.store.ID, m.partition, e); err != nil {
			return nil, fmt.Errorf("save the embedding of %s: %w", m.show(f.Path), err)
		}
		out[i] = e
	}
	return out, nil
}

// embedWritten embeds what a change wrote. A failure is logged and
// leaves the file to the next search, which embeds what it finds stale;
// the change itself is made.
func (t *tool) embedWritten(ctx context.Context, m *mount, written []core.MemoryVersion) {
	if t.sem == nil {
		return
	}
	var files []core.MemoryVersion
	for _, v := range written {
		if v.Deleted {
			continue
		}
		if len(v.Content) != v.Size {
			// The contract does not promise the content back.
			full, err := t.stores.MemoryFile(ctx, m.store.ID, m.partition, v.Path, v.Version)
			if err != nil {
				t.sem.log.Warn("memory file not embedded; search embeds it later", "memory_store_id", m.store.ID, "tenant", m.partition, "path", v.Path, "err", err)
				continue
			}
			v = *full
		}
		files = append(files, v)
	}
	if len(files) == 0 {
		return
	}
	if _, err := t.sem.embed(ctx, m, files); err != nil {
		t.sem.log.Warn("memory file not embedded; search embeds it later", "memory_store_id", m.store.ID, "tenant", m.partition, "path", files[0].Path, "model", t.sem.embedder.Model(), "err", err)
	}
}

// current says whether e is f's embedding by the model, of vectors of
// dims (any, for a file without chunks).
func current(e core.MemoryEmbedding, ok bool, f core.MemoryVersion, model string, dims int) bool {
	return ok && e.Version == f.Version && e.Model == model && (len(e.Chunks) == 0 || e.Dims() == dims)
}

// cosine is the cosine similarity of a and b, of one length; 0 when
// either is zero.
func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}
