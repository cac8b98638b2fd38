package mcpbridge_test

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/mcpbridge"
	"github.com/switchboardhq/switchboard/fixtures/mcpservers"
)

func httpServers() []struct {
	name      string
	new       func() *mcpservers.HTTPServer
	transport string
} {
	return []struct {
		name      string
		new       func() *mcpservers.HTTPServer
		transport string
	}{
		{"mcp-go streamable http", mcpservers.NewMCPGoHTTP, core.TransportStreamableHTTP},
		{"go-sdk streamable http", mcpservers.NewGoSDKHTTP, core.TransportStreamableHTTP},
		{"mcp-go sse", mcpservers.NewMCPGoSSE, core.TransportSSE},
	}
}

func external(srv *mcpservers.HTTPServer, transport string) mcpbridge.Server {
	return mcpbridge.External(core.MCPServerSpec{Name: "docs", Transport: transport, URL: srv.URL, Auth: &core.MCPAuth{VaultCredential: credID}})
}

func TestRefreshesARefusedCredential(t *testing.T) {
	for _, s := range httpServers() {
		t.Run(s.name, func(t *testing.T) {
			srv := s.new()
			t.Cleanup(srv.Close)
			srv.Expect("new-token", true)
			creds := &fakeCreds{token: "old-token", next: "new-token"}
			logs := &logBuffer{}
			pool := newPool(t, creds, logs, time.Minute)
			entries, err := pool.Tools(t.Context(), "ses_1", []mcpbridge.Server{external(srv, s.transport)})
			if err != nil {
				t.Fatalf("Tools: %v", err)
			}
			if res := call(t, entries, "mcp_docs_authorized", `{}`); res.Output != `{"authorized":true}` {
				t.Errorf("authorized = %q", res.Output)
			}
			if n := creds.refreshCount(); n != 1 {
				t.Errorf("refreshes = %d, want 1", n)
			}
			if a := srv.Authorizations(); !slices.Contains(a, "Bearer old-token") || !slices.Contains(a, "Bearer new-token") {
				t.Errorf("server saw %q, want the old token refused and the new one", a)
			}
			if strings.Contains(logs.String(), "new-token") || strings.Contains(logs.String(), "old-token") {
				t.Errorf("the log holds a credential:\n%s", logs.String())
			}
		})
	}
}

