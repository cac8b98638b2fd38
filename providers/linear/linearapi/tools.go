package linearapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/Khan/genqlient/graphql"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// toolDef is one MCP tool generated from operations.graphql (see
// tools_gen.go).
type toolDef struct {
	Name        string
	Operation   string
	Description string
	Query       string
	InputSchema string
}

// ToolServer is an MCP server named name whose tools are the operations
// marked "# @tool" in operations.graphql, run through c (which acts as
// the installation's app user). A tool's arguments are the operation's
// variables; its result is the operation's data as JSON. Linear's refusals
// come back as tool errors the model can read.
func ToolServer(name string, c graphql.Client) *server.MCPServer {
	return newToolServer(name, c, generatedTools())
}

func newToolServer(name string, c graphql.Client, defs []toolDef) *server.MCPServer {
	s := server.NewMCPServer(name, "1", server.WithToolCapabilities(false))
	for _, d := range defs {
		s.AddTool(mcp.NewToolWithRawSchema(d.Name, d.Description, json.RawMessage(d.InputSchema)), runner(c, d))
	}
	return s
}

// ToolNames lists the generated tools' names.
func ToolNames() []string {
	var names []string
	for _, d := range generatedTools() {
		names = append(names, d.Name)
	}
	return names
}

func runner(c graphql.Client, d toolDef) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		vars := map[string]any{}
		for k, v := range req.GetArguments() {
			if v != nil { // an explicit null would clear the field
				vars[k] = v
			}
		}
		var data json.RawMessage
		resp := &graphql.Response{Data: &data}
		err := c.MakeRequest(ctx, &graphql.Request{OpName: d.Operation, Query: d.Query, Variables: vars}, resp)
		if err != nil {
			return mcp.NewToolResultError(toolMessage(err)), nil
		}
		return mcp.NewToolResultText(string(data)), nil
	}
}

// toolMessage is what the model reads of a failure.
func toolMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		if wait, ok := RateLimited(err); ok {
			return fmt.Sprintf("Linear is rate limiting this workspace; try again in %s or later.", wait.Round(1e9))
		}
		return "Linear answered: " + e.Message()
	}
	return err.Error()
}
