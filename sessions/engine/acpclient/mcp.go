package acpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	acp "github.com/coder/acp-go-sdk"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboardhq/switchboard/core"
)

// MCPHost is the host the egress proxy answers itself with a session's
// platform tools (Harness.MCP). The agent reaches it through the proxy,
// which knows the session by the sandbox's address: nothing in the
// sandbox authenticates it, so nothing there can leak.
const MCPHost = "mcp.switchboard.internal"

// mcpURL is where an ACP agent is told its platform tools are.
const mcpURL = "http://" + MCPHost + "/mcp"

// mcpServerName names the gateway's MCP server to the agent; its tools
// are the session's mcp_* tools without their prefix.
const mcpServerName = "switchboard"

// MCP serves each session's platform tools (the mcp_* tools the built-in
// loop is offered: the platforms' and the agent's own MCP servers') to
// the session's ACP agent, over MCP's streamable HTTP. A call runs with
// the running turn's grants, and one whose policy asks waits for a
// person as a permission request does.
func (h *Harness) MCP() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := core.SandboxSessionFrom(r.Context())
		h.mu.Lock()
		ap := h.agents[id]
		h.mu.Unlock()
		if ap == nil || ap.mcp == nil {
			http.Error(w, "switchboard: no ACP agent of this sandbox has platform tools", http.StatusNotFound)
			return
		}
		ap.mcp.ServeHTTP(w, r)
	})
}

// mcpServers is what session/new and session/load give the agent: the
// gateway's MCP server when the session has platform tools, over HTTP
// when the agent takes it, else over stdio through the relay put in its
// sandbox.
func (h *Harness) mcpServers(ctx context.Context, ap *agentProc, sessionID string) []acp.McpServer {
	if ap.mcp == nil {
		return []acp.McpServer{}
	}
	if ap.caps.McpCapabilities.Http {
		return []acp.McpServer{{Http: &acp.McpServerHttpInline{Name: mcpServerName, Url: mcpURL, Headers: []acp.HttpHeader{}}}}
	}
	if err := h.putRelay(ctx, sessionID); err != nil {
		h.logger().Warn("the MCP relay could not be put in the sandbox: the ACP agent is offered no platform tools", "session_id", sessionID, "command", strings.Join(ap.cmd, " "), "err", err)
		return []acp.McpServer{}
	}
	return []acp.McpServer{stdioServer()}
}

// newMCP is the MCP server of a session whose cycle offers tools: its
// mcp_* tools, run through the running turn. Nil when it has none.
func (h *Harness) newMCP(sessionID string, defs []core.ToolDef) http.Handler {
	s := server.NewMCPServer(mcpServerName, "1", server.WithToolCapabilities(false), server.WithRecovery())
	n := 0
	for _, d := range defs {
		name, ok := strings.CutPrefix(d.Name, "mcp_")
		if !ok {
			continue
		}
		schema := d.InputSchema
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		full := d.Name
		s.AddTool(mcp.NewToolWithRawSchema(name, d.Description, schema), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return h.callTool(ctx, sessionID, full, req.GetRawArguments())
		})
		n++
	}
	if n == 0 {
		return nil
	}
	return server.NewStreamableHTTPServer(s, server.WithStateLess(true), server.WithDisableLocalhostProtection(true))
}

// callTool runs a session's tool for its agent, in the running turn.
func (h *Harness) callTool(ctx context.Context, sessionID, name string, args any) (res *mcp.CallToolResult, err error) {
	defer h.recoveredTool(sessionID, &res, &err)
	defer core.Recover(h.logger(), &err, "session_id", sessionID, "tool", name)
	t := h.running(sessionID)
	if t == nil {
		return mcp.NewToolResultError("no turn of this session is running: tools are called during a prompt"), nil
	}
	tool, policy, ok := t.c.Tools.Get(name)
	if !ok || policy == core.PolicyDeny {
		return mcp.NewToolResultError(fmt.Sprintf("no tool %s in this session", name)), nil
	}
	input, err := json.Marshal(args)
	if err != nil || string(input) == "null" {
		input = json.RawMessage(`{}`)
	}
	if policy == core.PolicyAsk && !t.askPerson(ctx, name, input) {
		return mcp.NewToolResultError("a person denied this call (or the wait for an answer ended)"), nil
	}
	out, err := tool.Call(ctx, core.ToolCall{SessionID: sessionID, TurnID: t.id, ID: core.NewID("tu"), Name: name, Input: input})
	if err != nil {
		return mcp.NewToolResultError("error: " + err.Error()), nil
	}
	if out.IsError {
		return mcp.NewToolResultError(out.Output), nil
	}
	return mcp.NewToolResultText(out.Output), nil
}

// askPerson waits in the turn for a person to allow a call of a tool
// whose policy asks, as a permission request does; the call is logged
// for the person to see.
func (t *turn) askPerson(ctx context.Context, name string, input json.RawMessage) bool {
	id := core.NewID("tu")
	t.rec.mu.Lock()
	t.rec.flushAll()
	t.rec.log(core.NewEvent(core.TypeAgentToolUse, core.LevelProgress, core.ActorAgent, core.ToolUseBody{ToolUseID: id, Name: name, Input: input}))
	t.rec.mu.Unlock()
	options := []acp.PermissionOption{
		{Kind: acp.PermissionOptionKindAllowOnce, Name: "Allow", OptionId: "allow"},
		{Kind: acp.PermissionOptionKindRejectOnce, Name: "Deny", OptionId: "reject"},
	}
	o := t.wait(ctx, &parked{toolUseID: id, title: name, kind: "other", options: options, reply: make(chan acp.RequestPermissionOutcome, 1)})
	allowed := o.Selected != nil && o.Selected.OptionId == "allow"
	result := "denied by a person"
	if allowed {
		result = "allowed by a person"
	}
	t.rec.mu.Lock()
	t.rec.log(core.NewEvent(core.TypeAgentToolResult, core.LevelProgress, core.ActorSystem, core.ToolResultBody{ToolUseID: id, Output: result, IsError: !allowed}))
	t.rec.mu.Unlock()
	return allowed
}
