package acpclient

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mcpclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// TestRelay: the stdio relay, run with Node as an agent runs a stdio MCP
// server, carries MCP to the gateway's endpoint through the proxy the
// environment names: initialize, the tool list, a call and its error.
func TestRelay(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the relay runs on Node, which this machine lacks (%v): under CI=true the test fails", err)
		}
		t.Skipf("the relay runs on Node, which this machine lacks (%v): skipped (under CI=true it fails)", err)
	}
	s := server.NewMCPServer("switchboard", "1", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("echo", mcp.WithString("text", mcp.Required())), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		text := req.GetString("text", "")
		if text == "fail" {
			return mcp.NewToolResultError("failed as asked"), nil
		}
		return mcp.NewToolResultText("echo: " + text), nil
	})
	endpoint := server.NewStreamableHTTPServer(s, server.WithStateLess(true), server.WithDisableLocalhostProtection(true))
	// The proxy's stand-in takes the relay's absolute URL to the host it
	// answers itself, as the egress proxy does.
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.String() != mcpURL {
			http.Error(w, "not through the proxy: "+r.URL.String(), http.StatusForbidden)
			return
		}
		endpoint.ServeHTTP(w, r)
	}))
	defer proxy.Close()
	script := filepath.Join(t.TempDir(), "mcp-relay.js")
	if err := os.WriteFile(script, []byte(relayScript), 0o644); err != nil {
		t.Fatal(err)
	}
	cl, err := mcpclient.NewStdioMCPClient("node", append(os.Environ(), "HTTP_PROXY="+proxy.URL), script, mcpURL)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "test", Version: "1"}
	if _, err := cl.Initialize(ctx, init); err != nil {
		t.Fatalf("initialize through the relay: %v", err)
	}
	tools, err := cl.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil || len(tools.Tools) != 1 || tools.Tools[0].Name != "echo" {
		t.Fatalf("tools %+v (%v)", tools, err)
	}
	for text, want := range map[string]string{"hello": "echo: hello", "fail": "failed as asked"} {
		var req mcp.CallToolRequest
		req.Params.Name, req.Params.Arguments = "echo", map[string]any{"text": text}
		res, err := cl.CallTool(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		got := res.Content[0].(mcp.TextContent).Text
		if got != want || res.IsError != (text == "fail") {
			t.Fatalf("call %q: %q (error %v)", text, got, res.IsError)
		}
	}
	if strings.Contains(relayScript, "Authorization") {
		t.Fatal("the relay carries a credential")
	}
}
