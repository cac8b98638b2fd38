package acpclient_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/toolset"
	"github.com/switchboardhq/switchboard/fixtures/acpagent"
	"github.com/switchboardhq/switchboard/fixtures/panictest"
)

// panicTool is a platform tool that panics when called.
type panicTool struct{}

func (panicTool) Def() core.ToolDef {
	return core.ToolDef{Name: "mcp_slack_boom", Description: "Panics.", InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func (panicTool) Call(context.Context, core.ToolCall) (core.ToolResult, error) { panic("tool bug") }

// TestPanicEndsTheACPTurn: a panic in the gateway's side of an ACP turn
// (a request of the agent's to its client, a platform tool it calls over
// MCP) is logged once with its stack and ends the turn with a retryable
// internal error; the agent's process goes, and the session's next
// message runs on a new one.
func TestPanicEndsTheACPTurn(t *testing.T) {
	for _, tt := range []struct {
		name  string
		step  acpagent.Step
		setup func(e *env)
	}{
		{"a request of the agent's", acpagent.Step{Read: "notes.txt"}, func(e *env) { e.sb.execPanics = true }},
		{"a platform tool over MCP", acpagent.Step{MCP: &acpagent.MCPCall{Tool: "slack_boom"}}, func(e *env) {
			reg, err := toolset.New(panicTool{})
			if err != nil {
				t.Fatal(err)
			}
			e.serveMCP(reg)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, acpagent.Script{Turns: []acpagent.Turn{
				{Match: "first", Steps: []acpagent.Step{tt.step, {Say: "went on"}}},
				{Match: "again", Steps: []acpagent.Step{{Say: "fine now"}}},
			}})
			logged := panictest.New()
			e.h.Logger = logged.Logger()
			tt.setup(e)
			e.say("first")
			if out := e.run(context.Background()); out.Reason != core.ReasonError {
				t.Fatalf("outcome %+v, log %v", out, typesOf(e.events()))
			}
			if b := body[core.ErrorBody](t, last(e.events(), core.TypeError)); b.Message != "internal error" || !b.Retryable {
				t.Fatalf("session.error %+v", b)
			}
			if s := e.sessionNow(); s.Status != core.StatusFailed || s.TurnID != "" {
				t.Fatalf("session %+v", s)
			}
			logged.WantOne(t, "acpclient_test", "session_id="+e.session)
			e.say("again")
			if out := e.run(context.Background()); out.Reason != core.ReasonCompleted {
				t.Fatalf("the next message: %+v (log %v)", out, typesOf(e.events()))
			}
			if e.sb.starts != 2 {
				t.Fatalf("%d agent processes started, want a new one after the panic", e.sb.starts)
			}
		})
	}
}

// TestResetEndsTheAgentProcess: the runtime's Reset, after a panic ended
// the session's cycle elsewhere, ends the session's agent process; the
// next turn starts a new one.
func TestResetEndsTheAgentProcess(t *testing.T) {
	e := newEnv(t, acpagent.Script{Turns: []acpagent.Turn{{Steps: []acpagent.Step{{Say: "hello"}}}, {Steps: []acpagent.Step{{Say: "again"}}}}})
	e.say("first")
	if out := e.run(context.Background()); out.Reason != core.ReasonCompleted {
		t.Fatalf("outcome %+v", out)
	}
	e.h.Reset(context.Background(), e.session)
	e.say("second")
	if out := e.run(context.Background()); out.Reason != core.ReasonCompleted || e.sb.starts != 2 {
		t.Fatalf("outcome %+v after %d starts, want a new process", out, e.sb.starts)
	}
}
