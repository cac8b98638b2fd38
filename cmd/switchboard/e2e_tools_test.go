package main_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/fixtures/mcpservers"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

const mcpToken = "mcp-e2e-token-58c2e1a9"

// toolsEnv runs serve with the scripted model and no sandbox, allowing
// the stdio MCP servers given.
func toolsEnv(t *testing.T, stdio ...string) (*modelserver.Server, *server) {
	t.Helper()
	ms, hs := modelserver.Start(t)
	env := modelEnv(hs.URL, modelserver.FormatAnthropic)
	delete(env, "SWITCHBOARD_MODEL")
	env["SWITCHBOARD_SANDBOX"] = "none"
	env["SWITCHBOARD_MCP_STDIO_ALLOW"] = strings.Join(stdio, ",")
	return ms, startServer(t, t.TempDir(), env)
}

// credential stores mcpToken in a vault, bound to loopback.
func (s *server) credential() string {
	s.t.Helper()
	code, raw := s.do("POST", "/v1/vaults", map[string]any{"name": "mcp"})
	if code != 201 {
		s.t.Fatalf("vault: %d %s", code, raw)
	}
	var v struct{ ID string }
	mustJSON(s.t, raw, &v)
	code, raw = s.do("POST", "/v1/vaults/"+v.ID+"/credentials", map[string]any{
		"name": "docs", "kind": "static_bearer", "hosts": []string{"127.0.0.1"}, "token": mcpToken,
	})
	if code != 201 {
		s.t.Fatalf("credential: %d %s", code, raw)
	}
	var c struct{ ID string }
	mustJSON(s.t, raw, &c)
	return c.ID
}

// agent creates an agent from body and returns its id.
func (s *server) agent(body map[string]any) string {
	s.t.Helper()
	body["model"] = "anthropic/claude-test"
	code, raw := s.do("POST", "/v1/agents", body)
	if code != 201 {
		s.t.Fatalf("agent: %d %s", code, raw)
	}
	var a struct{ ID string }
	mustJSON(s.t, raw, &a)
	return a.ID
}

func (s *server) send(id, text string) {
	s.t.Helper()
	s.post(id, map[string]any{"type": "user.message", "text": text})
}

func (s *server) post(id string, ev map[string]any) {
	s.t.Helper()
	if code, raw := s.do("POST", "/v1/sessions/"+id+"/events", map[string]any{"events": []map[string]any{ev}}); code != 202 {
		s.t.Fatalf("post %v: %d %s", ev, code, raw)
	}
}

func (s *server) startSession(agent, input string) string {
	s.t.Helper()
	code, raw := s.do("POST", "/v1/sessions", map[string]any{"agent": agent, "input": input})
	if code != 201 {
		s.t.Fatalf("session: %d %s", code, raw)
	}
	var c struct{ ID string }
	mustJSON(s.t, raw, &c)
	return c.ID
}

// result finds the tool result of a call.
func result(t *testing.T, evs []event, id string) (output string, isError bool) {
	t.Helper()
	for _, e := range evs {
		if e.Type != "agent.tool_result" {
			continue
		}
		var b struct {
			ToolUseID string `json:"tool_use_id"`
			Output    string `json:"output"`
			IsError   bool   `json:"is_error"`
		}
		mustJSON(t, e.Body, &b)
		if b.ToolUseID == id {
			return b.Output, b.IsError
		}
	}
	t.Fatalf("no result for %s in %v", id, types(evs))
	return "", false
}

func call(id, name string, input any) modelserver.Step {
	return modelserver.Step{ToolCalls: []modelserver.ToolCall{{ID: id, Name: name, Input: input}}}
}

// noSecret checks that neither the model nor the log ever saw the token.
func noSecret(t *testing.T, ms *modelserver.Server, s *server, id string) {
	t.Helper()
	for _, r := range ms.Requests() {
		if bytes.Contains(r.Raw, []byte(mcpToken)) {
			t.Fatal("a model request holds the credential")
		}
	}
	_, raw := s.do("GET", "/v1/sessions/"+id+"/events?limit=1000", nil)
	if bytes.Contains(raw, []byte(mcpToken)) {
		t.Fatal("the event log holds the credential")
	}
	if strings.Contains(s.out.String(), mcpToken) {
		t.Fatal("the gateway's log holds the credential")
	}
}

