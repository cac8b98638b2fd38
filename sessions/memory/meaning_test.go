package memory_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/models/embeddings"
	"github.com/switchboardhq/switchboard/fixtures/fakeembed"
	"github.com/switchboardhq/switchboard/sessions/memory"
)

// deploys is a note about shipping software that holds none of the
// words (nor their letters in a row) of "how do we ship".
const deploys = "Releases go out on Tuesdays through the pipeline.\nRollouts to production need a green build first.\n"

// lunch holds "we" and "do" (in "down"): word matching finds it for
// "how do we ship", meaning must not rank it first.
const lunch = "We order pizza on Fridays from the place down the street.\n"

// embedServer is a fake embedding server answering as model.
func embedServer(t *testing.T, model string) (*fakeembed.Server, string) {
	t.Helper()
	fake := fakeembed.New(model)
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	return fake, srv.URL + "/v1"
}

// semanticTool is the memory tool of session s with an embedding model
// served at base, logging into logs when not nil.
func semanticTool(t *testing.T, stores core.MemoryStores, base, model string, logs *bytes.Buffer, s *core.Session, refs ...core.MemoryStoreRef) core.Tool {
	t.Helper()
	emb, ok := stores.(core.MemoryEmbeddings)
	if !ok {
		t.Fatalf("%T keeps no embeddings", stores)
	}
	var log *slog.Logger
	if logs != nil {
		log = slog.New(slog.NewTextHandler(logs, nil))
	}
	st := &memory.SessionTools{Stores: stores, Embeddings: emb, Logger: log,
		Embedder: embeddings.New(embeddings.Config{Model: model, BaseURL: base})}
	tools, err := st.Tools(t.Context(), s, &core.Agent{ID: "agt_1", MemoryStores: refs})
	if err != nil || len(tools) != 1 {
		t.Fatalf("tools = %v, %v", tools, err)
	}
	return tools[0]
}

func mustRun(t *testing.T, tool core.Tool, in map[string]any) string {
	t.Helper()
	res := run(t, tool, in)
	if res.IsError {
		t.Fatalf("%v: %s", in, res.Output)
	}
	return res.Output
}

// TestSearchByMeaning: with an embedding model, "how do we ship" finds
// the note about deploys that shares no word with it; without one, search
// matches words as it always did, and misses it.
func TestSearchByMeaning(t *testing.T) {
	for _, w := range strings.Fields("how do we ship") {
		if strings.Contains(strings.ToLower(deploys+"deploys.md"), w) {
			t.Fatalf("the deploy note holds %q", w)
		}
	}
	eachBackend(t, func(t *testing.T, stores core.MemoryStores) {
		fake, base := embedServer(t, "embed-small")
		m := newStore(t, stores, core.MemoryStore{Name: "notes"})
		sess := &core.Session{ID: "ses_1", Tenant: "slack:T1"}
		tool := semanticTool(t, stores, base, "embed-small", nil, sess, core.MemoryStoreRef{ID: m.ID})
		mustRun(t, tool, map[string]any{"command": "create", "path": "/memories/deploys.md", "file_text": deploys})
		mustRun(t, tool, map[string]any{"command": "create", "path": "/memories/lunch.md", "file_text": lunch})
		embedded := len(fake.Inputs())

		out := mustRun(t, tool, map[string]any{"command": "search", "query": "how do we ship"})
		if got := order(out); len(got) == 0 || got[0] != "/memories/deploys.md" {
			t.Fatalf("by meaning, order %v:\n%s", got, out)
		}
		if !strings.Contains(out, "     1\tReleases go out on Tuesdays through the pipeline.") {
			t.Errorf("the answer does not show the matching lines:\n%s", out)
		}
		// The files were embedded as they were written: the search
		// embedded its query alone.
		if got := fake.Inputs()[embedded:]; len(got) != 1 || got[0] != "how do we ship" {
			t.Errorf("the search embedded %q", got)
		}

		words := memoryTool(t, stores, sess, core.MemoryStoreRef{ID: m.ID})
		out = mustRun(t, words, map[string]any{"command": "search", "query": "how do we ship"})
		if got := order(out); strings.Join(got, " ") != "/memories/lunch.md" {
			t.Fatalf("without an embedding model, order %v:\n%s", got, out)
		}
	})
}

