package mcpbridge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboardhq/switchboard/core"
)

// emptySchema is offered for a tool that declares no input schema.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// mcpTool is one server tool as the model sees it.
type mcpTool struct {
	c      *conn
	def    core.ToolDef
	remote string // the server's own name for it
}

var _ core.Tool = (*mcpTool)(nil)

func newTool(c *conn, name string, rt remoteTool) *mcpTool {
	schema := rt.InputSchema
	if len(bytes.TrimSpace(schema)) == 0 || bytes.Equal(bytes.TrimSpace(schema), []byte("null")) {
		schema = emptySchema
	}
	desc := rt.Description
	if desc == "" {
		desc = rt.Title
	}
	if desc == "" {
		desc = rt.Annotations.Title
	}
	return &mcpTool{c: c, remote: rt.Name, def: core.ToolDef{Name: name, Description: c.sec.redact(desc), InputSchema: schema}}
}

func (t *mcpTool) Def() core.ToolDef { return t.def }

// Call never returns an error: whatever goes wrong is a result the model
// can read and act on, and the session carries on.
func (t *mcpTool) Call(ctx context.Context, call core.ToolCall) (core.ToolResult, error) {
	args := json.RawMessage(bytes.TrimSpace(call.Input))
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	if args[0] != '{' || !json.Valid(args) {
		return core.ToolResult{Output: "the input must be a JSON object", IsError: true}, nil
	}
	return t.c.call(ctx, t.remote, args), nil
}

// call runs tools/call, reconnecting once when the request provably never
// reached the server (see unsent), and dropping a link that failed so the
// next call opens a new one: a server that comes back is used again.
func (c *conn) call(ctx context.Context, tool string, args json.RawMessage) core.ToolResult {
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	var err error
	for attempt := 0; attempt < 2; attempt++ {
		var l *link
		l, err = c.current(ctx)
		var res *mcp.CallToolResult
		if err == nil {
			res, err = l.callTool(ctx, req)
		}
		if err == nil {
			return core.ToolResult{Output: c.sec.redact(resultText(res)), IsError: res.IsError}
		}
		if ctx.Err() != nil {
			return core.ToolResult{Output: fmt.Sprintf("call to %s stopped: %v", c.srv.ServerName(), context.Cause(ctx)), IsError: true}
		}
		if l == nil {
			break // could not connect
		}
		if !isTransport(err) {
			// The server answered with a protocol error (unknown tool,
			// invalid arguments): the connection is fine.
			return core.ToolResult{Output: c.sec.redact(fmt.Sprintf("MCP server %s refused %s: %v", c.srv.ServerName(), tool, err)), IsError: true}
		}
		// An SSE server forgets the session with its stream, so nothing
		// sent on a link whose stream is lost was acted on.
		retry := unsent(err) || l.broken.Load()
		c.drop(l)
		if !retry {
			break
		}
	}
	c.log.Warn("mcp tool call failed", "tool", tool, "err", c.sec.redact(err.Error()))
	return core.ToolResult{Output: c.sec.redact(fmt.Sprintf("MCP server %s is unavailable: %v", c.srv.ServerName(), err)), IsError: true}
}