// TestMCPServerOverHTTP: an external MCP server (mcp-go, then go-sdk as an
// independent implementation) named on an agent is called by the model;
// the server sees the vault credential, the model and the log never do,
// and one connection serves several turns.
func TestMCPServerOverHTTP(t *testing.T) {
	for _, tt := range []struct {
		name string
		new  func() *mcpservers.HTTPServer
	}{{"mcp-go", mcpservers.NewMCPGoHTTP}, {"go-sdk", mcpservers.NewGoSDKHTTP}} {
		t.Run(tt.name, func(t *testing.T) {
			mcpSrv := tt.new()
			defer mcpSrv.Close()
			mcpSrv.Expect(mcpToken, true)
			ms, srv := toolsEnv(t)
			agent := srv.agent(map[string]any{"name": "docs-agent", "mcp_servers": []map[string]any{
				{"name": "docs", "url": mcpSrv.URL, "auth": map[string]any{"vault_credential": srv.credential()}},
			}})
			ms.Push(call("toolu_1", "mcp_docs_echo", map[string]any{"text": "hello mcp"}),
				call("toolu_2", "mcp_docs_authorized", map[string]any{}), modelserver.Step{Text: "done"})
			id := srv.startSession(agent, "use the docs server")
			_, evs := srv.waitIdle(id)
			if out, isErr := result(t, evs, "toolu_1"); isErr || !strings.Contains(out, "hello mcp") {
				t.Fatalf("echo: %q error=%v", out, isErr)
			}
			if out, _ := result(t, evs, "toolu_2"); !strings.Contains(out, `"authorized":true`) {
				t.Fatalf("the server did not see the credential: %q", out)
			}
			if auths := mcpSrv.Authorizations(); len(auths) == 0 || auths[0] != "Bearer "+mcpToken {
				t.Fatalf("Authorization headers seen: %d", len(auths))
			}
			// The offered tool carries the server's schema unchanged.
			var offered bool
			for _, d := range ms.Requests()[0].ToolDefs {
				if d.Name == "mcp_docs_echo" && strings.Contains(string(d.InputSchema), `"additionalProperties":false`) {
					offered = true
				}
			}
			if !offered {
				t.Fatalf("mcp_docs_echo not offered with its schema: %+v", ms.Requests()[0].Tools)
			}
			// A second turn reuses the connection.
			ms.Push(call("toolu_3", "mcp_docs_echo", map[string]any{"text": "again"}), modelserver.Step{Text: "done again"})
			srv.send(id, "once more")
			_, evs = srv.waitIdle(id)
			if out, _ := result(t, evs, "toolu_3"); !strings.Contains(out, "again") {
				t.Fatalf("second turn: %q", out)
			}
			if n := mcpSrv.Initializations(); n != 1 {
				t.Fatalf("%d initializations for one session; want the connection reused", n)
			}
			noSecret(t, ms, srv, id)
		})
	}
}

// TestMCPServerOverStdio: a stdio MCP server (a Go program built by the
// test) gets the credential in its environment.
func TestMCPServerOverStdio(t *testing.T) {
	bin := mcpservers.BuildStdio(t)
	record := filepath.Join(t.TempDir(), "record")
	ms, srv := toolsEnv(t, bin)
	agent := srv.agent(map[string]any{"name": "local-agent", "mcp_servers": []map[string]any{{
		"name": "local", "transport": "stdio", "command": bin,
		"args": []string{"-record", record, "-token-env", "MCP_TOKEN", "-want-sha256", mcpservers.TokenHash(mcpToken)},
		"auth": map[string]any{"vault_credential": srv.credential(), "env": "MCP_TOKEN"},
	}}})
	ms.Push(call("toolu_a", "mcp_local_authorized", map[string]any{}), call("toolu_e", "mcp_local_echo", map[string]any{"text": "over stdio"}), modelserver.Step{Text: "done"})
	id := srv.startSession(agent, "use the local server")
	_, evs := srv.waitIdle(id)
	if out, _ := result(t, evs, "toolu_a"); !strings.Contains(out, `"authorized":true`) {
		t.Fatalf("stdio server not authorized: %q", out)
	}
	if out, _ := result(t, evs, "toolu_e"); !strings.Contains(out, "over stdio") {
		t.Fatalf("echo: %q", out)
	}
	if rec := mcpservers.ReadStdioRecord(t, record); rec.Inits != 1 {
		t.Fatalf("stdio server started %d times", rec.Inits)
	}
	noSecret(t, ms, srv, id)

	// Started again without it on the list, the gateway warns about the
	// stored agent once and refuses the command on an update.
	srv.kill()
	srv.env["SWITCHBOARD_MCP_STDIO_ALLOW"] = ""
	srv = srv.restart()
	if got := strings.Count(srv.out.String(), "stdio MCP server that will not be started"); got != 1 {
		t.Errorf("%d start-up warnings, want 1:\n%s", got, srv.out.String())
	}
	code, raw := srv.do("POST", "/v1/agents/"+agent, map[string]any{"mcp_servers": []map[string]any{{"name": "local", "transport": "stdio", "command": bin}}})
	if code != 400 || !strings.Contains(string(raw), "SWITCHBOARD_MCP_STDIO_ALLOW") {
		t.Errorf("update naming a command off the list: %d %s", code, raw)
	}
}