// TestSearchByMeaningStaysInTenant: another tenant's sessions search
// their own partition only.
func TestSearchByMeaningStaysInTenant(t *testing.T) {
	eachBackend(t, func(t *testing.T, stores core.MemoryStores) {
		_, base := embedServer(t, "embed-small")
		m := newStore(t, stores, core.MemoryStore{Name: "notes"})
		a := semanticTool(t, stores, base, "embed-small", nil, &core.Session{ID: "ses_1", Tenant: "slack:T1"}, core.MemoryStoreRef{ID: m.ID})
		b := semanticTool(t, stores, base, "embed-small", nil, &core.Session{ID: "ses_2", Tenant: "slack:T2"}, core.MemoryStoreRef{ID: m.ID})
		mustRun(t, a, map[string]any{"command": "create", "path": "/memories/deploys.md", "file_text": deploys})
		mustRun(t, b, map[string]any{"command": "create", "path": "/memories/lunch.md", "file_text": lunch})
		out := mustRun(t, b, map[string]any{"command": "search", "query": "how do we ship"})
		if got := order(out); strings.Contains(strings.Join(got, " "), "deploys") {
			t.Fatalf("tenant T2 found T1's file: %s", out)
		}
		list, err := stores.(core.MemoryEmbeddings).MemoryEmbeddings(t.Context(), m.ID, "slack:T2")
		if err != nil || len(list) != 1 || list[0].Path != "lunch.md" {
			t.Fatalf("T2's embeddings: %+v, %v", list, err)
		}
	})
}

// TestSearchFallsBackToWords: when the embedder fails, the failure is
// logged and search still answers, by words, saying so; writes succeed.
func TestSearchFallsBackToWords(t *testing.T) {
	eachBackend(t, func(t *testing.T, stores core.MemoryStores) {
		fake, base := embedServer(t, "embed-small")
		m := newStore(t, stores, core.MemoryStore{Name: "notes"})
		var logs bytes.Buffer
		tool := semanticTool(t, stores, base, "embed-small", &logs, &core.Session{ID: "ses_1"}, core.MemoryStoreRef{ID: m.ID})
		fake.Fail(http.StatusServiceUnavailable)
		mustRun(t, tool, map[string]any{"command": "create", "path": "/memories/deploys.md", "file_text": deploys + "We ship weekly.\n"})
		if !strings.Contains(logs.String(), "memory file not embedded") || !strings.Contains(logs.String(), "HTTP 503") {
			t.Errorf("the write's embedding failure was not logged:\n%s", logs.String())
		}
		out := mustRun(t, tool, map[string]any{"command": "search", "query": "ship"})
		if !strings.Contains(out, "match by words") || strings.Join(order(out), " ") != "/memories/deploys.md" {
			t.Fatalf("search with a failing embedder:\n%s", out)
		}
		if !strings.Contains(logs.String(), "memory search by meaning failed") {
			t.Errorf("the search's failure was not logged:\n%s", logs.String())
		}

		// Back up: the next search embeds the file the write could not.
		fake.Fail(0)
		out = mustRun(t, tool, map[string]any{"command": "search", "query": "how do we release"})
		if got := order(out); len(got) != 1 || got[0] != "/memories/deploys.md" || !strings.Contains(out, "ranked by meaning") {
			t.Fatalf("after the embedder is back:\n%s", out)
		}
	})
}

// TestSearchReembeds: a file written without an embedding (an admin's
// write), or embedded by another model or at another dimension, is
// embedded again by the next search, and only once.
func TestSearchReembeds(t *testing.T) {
	eachBackend(t, func(t *testing.T, stores core.MemoryStores) {
		m := newStore(t, stores, core.MemoryStore{Name: "notes"})
		seed(t, stores, m.ID, "api", map[string]string{"deploys.md": deploys})
		sess := &core.Session{ID: "ses_1"}
		ref := core.MemoryStoreRef{ID: m.ID}
		stored := func() core.MemoryEmbedding {
			t.Helper()
			list, err := stores.(core.MemoryEmbeddings).MemoryEmbeddings(t.Context(), m.ID, "api")
			if err != nil || len(list) != 1 {
				t.Fatalf("embeddings: %+v, %v", list, err)
			}
			return list[0]
		}
		steps := []struct {
			name, model string
			pad         int
			wantModel   string
			wantDims    int
		}{
			{"an admin's write", "embed-small", 0, "openai/embed-small", fakeembed.Dims},
			{"another model", "embed-large", 0, "openai/embed-large", fakeembed.Dims},
			{"another dimension", "embed-large", 5, "openai/embed-large", fakeembed.Dims + 5},
		}
		for _, st := range steps {
			fake, base := embedServer(t, st.model)
			fake.Pad(st.pad)
			tool := semanticTool(t, stores, base, st.model, nil, sess, ref)
			for i := range 2 {
				out := mustRun(t, tool, map[string]any{"command": "search", "query": "shipping"})
				if got := order(out); len(got) != 1 || got[0] != "/memories/deploys.md" {
					t.Fatalf("%s, search %d:\n%s", st.name, i, out)
				}
			}
			if got := fake.Inputs(); len(got) != 3 || !strings.HasPrefix(got[1], "deploys.md\n\nReleases") {
				t.Fatalf("%s: embedded %q, want the query, the file, the query", st.name, got)
			}
			if e := stored(); e.Model != st.wantModel || e.Dims() != st.wantDims || e.Version != 1 {
				t.Fatalf("%s: stored %s@%d of %d dimensions", st.name, e.Model, e.Version, e.Dims())
			}
		}
	})
}

