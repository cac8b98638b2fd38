// Package webtools owns the model's web tools: web_fetch, which reads a
// page as text, and web_search, which asks a configured search backend
// (a SearXNG instance's JSON API, or the Brave Search API). Both are off
// unless the operator turns them on (Options), and each runs under its
// policy: at once, or after a person confirms the call.
//
// A session with a sandbox fetches from it, through its egress proxy,
// like any other request of the sandbox: its environment's allowlist,
// the private address guard and the proxy's decisions in the session's
// log all apply. A session without one fetches from the gateway, with
// the same private address guard (core/netguard) on every dial. Either
// way a fetch is bounded in bytes and time, follows at most a few
// redirects, each checked again, honours robots.txt unless the operator
// says not to, and reduces HTML to text with its links.
package webtools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// The tools' names (core.ReservedToolNames holds them).
const (
	FetchTool  = "web_fetch"
	SearchTool = "web_search"
)

// Tools offers the web tools that are on to every session (a
// providers.SessionTools).
type Tools struct {
	cfg     Config
	sandbox core.Sandbox
	direct  *direct
	search  backend
}

// New returns the web tools of cfg. sb is the sessions' sandbox, nil
// when they run without one: fetches then leave from the gateway, as
// they do when cfg says so.
func New(cfg Config, sb core.Sandbox) *Tools {
	if cfg.FromGateway {
		sb = nil
	}
	t := &Tools{cfg: cfg, sandbox: sb}
	if cfg.Fetch && sb == nil {
		t.direct = newDirect(cfg.AllowPrivate)
	}
	client := &http.Client{Timeout: searchTimeout, CheckRedirect: sameHost}
	switch cfg.Search {
	case BackendSearXNG:
		t.search = &searxng{base: cfg.SearchURL, client: client}
	case BackendBrave:
		t.search = &brave{endpoint: cfg.SearchURL, key: cfg.SearchKey, client: client}
	}
	return t
}

// sameHost refuses a search backend's redirect to another host: the
// client keeps custom headers across redirects, and Brave's key is one.
func sameHost(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	if from := via[0].URL; req.URL.Host != from.Host {
		return fmt.Errorf("it redirects from %s to another host, %s, which is not followed", from.Host, req.URL.Host)
	}
	return nil
}

// Tools returns the web tools of session s. An agent saved before the
// names were reserved may declare a custom tool of the same name: its
// own is kept, and the built-in one not offered.
func (t *Tools) Tools(_ context.Context, s *core.Session, a *core.Agent) ([]core.Tool, error) {
	var out []core.Tool
	if t.cfg.Fetch && !declares(a, FetchTool) {
		var tr transport = t.direct
		if t.sandbox != nil {
			tr = &sandboxed{sb: t.sandbox, session: s.ID}
		}
		out = append(out, &fetchTool{policy: t.cfg.FetchPolicy, sandboxed: t.sandbox != nil,
			f: &fetcher{tr: tr, maxBytes: t.cfg.MaxBytes, timeout: t.cfg.Timeout, robots: t.cfg.Robots}})
	}
	if t.search != nil && !declares(a, SearchTool) {
		out = append(out, &searchTool{policy: t.cfg.SearchPolicy, backend: t.search, max: t.cfg.MaxResults})
	}
	return out, nil
}

// declares reports whether agent a has a custom tool named name.
func declares(a *core.Agent, name string) bool {
	if a == nil {
		return false
	}
	for _, spec := range a.Tools {
		if spec.Name == name {
			return true
		}
	}
	return false
}

type fetchTool struct {
	policy core.Policy
	// sandboxed: the fetch leaves from the session's sandbox, under its
	// network allowlist.
	sandboxed bool
	f         *fetcher
}

// Policy is the operator's policy for the tool (toolset honours it).
func (t *fetchTool) Policy() core.Policy { return t.policy }

func (t *fetchTool) Def() core.ToolDef {
	reach := "private and internal addresses are refused, and so are pages a site's robots.txt keeps out."
	if t.sandboxed {
		reach = "the page is fetched from your sandbox, so only the hosts its network allowlist names are reached; pages a site's robots.txt keeps out are refused."
	}
	return core.ToolDef{
		Name: FetchTool,
		Description: "Fetch a web page (http or https) and read it as text: HTML is reduced to its readable text, with links as [text](url); " +
			"other text (JSON, plain text, XML) comes as it is. Redirects are followed. " +
			fmt.Sprintf("At most %d bytes are downloaded and %d KiB of text returned; ", t.f.maxBytes, maxOutput>>10) + reach,
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"url":{"type":"string","description":"The absolute http(s) URL of the page."}},` +
			`"required":["url"]}`),
	}
}

func (t *fetchTool) Call(ctx context.Context, call core.ToolCall) (core.ToolResult, error) {
	var in struct {
		URL string `json:"url"`
	}
	if err := json.Unmarshal(call.Input, &in); err != nil || in.URL == "" {
		return failed("input must be a JSON object with a string \"url\""), nil
	}
	p, err := t.f.fetch(ctx, in.URL)
	if err != nil {
		if ctx.Err() != nil {
			return core.ToolResult{}, ctx.Err()
		}
		return failed("web_fetch %s: %s", in.URL, err), nil
	}
	res := core.ToolResult{Output: p.render(t.f.maxBytes)}
	if p.Status >= 400 {
		res.IsError = true
	}
	return res, nil
}

type searchTool struct {
	policy  core.Policy
	backend backend
	max     int
}

// Policy is the operator's policy for the tool (toolset honours it).
func (t *searchTool) Policy() core.Policy { return t.policy }

func (t *searchTool) Def() core.ToolDef {
	return core.ToolDef{
		Name: SearchTool,
		Description: "Search the web. Returns results best first, each with its title, URL and a snippet; " +
			fmt.Sprintf("at most %d. Read a result's page with web_fetch when you have it.", t.max),
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"query":{"type":"string","description":"What to search for."},` +
			fmt.Sprintf(`"count":{"type":"integer","minimum":1,"maximum":%d,"description":"How many results (default and most %d)."}},`, t.max, t.max) +
			`"required":["query"]}`),
	}
}

func (t *searchTool) Call(ctx context.Context, call core.ToolCall) (core.ToolResult, error) {
	var in struct {
		Query string `json:"query"`
		Count int    `json:"count"`
	}
	if err := json.Unmarshal(call.Input, &in); err != nil || strings.TrimSpace(in.Query) == "" {
		return failed("input must be a JSON object with a string \"query\" and an optional whole number \"count\""), nil
	}
	n := t.max
	if in.Count > 0 && in.Count < n {
		n = in.Count
	}
	rs, err := t.backend.search(ctx, in.Query, n)
	if err != nil {
		if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return core.ToolResult{}, ctx.Err()
		}
		return failed("web_search: %s", err), nil
	}
	return core.ToolResult{Output: renderResults(in.Query, rs)}, nil
}

func failed(format string, args ...any) core.ToolResult {
	return core.ToolResult{Output: fmt.Sprintf(format, args...), IsError: true}
}