func TestACredentialThatCannotBeRenewedSkipsTheServer(t *testing.T) {
	srv := mcpservers.NewMCPGoHTTP()
	t.Cleanup(srv.Close)
	srv.Expect("other-token", true)
	creds := &fakeCreds{token: "stale-token"}
	logs := &logBuffer{}
	pool := newPool(t, creds, logs, time.Minute)
	entries, err := pool.Tools(t.Context(), "ses_1", []mcpbridge.Server{external(srv, core.TransportStreamableHTTP)})
	if err != nil || len(entries) != 0 {
		t.Fatalf("Tools = %v, %v; want no tools and no error", names(entries), err)
	}
	if !strings.Contains(logs.String(), "mcp server unavailable") {
		t.Errorf("no warning logged:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), "stale-token") {
		t.Errorf("the log holds the credential:\n%s", logs.String())
	}
}

// clientSessions counts the client sessions opened on an in-process
// server and those still open: an in-process connection is one.
type clientSessions struct{ opened, open atomic.Int32 }

func countSessions(s *server.MCPServer) *clientSessions {
	c := &clientSessions{}
	s.GetHooks().AddOnRegisterSession(func(context.Context, server.ClientSession) {
		c.opened.Add(1)
		c.open.Add(1)
	})
	s.GetHooks().AddOnUnregisterSession(func(context.Context, server.ClientSession) { c.open.Add(-1) })
	return c
}

func TestInProcessServer(t *testing.T) {
	s := mcpservers.NewMCPGo(nil, nil)
	first := countSessions(s)
	pool := newPool(t, nil, &logBuffer{}, time.Minute)
	servers := []mcpbridge.Server{mcpbridge.InProcess{Name: "slack", Server: s}}
	tools := func() []mcpbridge.Entry {
		entries, err := pool.Tools(t.Context(), "ses_1", servers)
		if err != nil {
			t.Fatalf("Tools: %v", err)
		}
		return entries
	}
	entries := tools()
	if res := call(t, entries, "mcp_slack_echo", `{"text":"hi"}`); res.Output != "hi" {
		t.Errorf("echo = %q", res.Output)
	}
	if p := byName(entries)["mcp_slack_fail"].Policy; p != core.PolicyAllow {
		t.Errorf("in-process policy = %q, want always_allow", p)
	}
	mcpservers.AddMCPGoTool(s, "late")
	eventually(t, "mcp_slack_late to be offered", func() bool {
		entries = tools()
		_, ok := byName(entries)["mcp_slack_late"]
		return ok
	})
	if res := call(t, entries, "mcp_slack_late", `{}`); res.Output != "late called" {
		t.Errorf("late = %q", res.Output)
	}
	if n := first.opened.Load(); n != 1 {
		t.Errorf("connections = %d, want 1", n)
	}
	// A rebuilt server is a different server: the connection is reopened.
	rebuilt := mcpservers.NewMCPGo(nil, nil)
	second := countSessions(rebuilt)
	servers = []mcpbridge.Server{mcpbridge.InProcess{Name: "slack", Server: rebuilt}}
	if res := call(t, tools(), "mcp_slack_echo", `{"text":"again"}`); res.Output != "again" {
		t.Errorf("echo on the rebuilt server = %q", res.Output)
	}
	if n := second.opened.Load(); n != 1 {
		t.Errorf("connections to the rebuilt server = %d, want 1", n)
	}
	if n := first.open.Load(); n != 0 {
		t.Errorf("connections still open to the replaced server = %d, want 0", n)
	}
	pool.Close("ses_1")
	if n := second.open.Load(); n != 0 {
		t.Errorf("connections open after the session closed = %d, want 0", n)
	}
}

// An in-process server's tool handlers find a client session in their
// context, as they do behind a transport; a server without tools offers
// none and fails nothing.
func TestInProcessServerSessionAndNoTools(t *testing.T) {
	s := server.NewMCPServer("bare", "1.0.0", server.WithToolCapabilities(true))
	var seen atomic.Bool
	s.AddTool(mcp.NewTool("whoami"), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		seen.Store(server.ClientSessionFromContext(ctx) != nil)
		return mcp.NewToolResultText("ok"), nil
	})
	logs := &logBuffer{}
	pool := newPool(t, nil, logs, time.Minute)
	entries, err := pool.Tools(t.Context(), "ses_1", []mcpbridge.Server{
		mcpbridge.InProcess{Name: "bare", Server: s},
		mcpbridge.InProcess{Name: "none", Server: server.NewMCPServer("none", "1.0.0")},
	})
	if err != nil {
		t.Fatalf("Tools: %v", err)
	}
	if got := names(entries); !slices.Equal(got, []string{"mcp_bare_whoami"}) {
		t.Fatalf("tools = %v, want only mcp_bare_whoami", got)
	}
	if strings.Contains(logs.String(), "unavailable") {
		t.Errorf("a server without tools was taken for one that is down:\n%s", logs.String())
	}
	if res := call(t, entries, "mcp_bare_whoami", `{}`); res.Output != "ok" || res.IsError {
		t.Errorf("whoami = %+v", res)
	}
	if !seen.Load() {
		t.Error("the tool handler found no client session in its context")
	}
}

func TestServerSetChanges(t *testing.T) {
	a, b := mcpservers.NewMCPGoHTTP(), mcpservers.NewGoSDKHTTP()
	t.Cleanup(a.Close)
	t.Cleanup(b.Close)
	specA := core.MCPServerSpec{Name: "alpha", URL: a.URL}
	specB := core.MCPServerSpec{Name: "beta", URL: b.URL}
	logs := &logBuffer{}
	pool := newPool(t, nil, logs, time.Minute)
	tools := func(servers ...mcpbridge.Server) []mcpbridge.Entry {
		entries, err := pool.Tools(t.Context(), "ses_1", servers)
		if err != nil {
			t.Fatalf("Tools: %v", err)
		}
		return entries
	}

	tools(mcpbridge.External(specA), mcpbridge.External(specB))
	if a.Initializations() != 1 || b.Initializations() != 1 {
		t.Fatalf("initializations = %d, %d; want 1, 1", a.Initializations(), b.Initializations())
	}
	// beta removed from the agent: its connection ends.
	tools(mcpbridge.External(specA))
	eventually(t, "beta's session to end", func() bool { return b.SessionsEnded() == 1 })
	// alpha's spec changes (a new agent version): reconnected.
	specA.Policy = "always_ask"
	entries := tools(mcpbridge.External(specA))
	if p := byName(entries)["mcp_alpha_echo"].Policy; p != core.PolicyAsk {
		t.Errorf("policy = %q, want always_ask", p)
	}
	if a.Initializations() != 2 || a.SessionsEnded() != 1 {
		t.Errorf("alpha initializations, ends = %d, %d; want 2, 1", a.Initializations(), a.SessionsEnded())
	}
	// A second server by the same name is skipped, not an error.
	dup := core.MCPServerSpec{Name: "alpha", URL: b.URL}
	entries = tools(mcpbridge.External(specA), mcpbridge.External(dup))
	if n := len(entries); n != len(tools(mcpbridge.External(specA))) {
		t.Errorf("with a duplicate: %d tools, want alpha's only", n)
	}
	if !strings.Contains(logs.String(), "mcp server name used twice") {
		t.Errorf("no warning for the duplicate:\n%s", logs.String())
	}
}

