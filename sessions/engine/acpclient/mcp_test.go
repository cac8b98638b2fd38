package acpclient_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/toolset"
	"github.com/switchboardhq/switchboard/fixtures/acpagent"
)

// platformTool is a platform tool that records its calls.
type platformTool struct {
	name  string
	mu    sync.Mutex
	calls []core.ToolCall
}

func (p *platformTool) Def() core.ToolDef {
	return core.ToolDef{Name: p.name, Description: "A platform tool.", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)}
}

func (p *platformTool) Call(_ context.Context, c core.ToolCall) (core.ToolResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, c)
	return core.ToolResult{Output: "done: " + string(c.Input)}, nil
}

func (p *platformTool) called() []core.ToolCall {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]core.ToolCall(nil), p.calls...)
}

// TestPlatformToolsOverMCP: the session's mcp_* tools reach its ACP agent
// as the gateway's MCP server (through the proxy, which names the
// session), run in the turn; one whose policy asks waits for a person.
func TestPlatformToolsOverMCP(t *testing.T) {
	post := &platformTool{name: "mcp_slack_post_message"}
	merge := &platformTool{name: "mcp_github_merge"}
	e := newEnv(t, acpagent.Script{Turns: []acpagent.Turn{{Steps: []acpagent.Step{
		{MCP: &acpagent.MCPCall{Tool: "slack_post_message", Args: map[string]any{"text": "hello thread"}}},
		{MCP: &acpagent.MCPCall{Tool: "github_merge", Args: map[string]any{"text": "main"}}},
		{MCP: &acpagent.MCPCall{Tool: "bash", Args: map[string]any{"text": "ls"}}},
	}}}})
	reg, err := toolset.New(&platformTool{name: "bash"}, post)
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Add(merge, core.PolicyAsk); err != nil {
		t.Fatal(err)
	}
	e.serveMCP(reg)

	e.say("post, then merge")
	wait := e.start(context.Background())
	s := e.waitFor("the merge waiting for a person", func(s *core.Session) bool { return s.PendingAction != nil && len(s.PendingAction.ToolUseIDs) == 1 })
	if calls := post.called(); len(calls) != 1 || calls[0].SessionID != e.session || calls[0].TurnID == "" || !strings.Contains(string(calls[0].Input), "hello thread") {
		t.Fatalf("post calls %+v", calls)
	}
	if len(merge.called()) != 0 {
		t.Fatal("an ask-first tool ran before a person allowed it")
	}
	e.send(core.TypeUserToolConfirmation, core.ToolConfirmationBody{ToolUseID: s.PendingAction.ToolUseIDs[0], Result: "allow"})
	if out := wait(); out.Reason != core.ReasonCompleted {
		t.Fatalf("outcome %+v", out)
	}
	if len(merge.called()) != 1 {
		t.Fatal("the allowed call did not run")
	}
	var got []string
	for _, m := range e.asked("mcp") {
		got = append(got, m["tool"].(string)+" "+map[bool]string{true: "error", false: "ok"}[m["error"].(bool)])
	}
	if strings.Join(got, ", ") != "slack_post_message ok, github_merge ok, bash error" {
		t.Fatalf("the agent's MCP calls: %v", got)
	}
	if n := e.asked("session/new")[0]["mcp_servers"]; n != float64(1) {
		t.Fatalf("session/new had %v MCP servers", n)
	}
}
