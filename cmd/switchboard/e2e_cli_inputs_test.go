package main_test

import (
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/fixtures/mcpservers"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// TestCLISessionInputs: retry, confirm, deny and tool-result queue their
// inputs over a real serve (or carry its refusal), and links are listed.
func TestCLISessionInputs(t *testing.T) {
	ms, hs := modelserver.Start(t)
	srv := startServer(t, t.TempDir(), modelEnv(hs.URL, modelserver.FormatAnthropic))
	sb := newCLI(t, "SWITCHBOARD_URL="+srv.url, "SWITCHBOARD_TOKEN="+adminToken)
	sb.ok("", "agent", "create", "--name", "helper", "--model", "anthropic/claude-test")
	sb.fails(`did you mean "helper"?`, "session", "create", "--agent", "helpr")

	ms.Push(modelserver.Step{Status: 401, ErrorMessage: "invalid x-api-key"}, modelserver.Step{Text: "again"})
	id := field(t, sb.ok("", "session", "create", "--agent", "helper", "--input", "hi"), "id")
	srv.waitFor(id, "the failed turn", func(st sessionState, _ []event) bool { return st.Status == "failed" })
	var queued page[struct{ ID, Type string }]
	sb.okJSON(&queued, "session", "retry", id, "--json")
	if len(queued.Data) != 1 || queued.Data[0].Type != "user.retry" {
		t.Fatalf("session retry --json: %+v", queued)
	}
	srv.waitFor(id, "the retried turn", func(s sessionState, evs []event) bool { return count(evs, "turn.completed") == 2 && s.Status == "idle" })
	for _, args := range [][]string{
		{"session", "confirm", id, "toolu_none"},
		{"session", "deny", id, "toolu_none", "--message", "no"},
		{"session", "tool-result", id, "toolu_none", "out"},
	} {
		if _, errOut, code := sb.run("", args...); code != 1 || !strings.HasPrefix(errOut, "switchboard: ") {
			t.Fatalf("%s on a session waiting for nothing: exit %d, %s", args[1], code, errOut)
		}
	}
	var links page[struct{ Key string }]
	sb.okJSON(&links, "link", "list", id, "--json")
	if len(links.Data) != 0 {
		t.Fatalf("link list of an unlinked session: %+v", links)
	}
	sb.fails("", "link", "add", id, "not-a-key")
}

// TestCLIConfirmations: a custom tool answered with session tool-result,
// an ask-first tool allowed with session confirm and another denied with
// session deny, over a real serve.
func TestCLIConfirmations(t *testing.T) {
	mcpSrv := mcpservers.NewMCPGoHTTP()
	defer mcpSrv.Close()
	ms, srv := toolsEnv(t)
	sb := newCLI(t, "SWITCHBOARD_URL="+srv.url, "SWITCHBOARD_TOKEN="+adminToken)
	agent := srv.agent(map[string]any{
		"name":        "careful",
		"tools":       []map[string]any{{"type": "custom", "name": "lookup_order", "input_schema": map[string]any{"type": "object"}}},
		"mcp_servers": []map[string]any{{"name": "docs", "url": mcpSrv.URL, "tool_policies": map[string]string{"echo": "always_ask"}}},
	})
	waitAction := func(id string) {
		t.Helper()
		srv.waitFor(id, "requires_action", func(st sessionState, _ []event) bool {
			return st.Status == "awaiting_input" && st.StopReason != nil && *st.StopReason == "requires_action"
		})
	}

	ms.Push(call("toolu_c", "lookup_order", map[string]any{"id": 7}), modelserver.Step{Text: "order 7 shipped"})
	id := srv.startSession(agent, "where is order 7?")
	waitAction(id)
	if out := sb.ok("shipped on Monday\n", "session", "tool-result", id, "toolu_c", "-"); !strings.HasPrefix(out, "queued user.custom_tool_result ") {
		t.Fatalf("session tool-result printed %q", out)
	}
	srv.waitIdle(id)
	reqs := ms.Requests()
	last := reqs[len(reqs)-1].Messages
	if b := last[len(last)-1].Content[0]; b.ToolUseID != "toolu_c" || b.Output != "shipped on Monday" {
		t.Fatalf("the model did not get the custom result: %+v", last[len(last)-1])
	}

	ms.Push(call("toolu_allow", "mcp_docs_echo", map[string]any{"text": "allowed"}), modelserver.Step{Text: "echoed"})
	srv.send(id, "echo something")
	waitAction(id)
	var queued page[struct{ Type string }]
	sb.okJSON(&queued, "session", "confirm", id, "toolu_allow", "--json")
	if len(queued.Data) != 1 || queued.Data[0].Type != "user.tool_confirmation" {
		t.Fatalf("session confirm --json: %+v", queued)
	}
	_, evs := srv.waitIdle(id)
	if out, isErr := result(t, evs, "toolu_allow"); isErr || !strings.Contains(out, "allowed") {
		t.Fatalf("allowed call: %q error=%v", out, isErr)
	}

	ms.Push(call("toolu_deny", "mcp_docs_echo", map[string]any{"text": "denied"}), modelserver.Step{Text: "understood"})
	srv.send(id, "echo again")
	waitAction(id)
	sb.ok("", "session", "deny", id, "toolu_deny", "--message", "not now")
	_, evs = srv.waitIdle(id)
	if out, isErr := result(t, evs, "toolu_deny"); !isErr || !strings.Contains(out, "not now") {
		t.Fatalf("denied call: %q error=%v", out, isErr)
	}
}