func TestHibernationHoldsNoGoroutines(t *testing.T) {
	srv := mcpservers.NewMCPGoHTTP()
	t.Cleanup(srv.Close)
	pool := newPool(t, &fakeCreds{token: token}, &logBuffer{}, 50*time.Millisecond)
	spec := mcpbridge.External(core.MCPServerSpec{Name: "docs", URL: srv.URL, Auth: &core.MCPAuth{VaultCredential: credID}})
	before := runtime.NumGoroutine()
	entries, err := pool.Tools(t.Context(), "ses_1", []mcpbridge.Server{spec})
	if err != nil {
		t.Fatalf("Tools: %v", err)
	}
	call(t, entries, "mcp_docs_echo", `{"text":"x"}`)
	if runtime.NumGoroutine() <= before {
		t.Fatalf("an open connection holds no goroutine? before %d, now %d", before, runtime.NumGoroutine())
	}
	pool.Idle("ses_1")
	eventually(t, "the goroutines to go", func() bool { return runtime.NumGoroutine() <= before })
}

func TestNoServersHoldNothing(t *testing.T) {
	srv := mcpservers.NewMCPGoHTTP()
	t.Cleanup(srv.Close)
	pool := newPool(t, nil, &logBuffer{}, time.Minute)
	if _, err := pool.Tools(t.Context(), "ses_1", []mcpbridge.Server{mcpbridge.External(core.MCPServerSpec{Name: "docs", URL: srv.URL})}); err != nil {
		t.Fatal(err)
	}
	// The agent's new version names no server: the connection goes.
	entries, err := pool.Tools(t.Context(), "ses_1", nil)
	if err != nil || len(entries) != 0 {
		t.Fatalf("Tools(nil) = %v, %v", names(entries), err)
	}
	eventually(t, "the session to end", func() bool { return srv.SessionsEnded() == 1 })
}

func TestShutdown(t *testing.T) {
	pool := mcpbridge.New(mcpbridge.Config{})
	pool.Shutdown()
	if _, err := pool.Tools(t.Context(), "ses_1", nil); !errors.Is(err, mcpbridge.ErrShutdown) {
		t.Errorf("Tools after Shutdown: %v, want ErrShutdown", err)
	}
}

func TestCallStoppedWithTheTurn(t *testing.T) {
	s := mcpservers.NewMCPGo(nil, nil)
	pool := newPool(t, nil, &logBuffer{}, time.Minute)
	entries, err := pool.Tools(t.Context(), "ses_1", []mcpbridge.Server{mcpbridge.InProcess{Name: "slack", Server: s}})
	if err != nil {
		t.Fatalf("Tools: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	res, err := byName(entries)["mcp_slack_echo"].Tool.Call(ctx, core.ToolCall{Name: "mcp_slack_echo", Input: []byte(`{"text":"x"}`)})
	if err != nil || !res.IsError {
		t.Errorf("call with a cancelled context = %+v, %v; want an error result", res, err)
	}
	// The connection survives a cancelled call.
	if res := call(t, entries, "mcp_slack_echo", `{"text":"y"}`); res.Output != "y" {
		t.Errorf("echo after a cancelled call = %q", res.Output)
	}
}

func TestStdioEnvironment(t *testing.T) {
	t.Setenv("SWITCHBOARD_TEST_SECRET", "gateway-only")
	bin := mcpservers.BuildStdio(t)
	spec := core.MCPServerSpec{
		Name:      "local",
		Transport: core.TransportStdio,
		Command:   bin,
		Args:      []string{"-token-env", "LOCAL_TOKEN", "-want-sha256", mcpservers.TokenHash(token)},
		Env:       map[string]string{"LOCAL_MODE": "test", "LOCAL_TOKEN": "the spec cannot override it"},
		Auth:      &core.MCPAuth{VaultCredential: credID, Env: "LOCAL_TOKEN"},
	}
	pool := newPoolTimers(t, &fakeCreds{token: token}, &logBuffer{}, time.Minute, nil, bin)
	entries, err := pool.Tools(t.Context(), "ses_1", []mcpbridge.Server{mcpbridge.External(spec)})
	if err != nil {
		t.Fatalf("Tools: %v", err)
	}
	for _, c := range []struct{ name, want string }{
		{"PATH", "set"},
		{"LOCAL_MODE", "set"},
		{"LOCAL_TOKEN", "set"},
		{"SWITCHBOARD_TEST_SECRET", "unset"},
		{"HOME", "unset"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if res := call(t, entries, "mcp_local_has_env", `{"name":"`+c.name+`"}`); res.Output != c.want {
				t.Errorf("has_env %s = %q, want %q", c.name, res.Output, c.want)
			}
		})
	}
	if res := call(t, entries, "mcp_local_authorized", `{}`); res.Output != `{"authorized":true}` {
		t.Errorf("authorized = %q: the credential did not win over the spec's variable", res.Output)
	}
}