// TestMCPServerDownMidSession: calls to a server that went away are tool
// errors, the session stays healthy, and the next call after the server
// is back succeeds.
func TestMCPServerDownMidSession(t *testing.T) {
	mcpSrv := mcpservers.NewMCPGoHTTP()
	defer mcpSrv.Close()
	ms, srv := toolsEnv(t)
	agent := srv.agent(map[string]any{"name": "flaky", "mcp_servers": []map[string]any{{"name": "docs", "url": mcpSrv.URL}}})
	ms.Push(call("toolu_1", "mcp_docs_echo", map[string]any{"text": "up"}), modelserver.Step{Text: "ok"})
	id := srv.startSession(agent, "first")
	srv.waitIdle(id)

	mcpSrv.Stop()
	ms.Push(call("toolu_2", "mcp_docs_echo", map[string]any{"text": "down"}), modelserver.Step{Text: "the docs server is down"})
	srv.send(id, "second")
	st, evs := srv.waitIdle(id)
	if out, isErr := result(t, evs, "toolu_2"); !isErr || !strings.Contains(out, "unavailable") {
		t.Fatalf("while down: %q error=%v", out, isErr)
	}
	if st.StopReason == nil || *st.StopReason != "completed" {
		t.Fatalf("session after the failed call: %+v", st)
	}

	mcpSrv.Start()
	ms.Push(call("toolu_3", "mcp_docs_echo", map[string]any{"text": "back"}), modelserver.Step{Text: "back"})
	srv.send(id, "third")
	_, evs = srv.waitIdle(id)
	if out, isErr := result(t, evs, "toolu_3"); isErr || !strings.Contains(out, "back") {
		t.Fatalf("after the server came back: %q error=%v", out, isErr)
	}
}

