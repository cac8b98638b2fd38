package main_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/fixtures/fakesearch"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
	"github.com/switchboardhq/switchboard/fixtures/sandboximage"
)

// webEnv runs serve without a sandbox, with web_fetch on (private
// addresses allowed or not: test sites are on loopback) and web_search
// on a fake SearXNG, each under the policy given.
func webEnv(t *testing.T, search *fakesearch.Server, allowPrivate bool, fetchPolicy, searchPolicy string) (*modelserver.Server, *server) {
	t.Helper()
	ms, hs := modelserver.Start(t)
	env := modelEnv(hs.URL, modelserver.FormatAnthropic)
	env["SWITCHBOARD_SANDBOX"] = "none"
	env["SWITCHBOARD_WEB_FETCH"] = "on"
	if allowPrivate {
		env["SWITCHBOARD_WEB_FETCH_ALLOW_PRIVATE"] = "true"
	}
	env["SWITCHBOARD_WEB_FETCH_POLICY"] = fetchPolicy
	env["SWITCHBOARD_WEB_SEARCH"] = "searxng"
	env["SWITCHBOARD_WEB_SEARCH_URL"] = fakesearch.Start(t, search).URL
	env["SWITCHBOARD_WEB_SEARCH_POLICY"] = searchPolicy
	env["SWITCHBOARD_WEB_SEARCH_MAX_RESULTS"] = "2"
	return ms, startServer(t, t.TempDir(), env)
}

