package webtools

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakesearch"
)

var results = []fakesearch.Result{
	{Title: "Second best", URL: "https://b.example/", Content: "Also about gateways.", Score: 2},
	{Title: "Best <match>", URL: "https://a.example/", Content: "The <strong>gateway</strong> &amp; its   docs.", Score: 5},
	{Title: "Third", URL: "https://c.example/", Content: "", Score: 1},
}

func search(t *testing.T, cfg Config, input string) core.ToolResult {
	t.Helper()
	tools, err := New(cfg, nil).Tools(context.Background(), &core.Session{ID: "sess_1"}, nil)
	if err != nil || len(tools) != 1 || tools[0].Def().Name != SearchTool {
		t.Fatalf("tools %v, %v", tools, err)
	}
	res, err := tools[0].Call(context.Background(), core.ToolCall{Name: SearchTool, Input: []byte(input)})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestSearchSearXNG: results come ranked as SearXNG ranks them (by
// score), capped.
func TestSearchSearXNG(t *testing.T) {
	fake := &fakesearch.Server{Results: results}
	hs := fakesearch.Start(t, fake)
	cfg := Config{Search: BackendSearXNG, SearchURL: hs.URL + "/", SearchPolicy: core.PolicyAllow, MaxResults: 2}
	res := search(t, cfg, `{"query":"switchboard gateway"}`)
	want := "Results for \"switchboard gateway\", best first:\n\n" +
		"1. Best <match>\n   https://a.example/\n   The <strong>gateway</strong> &amp; its docs.\n\n" +
		"2. Second best\n   https://b.example/\n   Also about gateways."
	if res.IsError || res.Output != want {
		t.Fatalf("got %v:\n%s\nwant:\n%s", res.IsError, res.Output, want)
	}
	if q := fake.Queries(); len(q) != 1 || q[0].Q != "switchboard gateway" || q[0].Format != "json" {
		t.Fatalf("queries %+v", q)
	}
	if res := search(t, cfg, `{"query":"x","count":1}`); strings.Contains(res.Output, "2.") {
		t.Fatalf("count 1: %s", res.Output)
	}
	fake.JSONDisabled = true
	res = search(t, cfg, `{"query":"x"}`)
	if !res.IsError || !strings.Contains(res.Output, "answered 403 Forbidden (does the instance's settings.yml list json among search.formats?)") {
		t.Fatalf("json off: %s", res.Output)
	}
	if res := search(t, cfg, `{"query":""}`); !res.IsError {
		t.Fatalf("empty query: %s", res.Output)
	}
}

// TestSearchBrave: the subscription token goes in its header; results
// in Brave's order, their highlighting dropped.
func TestSearchBrave(t *testing.T) {
	fake := &fakesearch.Server{Results: results, Token: "brave-key"}
	hs := fakesearch.Start(t, fake)
	cfg := Config{Search: BackendBrave, SearchURL: hs.URL + fakesearch.BravePath, SearchKey: "brave-key", SearchPolicy: core.PolicyAsk, MaxResults: 10}
	res := search(t, cfg, `{"query":"gateway"}`)
	want := "Results for \"gateway\", best first:\n\n" +
		"1. Second best\n   https://b.example/\n   Also about gateways.\n\n" +
		"2. Best\n   https://a.example/\n   The gateway & its docs.\n\n" +
		"3. Third\n   https://c.example/"
	if res.IsError || res.Output != want {
		t.Fatalf("got %v:\n%s\nwant:\n%s", res.IsError, res.Output, want)
	}
	if q := fake.Queries(); len(q) != 1 || q[0].Token != "brave-key" || q[0].Count != "10" {
		t.Fatalf("queries %+v", q)
	}
	cfg.SearchKey = "wrong"
	res = search(t, cfg, `{"query":"gateway"}`)
	if !res.IsError || !strings.Contains(res.Output, "422") || !strings.Contains(res.Output, "SUBSCRIPTION_TOKEN_INVALID") || strings.Contains(res.Output, "wrong") {
		t.Fatalf("wrong key: %s", res.Output)
	}
}

// TestPolicies: each tool carries the operator's policy; a tool that is
// off is not offered.
func TestPolicies(t *testing.T) {
	tools, _ := New(Config{Fetch: true, FetchPolicy: core.PolicyAsk, Search: BackendSearXNG, SearchURL: "http://search.internal", SearchPolicy: core.PolicyAllow, MaxResults: 5, Timeout: 1}, nil).
		Tools(context.Background(), &core.Session{ID: "s"}, nil)
	got := map[string]core.Policy{}
	for _, tool := range tools {
		got[tool.Def().Name] = tool.(interface{ Policy() core.Policy }).Policy()
	}
	if len(got) != 2 || got[FetchTool] != core.PolicyAsk || got[SearchTool] != core.PolicyAllow {
		t.Fatalf("policies %v", got)
	}
	if tools, _ := New(Config{}, nil).Tools(context.Background(), &core.Session{ID: "s"}, nil); len(tools) != 0 {
		t.Fatalf("off, yet offered %d tools", len(tools))
	}
}

// TestAgentsOwnToolKept: an agent saved before the names were reserved
// keeps its custom tool of the same name; the built-in one is not
// offered beside it (the registry would refuse the pair).
func TestAgentsOwnToolKept(t *testing.T) {
	cfg := Config{Fetch: true, Search: BackendSearXNG, SearchURL: "http://search.internal", MaxResults: 5, Timeout: 1}
	a := &core.Agent{Tools: []core.ToolSpec{{Type: "custom", Name: SearchTool}}}
	tools, _ := New(cfg, nil).Tools(context.Background(), &core.Session{ID: "s"}, a)
	if len(tools) != 1 || tools[0].Def().Name != FetchTool {
		t.Fatalf("offered %d tools: %v", len(tools), tools)
	}
}

// TestSearchRedirectToAnotherHost: the backend's key must not follow a
// redirect off its host.
func TestSearchRedirectToAnotherHost(t *testing.T) {
	var leaked atomic.Bool
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Subscription-Token") != "" {
			leaked.Store(true)
		}
		io.WriteString(w, `{"web":{"results":[]}}`)
	}))
	defer other.Close()
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/search", http.StatusFound)
	}))
	defer redirector.Close()
	cfg := Config{Search: BackendBrave, SearchURL: redirector.URL + "/search", SearchKey: "brave-key", SearchPolicy: core.PolicyAllow, MaxResults: 5}
	res := search(t, cfg, `{"query":"gateway"}`)
	if !res.IsError || !strings.Contains(res.Output, "to another host") || leaked.Load() {
		t.Fatalf("leaked %v: %s", leaked.Load(), res.Output)
	}
}
