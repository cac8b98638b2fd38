package mcpbridge_test

import (
	"fmt"
	"testing"

	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/mcpbridge"
	"github.com/switchboardhq/switchboard/fixtures/mcpservers"
)

// BenchmarkInProcessSession is what a new session pays for its platform's
// in-process server, as providers give one to each session: its tools
// listed at the first cycle, one call, listed again at the next cycle,
// and the session closed.
func BenchmarkInProcessSession(b *testing.B) {
	pool := mcpbridge.New(mcpbridge.Config{})
	b.Cleanup(pool.Shutdown)
	servers := make([]*server.MCPServer, b.N)
	for i := range servers {
		servers[i] = mcpservers.NewMCPGo(nil, nil)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		id := fmt.Sprintf("ses_%d", i)
		in := []mcpbridge.Server{mcpbridge.InProcess{Name: "slack", Server: servers[i]}}
		entries, err := pool.Tools(b.Context(), id, in)
		if err != nil {
			b.Fatal(err)
		}
		res, err := byName(entries)["mcp_slack_echo"].Tool.Call(b.Context(), core.ToolCall{SessionID: id, Name: "mcp_slack_echo", Input: []byte(`{"text":"hi"}`)})
		if err != nil || res.Output != "hi" {
			b.Fatalf("echo = %+v, %v", res, err)
		}
		if _, err := pool.Tools(b.Context(), id, in); err != nil {
			b.Fatal(err)
		}
		pool.Close(id)
	}
}

// BenchmarkInProcessCycle is a cycle of a session whose in-process server
// is already listed: what every cycle after the first pays.
func BenchmarkInProcessCycle(b *testing.B) {
	pool := mcpbridge.New(mcpbridge.Config{})
	b.Cleanup(pool.Shutdown)
	in := []mcpbridge.Server{mcpbridge.InProcess{Name: "slack", Server: mcpservers.NewMCPGo(nil, nil)}}
	if _, err := pool.Tools(b.Context(), "ses_1", in); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := pool.Tools(b.Context(), "ses_1", in); err != nil {
			b.Fatal(err)
		}
	}
}