// TestCustomToolsAndConfirmations drives the requires_action flows over
// the API: a custom tool answered by the client, an ask-first MCP tool
// allowed, then denied.
func TestCustomToolsAndConfirmations(t *testing.T) {
	mcpSrv := mcpservers.NewMCPGoHTTP()
	defer mcpSrv.Close()
	ms, srv := toolsEnv(t)
	agent := srv.agent(map[string]any{
		"name":        "careful",
		"tools":       []map[string]any{{"type": "custom", "name": "lookup_order", "input_schema": map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "integer"}}}}},
		"mcp_servers": []map[string]any{{"name": "docs", "url": mcpSrv.URL, "tool_policies": map[string]string{"echo": "always_ask"}}},
	})
	waitAction := func(id, toolUseID string) {
		t.Helper()
		srv.waitFor(id, "requires_action", func(st sessionState, _ []event) bool {
			return st.Status == "awaiting_input" && st.StopReason != nil && *st.StopReason == "requires_action"
		})
		code, raw := srv.do("GET", "/v1/sessions/"+id, nil)
		if code != 200 || !strings.Contains(string(raw), `"pending_action":{"tool_use_ids":["`+toolUseID+`"]}`) {
			t.Fatalf("pending action: %s", raw)
		}
	}

	// Custom tool.
	ms.Push(call("toolu_c", "lookup_order", map[string]any{"id": 7}), modelserver.Step{Text: "order 7 shipped"})
	id := srv.startSession(agent, "where is order 7?")
	waitAction(id, "toolu_c")
	_, evs := srv.waitFor(id, "custom tool use", func(_ sessionState, evs []event) bool { return count(evs, "agent.custom_tool_use") == 1 })
	_ = evs
	srv.post(id, map[string]any{"type": "user.custom_tool_result", "tool_use_id": "toolu_c", "output": "shipped on Monday"})
	srv.waitIdle(id)
	reqs := ms.Requests()
	last := reqs[len(reqs)-1].Messages
	if b := last[len(last)-1].Content[0]; b.ToolUseID != "toolu_c" || b.Output != "shipped on Monday" {
		t.Fatalf("the model did not get the custom result: %+v", last[len(last)-1])
	}

	// Ask-first, allowed.
	ms.Push(call("toolu_allow", "mcp_docs_echo", map[string]any{"text": "allowed"}), modelserver.Step{Text: "echoed"})
	srv.send(id, "echo something")
	waitAction(id, "toolu_allow")
	srv.post(id, map[string]any{"type": "user.tool_confirmation", "tool_use_id": "toolu_allow", "result": "allow"})
	_, evs = srv.waitIdle(id)
	if out, isErr := result(t, evs, "toolu_allow"); isErr || !strings.Contains(out, "allowed") {
		t.Fatalf("allowed call: %q error=%v", out, isErr)
	}

	// Ask-first, denied.
	ms.Push(call("toolu_deny", "mcp_docs_echo", map[string]any{"text": "denied"}), modelserver.Step{Text: "understood"})
	srv.send(id, "echo again")
	waitAction(id, "toolu_deny")
	srv.post(id, map[string]any{"type": "user.tool_confirmation", "tool_use_id": "toolu_deny", "result": "deny", "message": "not now"})
	_, evs = srv.waitIdle(id)
	if out, isErr := result(t, evs, "toolu_deny"); !isErr || !strings.Contains(out, "not now") || strings.Contains(out, "denied\"") {
		t.Fatalf("denied call: %q error=%v", out, isErr)
	}
}

// TestToolNamesCheckedAtAgentCreate: collisions and invalid names are
// refused when the agent is created or updated, naming them.
func TestToolNamesCheckedAtAgentCreate(t *testing.T) {
	_, srv := toolsEnv(t)
	for _, tt := range []struct {
		body map[string]any
		want string
	}{
		{map[string]any{"name": "a1", "tools": []map[string]any{{"type": "custom", "name": "bash"}}}, `"bash" collides with a built-in tool`},
		{map[string]any{"name": "a2", "tools": []map[string]any{{"type": "custom", "name": "x"}, {"type": "custom", "name": "x"}}}, `"x" collides with tools[0]`},
		{map[string]any{"name": "a3", "tools": []map[string]any{{"type": "custom", "name": "bad name!"}}}, `"bad name!"`},
		{map[string]any{"name": "a4", "mcp_servers": []map[string]any{{"name": "my_docs", "url": "http://127.0.0.1:1/"}}}, `"my_docs"`},
	} {
		tt.body["model"] = "anthropic/claude-test"
		code, raw := srv.do("POST", "/v1/agents", tt.body)
		if code != 400 || !strings.Contains(errMessage(t, raw), tt.want) {
			t.Fatalf("%v: %d %s (want 400 naming %s)", tt.body, code, raw, tt.want)
		}
	}
	ok := srv.agent(map[string]any{"name": "fine"})
	code, raw := srv.do("POST", "/v1/agents/"+ok, map[string]any{"tools": []map[string]any{{"type": "custom", "name": "ask"}}})
	if code != 400 || !strings.Contains(errMessage(t, raw), `"ask" collides`) {
		t.Fatalf("update: %d %s", code, raw)
	}
}

// errMessage is the message of an API error body.
func errMessage(t *testing.T, raw []byte) string {
	t.Helper()
	var e struct {
		Error struct{ Message string } `json:"error"`
	}
	mustJSON(t, raw, &e)
	return e.Error.Message
}
