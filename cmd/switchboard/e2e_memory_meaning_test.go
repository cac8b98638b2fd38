package main_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/fixtures/fakeembed"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// TestMemorySearchByMeaning: with SWITCHBOARD_EMBEDDING_MODEL, a file a
// session wrote is embedded as it is written, and a later session's
// search for "how do we ship" finds /memories/deploys.md, which holds
// none of those words, ahead of a file that holds two of them.
func TestMemorySearchByMeaning(t *testing.T) {
	fake := fakeembed.New("embed-small")
	fake.RequireKey("embed-key")
	es := httptest.NewServer(fake)
	t.Cleanup(es.Close)
	ms, hs := modelserver.Start(t)
	ms.APIKey = "test-key"
	env := modelEnv(hs.URL, modelserver.FormatAnthropic)
	env["SWITCHBOARD_EMBEDDING_MODEL"] = "openai/embed-small"
	env["SWITCHBOARD_EMBEDDING_BASE_URL"] = es.URL + "/v1"
	env["SWITCHBOARD_EMBEDDING_API_KEY"] = "embed-key"
	srv := startServer(t, t.TempDir(), env)

	code, raw := srv.do("POST", "/v1/memory_stores", map[string]any{"name": "notes"})
	if code != 201 {
		t.Fatalf("create the memory store: %d %s", code, raw)
	}
	code, raw = srv.do("GET", "/v1/agents/default", nil)
	if code != 200 {
		t.Fatalf("get the default agent: %d %s", code, raw)
	}
	var agent struct {
		Version int `json:"version"`
	}
	mustJSON(t, raw, &agent)
	if code, raw := srv.do("POST", "/v1/agents/default", map[string]any{"version": agent.Version, "memory_stores": []map[string]any{{"id": "notes"}}}); code != 200 {
		t.Fatalf("give the default agent the store: %d %s", code, raw)
	}
	memory := func(id string, input map[string]any) modelserver.ToolCall {
		return modelserver.ToolCall{ID: id, Name: "memory", Input: input}
	}

	ms.Push(
		modelserver.Step{ToolCalls: []modelserver.ToolCall{
			memory("toolu_deploys", map[string]any{"command": "create", "path": "/memories/deploys.md", "file_text": "Releases go out on Tuesdays through the pipeline.\n"}),
			memory("toolu_lunch", map[string]any{"command": "create", "path": "/memories/lunch.md", "file_text": "We order pizza on Fridays from the place down the street.\n"}),
		}},
		modelserver.Step{Text: "Noted."},
	)
	writer := srv.createSession("remember how releases and lunch work")
	srv.waitIdle(writer)
	if got := strings.Join(fake.Inputs(), "|"); !strings.Contains(got, "deploys.md\n\nReleases go out on Tuesdays") {
		t.Fatalf("the files were not embedded as they were written: %q", got)
	}

	ms.Push(
		modelserver.Step{ToolCalls: []modelserver.ToolCall{memory("toolu_search", map[string]any{"command": "search", "query": "how do we ship"})}},
		modelserver.Step{Text: "On Tuesdays."},
	)
	reader := srv.createSession("how do we ship?")
	_, evs := srv.waitIdle(reader)
	r := results(t, evs)["toolu_search"]
	first := ""
	for _, l := range strings.Split(r.Output, "\n") {
		if strings.HasPrefix(l, "/memories/") {
			first = l
			break
		}
	}
	if r.IsError || !strings.HasPrefix(first, "/memories/deploys.md (similarity") {
		t.Fatalf("search by meaning: %+v", r)
	}
	srv.waitLog("memory search ranks by meaning")
}