// TestSearchEmbedsABoundedAmount: a search embeds at most a bounded
// number of stale chunks; the files beyond it are matched by words,
// listed apart, and indexed by later searches.
func TestSearchEmbedsABoundedAmount(t *testing.T) {
	eachBackend(t, func(t *testing.T, stores core.MemoryStores) {
		m := newStore(t, stores, core.MemoryStore{Name: "notes"})
		files := map[string]string{}
		for i := range 300 {
			files[fmt.Sprintf("n%03d.md", i)] = fmt.Sprintf("note %d about the pipeline", i)
		}
		seed(t, stores, m.ID, "api", files)
		fake, base := embedServer(t, "embed-small")
		tool := semanticTool(t, stores, base, "embed-small", nil, &core.Session{ID: "ses_1"}, core.MemoryStoreRef{ID: m.ID})
		out := mustRun(t, tool, map[string]any{"command": "search", "query": "pipeline"})
		if !strings.Contains(out, "44 file(s) are not indexed by meaning yet") {
			t.Fatalf("first search:\n%.2000s", out)
		}
		if n := len(fake.Inputs()); n != 1+256 {
			t.Fatalf("first search embedded %d texts, want the query and 256 chunks", n)
		}
		out = mustRun(t, tool, map[string]any{"command": "search", "query": "pipeline"})
		if strings.Contains(out, "not indexed") {
			t.Fatalf("second search:\n%.2000s", out)
		}
	})
}

// TestSearchEmbedsALargeFile: a file of more chunks than a search's
// budget is embedded when it comes first, else it never would be.
func TestSearchEmbedsALargeFile(t *testing.T) {
	eachBackend(t, func(t *testing.T, stores core.MemoryStores) {
		m := newStore(t, stores, core.MemoryStore{Name: "notes", Limits: core.MemoryLimits{MaxFileBytes: 400 << 10}})
		seed(t, stores, m.ID, "api", map[string]string{"big.md": strings.Repeat(strings.Repeat("pipeline ", 99)+"\n", 300)})
		fake, base := embedServer(t, "embed-small")
		tool := semanticTool(t, stores, base, "embed-small", nil, &core.Session{ID: "ses_1"}, core.MemoryStoreRef{ID: m.ID})
		out := mustRun(t, tool, map[string]any{"command": "search", "query": "deploys"})
		if strings.Join(order(out), " ") != "/memories/big.md" || strings.Contains(out, "not indexed") {
			t.Fatalf("search:\n%.2000s", out)
		}
		if n := len(fake.Inputs()); n != 1+300 {
			t.Fatalf("embedded %d texts, want the query and the file's 300 chunks", n)
		}
	})
}

// TestSearchByMeaningPutsTheQueryAsWrittenFirst: an identifier means
// little to an embedding model; the file that holds it comes first.
func TestSearchByMeaningPutsTheQueryAsWrittenFirst(t *testing.T) {
	eachBackend(t, func(t *testing.T, stores core.MemoryStores) {
		_, base := embedServer(t, "embed-small")
		m := newStore(t, stores, core.MemoryStore{Name: "notes"})
		tool := semanticTool(t, stores, base, "embed-small", nil, &core.Session{ID: "ses_1"}, core.MemoryStoreRef{ID: m.ID})
		mustRun(t, tool, map[string]any{"command": "create", "path": "/memories/incident.md", "file_text": "INC-4521: the outage that paged everyone.\n"})
		mustRun(t, tool, map[string]any{"command": "create", "path": "/memories/misc.md", "file_text": "Assorted jottings.\n"})
		out := mustRun(t, tool, map[string]any{"command": "search", "query": "INC-4521"})
		if got := order(out); len(got) == 0 || got[0] != "/memories/incident.md" || !strings.Contains(out, "holds the query as written") {
			t.Fatalf("order %v:\n%s", got, out)
		}
	})
}
