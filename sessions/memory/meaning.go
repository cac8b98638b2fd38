package memory

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard/core"
)

// embedError is a failure of the embedder, which search answers by
// words; a store's failure is an error of the call.
type embedError struct{ err error }

func (e *embedError) Error() string { return e.err.Error() }

// hit is how one file answers a query by meaning: its best chunk.
type hit struct {
	path       string // as the model sees it
	exact      bool   // the file holds the query as written, as whole words
	similarity float64
	content    string
	best       span
}

// searchByMeaning ranks files by the cosine similarity of their best
// chunk to the query, comparing every chunk of the partitions searched
// (brute force: a default partition is at most about ten thousand
// chunks). Files without a current embedding are embedded first, up to
// searchEmbedChunks; those left are matched by words, listed apart.
func (t *tool) searchByMeaning(ctx context.Context, query, phrase string, terms []string, files []shownFile) (string, error) {
	qv, err := t.sem.embedder.Embed(ctx, []string{query})
	if err != nil {
		return "", &embedError{err}
	}
	if len(qv) != 1 || len(qv[0]) == 0 {
		return "", &embedError{fmt.Errorf("embedder answered %d vectors for the query", len(qv))}
	}
	q, model := qv[0], t.sem.embedder.Model()

	type partition struct {
		m     *mount
		have  map[string]core.MemoryEmbedding
		stale []core.MemoryVersion
	}
	var parts []*partition
	byMount := map[*mount]*partition{}
	for _, sf := range files {
		p := byMount[sf.m]
		if p == nil {
			list, err := t.sem.store.MemoryEmbeddings(ctx, sf.m.store.ID, sf.m.partition)
			if err != nil {
				return "", err
			}
			p = &partition{m: sf.m, have: map[string]core.MemoryEmbedding{}}
			for _, e := range list {
				p.have[e.Path] = e
			}
			byMount[sf.m] = p
			parts = append(parts, p)
		}
		if e, ok := p.have[sf.f.Path]; !current(e, ok, sf.f, model, len(q)) {
			delete(p.have, sf.f.Path)
			p.stale = append(p.stale, sf.f)
		}
	}

	// Stale files are embedded now, as far as the budget goes.
	budget := searchEmbedChunks
	var unembedded []shownFile
	for _, p := range parts {
		var now []core.MemoryVersion
		for _, f := range p.stale {
			// A file larger than the whole budget is embedded when it
			// comes first, or it would never be.
			n := len(chunks(f.Content))
			if n > budget && budget < searchEmbedChunks {
				unembedded = append(unembedded, shownFile{m: p.m, f: f})
				continue
			}
			budget = max(0, budget-n)
			now = append(now, f)
		}
		if len(now) == 0 {
			continue
		}
		made, err := t.sem.embed(ctx, p.m, now)
		if err != nil {
			return "", &embedError{err}
		}
		for _, e := range made {
			p.have[e.Path] = e
		}
	}

	var hits []hit
	for _, sf := range files {
		e, ok := byMount[sf.m].have[sf.f.Path]
		if !ok || len(e.Chunks) == 0 || e.Dims() != len(q) {
			continue
		}
		h := hit{path: sf.m.show(sf.f.Path), similarity: -2, content: sf.f.Content}
		h.exact = holdsWords(sf.f.Content, phrase) || holdsWords(sf.f.Path, phrase)
		for _, c := range e.Chunks {
			if sim := cosine(q, c.Vector); sim > h.similarity && c.End <= len(sf.f.Content) {
				h.similarity, h.best = sim, span{c.Start, c.End}
			}
		}
		if h.similarity > 0 || h.exact {
			hits = append(hits, h)
		}
	}
	// A file holding the query as written comes first: a name or an
	// identifier ("INC-4521") means little to an embedding model.
	slices.SortFunc(hits, func(a, b hit) int {
		if a.exact != b.exact {
			if a.exact {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(b.similarity, a.similarity), cmp.Compare(a.path, b.path))
	})

	var b strings.Builder
	if len(hits) == 0 {
		fmt.Fprintf(&b, "No memory file is about %q.\n", query)
	} else {
		fmt.Fprintf(&b, "%d file(s) ranked by meaning for %q, best first:\n", min(len(hits), maxMeaningResults), query)
	}
	for _, h := range hits[:min(len(hits), maxMeaningResults)] {
		how := fmt.Sprintf("similarity %.2f", h.similarity)
		if h.exact {
			how = "holds the query as written; " + how
		}
		fmt.Fprintf(&b, "\n%s (%s)\n", h.path, how)
		for _, s := range chunkLines(h.content, h.best) {
			fmt.Fprintf(&b, "%6d\t%s\n", s.line, s.text)
		}
	}
	if len(unembedded) > 0 {
		fmt.Fprintf(&b, "\n%d file(s) are not indexed by meaning yet (a later search indexes them); by words:\n%s", len(unembedded), byWords(query, phrase, terms, unembedded))
	}
	return b.String(), nil
}

// chunkLines are the first lines of a chunk that hold text, numbered as
// in the file.
func chunkLines(content string, s span) []snippet {
	line := 1 + strings.Count(content[:s.start], "\n")
	var out []snippet
	for _, l := range splitLines(content[s.start:s.end]) {
		if text := strings.TrimSpace(l); text != "" && len(out) < maxSnippets {
			if len(text) > snippetChars {
				text = strings.ToValidUTF8(text[:snippetChars], "") + "…"
			}
			out = append(out, snippet{line, text})
		}
		line++
	}
	return out
}

// holdsWords says whether text holds phrase (lower case, single spaces)
// as whole words, case and spacing aside: "ship" is not in
// "relationship".
func holdsWords(text, phrase string) bool {
	norm := strings.Join(strings.Fields(strings.ToLower(text)), " ")
	for i := 0; ; {
		j := strings.Index(norm[i:], phrase)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(phrase)
		before, _ := utf8.DecodeLastRuneInString(norm[:start])
		after, _ := utf8.DecodeRuneInString(norm[end:])
		if !wordRune(before) && !wordRune(after) {
			return true
		}
		_, size := utf8.DecodeRuneInString(norm[start:])
		i = start + size
	}
}

func wordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
