package mcpbridge_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/mcpbridge"
	"github.com/switchboardhq/switchboard/fixtures/mcpservers"
)

// target is one MCP server implementation the conformance suite runs
// against, named "docs" on the agent.
type target struct {
	server mcpbridge.Server
	inits  func() int
	ends   func() int
	// stop and start take the server down and bring it back.
	stop, start func()
	// addTool adds a tool out of band; nil where a test cannot reach into
	// the server.
	addTool func(name string)
	// streams counts the open GET streams; nil for stdio.
	streams func() int
	// auth lists the Authorization headers the server saw; nil for stdio.
	auth func() []string
	// http servers can refuse a credential with 401.
	http *mcpservers.HTTPServer
	// command is the stdio server's executable, which the pool must allow.
	command string
}

const token = "s3cr3t-token-never-shown"

// policies are set on every external target, to check they are applied.
var policies = map[string]string{mcpservers.Fail: "always_ask", mcpservers.Picture: "deny"}

type maker struct {
	name string
	make func(t *testing.T) *target
}

func makers(stdioBin string) []maker {
	return []maker{
		{"mcp-go streamable http", func(t *testing.T) *target {
			return httpTarget(t, mcpservers.NewMCPGoHTTP(), core.TransportStreamableHTTP)
		}},
		{"go-sdk streamable http", func(t *testing.T) *target {
			return httpTarget(t, mcpservers.NewGoSDKHTTP(), core.TransportStreamableHTTP)
		}},
		{"mcp-go sse", func(t *testing.T) *target { return httpTarget(t, mcpservers.NewMCPGoSSE(), core.TransportSSE) }},
		{"stdio", func(t *testing.T) *target { return stdioTarget(t, stdioBin) }},
	}
}

func httpTarget(t *testing.T, srv *mcpservers.HTTPServer, transport string) *target {
	t.Cleanup(srv.Close)
	srv.Expect(token, false)
	spec := core.MCPServerSpec{
		Name:         "docs",
		Transport:    transport,
		URL:          srv.URL,
		Auth:         &core.MCPAuth{VaultCredential: credID},
		ToolPolicies: policies,
	}
	return &target{
		server:  mcpbridge.External(spec),
		inits:   srv.Initializations,
		ends:    srv.SessionsEnded,
		stop:    srv.Stop,
		start:   srv.Start,
		addTool: srv.AddTool,
		auth:    srv.Authorizations,
		streams: srv.OpenStreams,
		http:    srv,
	}
}

// stdioTarget runs a copy of the binary per test, so that stop can take
// it away (the next start fails) and start put it back.
func stdioTarget(t *testing.T, bin string) *target {
	dir := t.TempDir()
	exe := filepath.Join(dir, "stdioserver")
	if err := os.Link(bin, exe); err != nil {
		b, err := os.ReadFile(bin)
		if err == nil {
			err = os.WriteFile(exe, b, 0o755)
		}
		if err != nil {
			t.Fatalf("copy stdio server: %v", err)
		}
	}
	record := filepath.Join(dir, "record")
	spec := core.MCPServerSpec{
		Name:         "docs",
		Transport:    core.TransportStdio,
		Command:      exe,
		Args:         []string{"-record", record, "-token-env", "DOCS_TOKEN", "-want-sha256", mcpservers.TokenHash(token), "-leak"},
		Env:          map[string]string{"DOCS_MODE": "test"},
		Auth:         &core.MCPAuth{VaultCredential: credID, Env: "DOCS_TOKEN"},
		ToolPolicies: policies,
	}
	rec := func() mcpservers.StdioRecord { return mcpservers.ReadStdioRecord(t, record) }
	gone := exe + ".gone"
	return &target{
		server:  mcpbridge.External(spec),
		command: exe,
		inits:   func() int { return rec().Inits },
		ends:    func() int { return rec().Ends },
		stop: func() {
			if err := os.Rename(exe, gone); err != nil {
				t.Fatalf("take stdio server away: %v", err)
			}
			for _, pid := range rec().Running {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		},
		start: func() {
			if err := os.Rename(gone, exe); err != nil {
				t.Fatalf("put stdio server back: %v", err)
			}
		},
	}
}