// TestWebTools: the model searches (the fake SearXNG's results reach it
// ranked and capped), then reads a page of the results as text.
func TestWebTools(t *testing.T) {
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<html><head><title>Ship it</title></head><body><h1>How we ship</h1><p>Every Monday, from <a href="/main">main</a>.</p><script>x()</script></body></html>`))
	}))
	defer page.Close()
	search := &fakesearch.Server{Results: []fakesearch.Result{
		{Title: "Third", URL: "https://c.example/", Content: "least relevant", Score: 0.5},
		{Title: "How we ship", URL: page.URL + "/ship", Content: "the release process", Score: 9},
		{Title: "Second", URL: "https://b.example/", Content: "also relevant", Score: 3},
	}}
	ms, srv := webEnv(t, search, true, "always_allow", "always_allow")
	ms.Push(call("tu_search", "web_search", map[string]any{"query": "how do we ship"}),
		call("tu_fetch", "web_fetch", map[string]any{"url": page.URL + "/ship"}),
		modelserver.Step{Text: "We ship every Monday."})
	id := srv.createSession("how do we ship?")
	_, evs := srv.waitIdle(id)

	reqs := ms.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	for _, name := range []string{"web_fetch", "web_search"} {
		if !strings.Contains(strings.Join(reqs[0].Tools, ","), name) {
			t.Fatalf("%s not offered: %v", name, reqs[0].Tools)
		}
	}
	got := lastToolResult(t, reqs[1])
	want := "Results for \"how do we ship\", best first:\n\n1. How we ship\n   " + page.URL + "/ship\n   the release process\n\n2. Second\n   https://b.example/\n   also relevant"
	if got != want {
		t.Fatalf("the model got:\n%s\nwant:\n%s", got, want)
	}
	if q := search.Queries(); len(q) != 1 || q[0].Q != "how do we ship" || q[0].Format != "json" {
		t.Fatalf("SearXNG was asked %+v", q)
	}
	got = lastToolResult(t, reqs[2])
	for _, w := range []string{"Title: Ship it", "# How we ship", "Every Monday, from [main](" + page.URL + "/main)."} {
		if !strings.Contains(got, w) {
			t.Fatalf("the page the model got lacks %q:\n%s", w, got)
		}
	}
	if strings.Contains(got, "x()") {
		t.Fatalf("a script reached the model:\n%s", got)
	}
	if out, isErr := result(t, evs, "tu_fetch"); isErr || out != got {
		t.Fatalf("logged result %v:\n%s", isErr, out)
	}
}

// TestWebToolsAskFirst: with the default settings a fetch of a private
// address is refused; with the ask-first policy a search waits for a
// person's confirmation before the backend is asked.
func TestWebToolsAskFirst(t *testing.T) {
	search := &fakesearch.Server{Results: []fakesearch.Result{{Title: "Only", URL: "https://a.example/", Score: 1}}}
	ms, srv := webEnv(t, search, false, "always_allow", "always_ask")
	ms.Push(call("tu_private", "web_fetch", map[string]any{"url": srv.url + "/v1/agents"}),
		call("tu_ask", "web_search", map[string]any{"query": "careful"}), modelserver.Step{Text: "found it"})
	id := srv.createSession("search carefully")
	srv.waitFor(id, "requires_action", func(st sessionState, _ []event) bool {
		return st.Status == "awaiting_input" && st.StopReason != nil && *st.StopReason == "requires_action"
	})
	if q := search.Queries(); len(q) != 0 {
		t.Fatalf("searched before the confirmation: %+v", q)
	}
	srv.post(id, map[string]any{"type": "user.tool_confirmation", "tool_use_id": "tu_ask", "result": "allow"})
	_, evs := srv.waitIdle(id)
	if out, isErr := result(t, evs, "tu_private"); !isErr || !strings.Contains(out, "is a loopback address); web_fetch reaches public addresses only") {
		t.Fatalf("a fetch of the gateway itself: %v %s", isErr, out)
	}
	if out, isErr := result(t, evs, "tu_ask"); isErr || !strings.Contains(out, "1. Only\n   https://a.example/") {
		t.Fatalf("allowed search: %v %s", isErr, out)
	}
}

// lastToolResult is the output of the tool result a model request ends
// with.
func lastToolResult(t *testing.T, r modelserver.Request) string {
	t.Helper()
	last := r.Messages[len(r.Messages)-1]
	for _, b := range last.Content {
		if b.ToolUseID != "" {
			return b.Output
		}
	}
	t.Fatalf("the request ends with no tool result: %+v", last)
	return ""
}

// TestWebFetchThroughSandboxEgress: a session with a sandbox fetches
// from it, through its egress proxy: a page on its environment's
// allowlist (a listener on the host's bridge address, allowed as a
// private address by the test) reads as text, a host off the allowlist
// is refused with the proxy's reason, and the proxy's decisions are in
// the session's log.
func TestWebFetchThroughSandboxEgress(t *testing.T) {
	ms, hs := modelserver.Start(t)
	env := sandboxEnv(t, hs.URL)
	env["SWITCHBOARD_EGRESS"] = "on"
	env["SWITCHBOARD_EGRESS_ALLOW_PRIVATE"] = "true"
	env["SWITCHBOARD_WEB_FETCH"] = "on"
	bridge := sandboximage.HostBridgeAddress(t)
	ln, err := net.Listen("tcp", net.JoinHostPort(bridge, "0"))
	if err != nil {
		t.Fatal(err)
	}
	page := &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			w.Write([]byte("User-agent: *\nDisallow: /private\n"))
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(`<html><head><title>Runbook</title></head><body><h2>Restart</h2><ul><li>Drain the node</li><li>Restart it</li></ul></body></html>`))
	})}}
	page.Start()
	defer page.Close()
	hostport := ln.Addr().String()
	srv := startServer(t, t.TempDir(), env)
	deploymentOf(t, srv.dataDir)
	if code, raw := srv.do("POST", "/v1/environments", map[string]any{"name": "web", "network": map[string]any{"mode": "allowlist", "allowed_hosts": []string{hostport}}}); code != 201 {
		t.Fatalf("environment: %d %s", code, raw)
	}
	_, port, _ := net.SplitHostPort(hostport)
	ms.Push(call("tu_page", "web_fetch", map[string]any{"url": "http://" + hostport + "/runbook"}),
		call("tu_robots", "web_fetch", map[string]any{"url": "http://" + hostport + "/private/x"}),
		call("tu_off", "web_fetch", map[string]any{"url": "http://127.0.0.1:" + port + "/runbook"}),
		modelserver.Step{Text: "Drain, then restart."})
	code, raw := srv.do("POST", "/v1/sessions", map[string]any{"agent": "default", "environment": "web", "input": "how do I restart?"})
	if code != 201 {
		t.Fatalf("session: %d %s", code, raw)
	}
	var sess struct{ ID string }
	mustJSON(t, raw, &sess)
	_, evs := srv.waitIdle(sess.ID)

	if out, isErr := result(t, evs, "tu_page"); isErr || !strings.Contains(out, "Title: Runbook") || !strings.Contains(out, "## Restart\n\n- Drain the node\n- Restart it") {
		t.Fatalf("the page: %v\n%s", isErr, out)
	}
	if out, isErr := result(t, evs, "tu_robots"); !isErr || !strings.Contains(out, "disallows /private/x for switchboard") {
		t.Fatalf("robots.txt: %v\n%s", isErr, out)
	}
	if out, isErr := result(t, evs, "tu_off"); !isErr || !strings.Contains(out, "refused by the sandbox's egress proxy: 127.0.0.1:"+port+" is not on this sandbox's allowlist") {
		t.Fatalf("off the allowlist: %v\n%s", isErr, out)
	}
	srv.waitFor(sess.ID, "the proxy's decisions", func(_ sessionState, evs []event) bool {
		allowed, denied := false, false
		for _, e := range evs {
			if e.Type != "sandbox.egress" {
				continue
			}
			var b struct{ Host, Decision string }
			mustJSON(t, e.Body, &b)
			allowed = allowed || (b.Host == bridge && b.Decision == "allowed")
			denied = denied || (b.Host == "127.0.0.1" && b.Decision == "denied")
		}
		return allowed && denied
	})
}
