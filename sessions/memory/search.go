package memory

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/switchboardhq/switchboard/core"
)

// Search bounds, so an answer stays small in the model's context.
const (
	maxResults   = 20
	maxSnippets  = 3
	snippetChars = 200
	// pathWeight is what a query word in a file's path counts for, in
	// occurrences: a path names what the whole file is about.
	pathWeight = 2
)

// match is how one file answers a query.
type match struct {
	path    string // as the model sees it
	phrase  bool   // the whole query occurs, as written (case and spacing aside)
	matched int    // distinct query words found in path or content
	hits    int    // occurrences of query words, path ones weighted
	lines   []snippet
}

type snippet struct {
	line int
	text string
}

// search ranks the files of the agent's stores against a query: by
// meaning when an embedder is configured and answers, else by words. It
// reads only the store (a scan of each partition's latest files and
// embeddings), so every replica answers alike.
func (t *tool) search(ctx context.Context, in input) (string, error) {
	phrase := strings.Join(strings.Fields(strings.ToLower(in.Query)), " ")
	terms := words(phrase)
	if len(terms) == 0 {
		return "", fail("query is required: words or a phrase to look for")
	}
	mounts, rel := t.mounts, ""
	if in.Path != "" {
		g, err := t.resolve("path", in.Path)
		if err != nil {
			return "", err
		}
		if g.m != nil {
			mounts, rel = []*mount{g.m}, g.rel
		}
	}
	var all []shownFile
	for _, m := range mounts {
		files, err := t.files(ctx, m, true)
		if err != nil {
			return "", err
		}
		for _, f := range under(files, rel) {
			all = append(all, shownFile{m: m, f: f})
		}
	}
	note := ""
	if t.sem != nil {
		out, err := t.searchByMeaning(ctx, in.Query, phrase, terms, all)
		if err == nil {
			return out, nil
		}
		var ee *embedError
		if !errors.As(err, &ee) {
			return "", err
		}
		t.log.Warn("memory search by meaning failed; matching words", "model", t.sem.embedder.Model(), "err", ee.err)
		note = "(Search by meaning is unavailable right now; these files match by words.)\n"
	}
	return note + byWords(in.Query, phrase, terms, all), nil
}

// shownFile is a file of a mount, with its content.
type shownFile struct {
	m *mount
	f core.MemoryVersion
}

// byWords ranks files by the query's words: those holding the whole
// phrase first, then by words matched and hits.
func byWords(query, phrase string, terms []string, files []shownFile) string {
	var found []match
	for _, sf := range files {
		if r, ok := score(sf.m.show(sf.f.Path), sf.f.Path, sf.f.Content, phrase, terms); ok {
			found = append(found, r)
		}
	}
	slices.SortFunc(found, func(a, b match) int {
		if a.phrase != b.phrase {
			if a.phrase {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(b.matched, a.matched), cmp.Compare(b.hits, a.hits), cmp.Compare(a.path, b.path))
	})
	if len(found) == 0 {
		return fmt.Sprintf("No memory file matches %q.", query)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d file(s) match %q, best first:\n", len(found), query)
	for _, r := range found[:min(len(found), maxResults)] {
		how := fmt.Sprintf("%d of %d words, %d hits", r.matched, len(terms), r.hits)
		if r.phrase && len(terms) > 1 {
			how = "exact phrase; " + how
		}
		fmt.Fprintf(&b, "\n%s (%s)\n", r.path, how)
		for _, s := range r.lines {
			fmt.Fprintf(&b, "%6d\t%s\n", s.line, s.text)
		}
	}
	if len(found) > maxResults {
		fmt.Fprintf(&b, "\n(%d more; narrow the query or pass a path)\n", len(found)-maxResults)
	}
	return b.String()
}

// score measures one file against the query; ok is false when nothing
// of it matches.
func score(shown, path, content, phrase string, terms []string) (match, bool) {
	lower := strings.ToLower(content)
	lowerPath := strings.ToLower(path)
	r := match{path: shown, phrase: strings.Contains(strings.Join(strings.Fields(lower), " "), phrase) || strings.Contains(lowerPath, phrase)}
	for _, term := range terms {
		n := strings.Count(lower, term) + pathWeight*strings.Count(lowerPath, term)
		if n > 0 {
			r.matched++
			r.hits += n
		}
	}
	if r.matched == 0 && !r.phrase {
		return r, false
	}
	r.lines = snippets(content, phrase, terms)
	return r, true
}

// snippets picks the lines that best show why a file matched: those
// holding the phrase, then those holding the most query words, shown in
// file order.
func snippets(content, phrase string, terms []string) []snippet {
	type scored struct {
		snippet
		rank int
	}
	var all []scored
	for i, line := range splitLines(content) {
		lower := strings.ToLower(line)
		rank := 0
		for _, term := range terms {
			if strings.Contains(lower, term) {
				rank++
			}
		}
		if strings.Contains(strings.Join(strings.Fields(lower), " "), phrase) {
			rank += len(terms) + 1
		}
		if rank > 0 {
			text := strings.TrimSpace(line)
			if len(text) > snippetChars {
				text = strings.ToValidUTF8(text[:snippetChars], "") + "…"
			}
			all = append(all, scored{snippet{i + 1, text}, rank})
		}
	}
	slices.SortStableFunc(all, func(a, b scored) int { return cmp.Compare(b.rank, a.rank) })
	all = all[:min(len(all), maxSnippets)]
	slices.SortFunc(all, func(a, b scored) int { return cmp.Compare(a.line, b.line) })
	out := make([]snippet, len(all))
	for i, s := range all {
		out[i] = s.snippet
	}
	return out
}

// words are the distinct words of s, in order.
func words(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}
