package mcpbridge_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/mcpbridge"
	"github.com/switchboardhq/switchboard/fixtures/mcpservers"
)

// env is one conformance case's world: a fresh server, pool and logs.
type env struct {
	tgt  *target
	pool *mcpbridge.Pool
	// timers are the pool's idle timers, fired by the test.
	timers *idleTimers
	creds  *fakeCreds
	logs   *logBuffer
	// outputs collects every result the model would have seen.
	outputs []string
}

func (e *env) tools(t *testing.T) []mcpbridge.Entry {
	t.Helper()
	entries, err := e.pool.Tools(t.Context(), "ses_1", []mcpbridge.Server{e.tgt.server})
	if err != nil {
		t.Fatalf("Tools: %v", err)
	}
	for _, en := range entries {
		d := en.Tool.Def()
		e.outputs = append(e.outputs, d.Name, d.Description, string(d.InputSchema))
	}
	return entries
}

func (e *env) call(t *testing.T, entries []mcpbridge.Entry, name, input string) core.ToolResult {
	t.Helper()
	res := call(t, entries, name, input)
	e.outputs = append(e.outputs, res.Output)
	return res
}

// A conformance suite: every case runs against every server
// implementation, each on a fresh server.
var cases = []struct {
	name string
	run  func(t *testing.T, e *env)
}{
	{"lists tools with names, schemas and policies", func(t *testing.T, e *env) {
		entries := e.tools(t)
		got := byName(entries)
		for _, n := range []string{"mcp_docs_echo", "mcp_docs_add", "mcp_docs_fail", "mcp_docs_picture", "mcp_docs_authorized", "mcp_docs_add_tool", "mcp_docs_search_docs"} {
			if _, ok := got[n]; !ok {
				t.Errorf("tool %s not offered; have %v", n, names(entries))
			}
		}
		for _, n := range names(entries) {
			if err := core.ValidToolName(n); err != nil {
				t.Errorf("invalid name: %v", err)
			}
		}
		long := slices.IndexFunc(names(entries), func(n string) bool { return strings.HasPrefix(n, "mcp_docs_a_tool_whose") })
		if long < 0 || len(names(entries)[long]) != 64 {
			t.Errorf("long tool name not cut to 64: %v", names(entries))
		}
		if !jsonEqual(t, got["mcp_docs_echo"].Tool.Def().InputSchema, mcpservers.EchoSchema) {
			t.Errorf("echo schema = %s, want %s unchanged", got["mcp_docs_echo"].Tool.Def().InputSchema, mcpservers.EchoSchema)
		}
		if d := got["mcp_docs_echo"].Tool.Def().Description; d != "Echoes text." {
			t.Errorf("echo description = %q", d)
		}
		for name, want := range map[string]core.Policy{"mcp_docs_echo": core.PolicyAllow, "mcp_docs_fail": core.PolicyAsk, "mcp_docs_picture": core.PolicyDeny} {
			if p := got[name].Policy; p != want {
				t.Errorf("%s policy = %q, want %q", name, p, want)
			}
		}
	}},
	{"converts call results", func(t *testing.T, e *env) {
		entries := e.tools(t)
		for _, c := range []struct {
			tool, input, want string
			isError           bool
		}{
			{"mcp_docs_echo", `{"text":"hello"}`, "hello", false},
			{"mcp_docs_add", `{"a":2,"b":3}`, "5\n{\"sum\":5}", false},
			{"mcp_docs_fail", ``, mcpservers.FailText, true},
			{"mcp_docs_picture", `{}`, "[image/png, 1234 bytes]", false},
			{"mcp_docs_search_docs", `{}`, mcpservers.Dotted + " called", false},
			{"mcp_docs_echo", `["not","an","object"]`, "the input must be a JSON object", true},
		} {
			res := e.call(t, entries, c.tool, c.input)
			if res.Output != c.want || res.IsError != c.isError {
				t.Errorf("%s(%s) = %q (error %t), want %q (error %t)", c.tool, c.input, res.Output, res.IsError, c.want, c.isError)
			}
		}
	}},
	{"reuses one connection across calls and cycles", func(t *testing.T, e *env) {
		for range 3 {
			entries := e.tools(t)
			for range 3 {
				if res := e.call(t, entries, "mcp_docs_echo", `{"text":"x"}`); res.IsError {
					t.Fatalf("echo: %s", res.Output)
				}
			}
		}
		if n := e.tgt.inits(); n != 1 {
			t.Errorf("initializations = %d, want 1", n)
		}
	}},
	{"closes the connection after the idle timeout", func(t *testing.T, e *env) {
		e.tools(t)
		e.pool.Idle("ses_1")
		e.timers.last(t).fire()
		eventually(t, "the server to see the session end", func() bool { return e.tgt.ends() == 1 })
		entries := e.tools(t)
		if res := e.call(t, entries, "mcp_docs_echo", `{"text":"again"}`); res.Output != "again" {
			t.Errorf("echo after idle = %q", res.Output)
		}
		if n := e.tgt.inits(); n != 2 {
			t.Errorf("initializations = %d, want 2 (a new connection after idle)", n)
		}
	}},
	{"Tools before the timeout keeps the connection; Close ends it", func(t *testing.T, e *env) {
		e.tools(t)
		e.pool.Idle("ses_1")
		timer := e.timers.last(t)
		entries := e.tools(t) // taken back before the timeout
		if !timer.isStopped() {
			t.Fatal("Tools left the idle timer running")
		}
		// A timer that runs out as Tools stops it still must not close
		// the session it gave back: the connection in use is kept.
		timer.fire()
		if res := e.call(t, entries, "mcp_docs_echo", `{"text":"kept"}`); res.Output != "kept" {
			t.Fatalf("echo after a stale idle timer = %q", res.Output)
		}
		e.tools(t)
		if n := e.tgt.ends(); n != 0 {
			t.Fatalf("sessions ended = %d, want 0", n)
		}
		e.pool.Close("ses_1")
		eventually(t, "the server to see the session end", func() bool { return e.tgt.ends() == 1 })
		if n := e.tgt.inits(); n != 1 {
			t.Errorf("initializations = %d, want 1", n)
		}
	}},
	{"re-lists when the server says its tools changed", func(t *testing.T, e *env) {
		entries := e.tools(t)
		if res := e.call(t, entries, "mcp_docs_add_tool", `{"name":"late"}`); res.IsError {
			t.Fatalf("add_tool: %s", res.Output)
		}
		eventually(t, "mcp_docs_late to be offered", func() bool {
			entries = e.tools(t)
			_, ok := byName(entries)["mcp_docs_late"]
			return ok
		})
		if res := e.call(t, entries, "mcp_docs_late", `{}`); res.Output != "late called" {
			t.Errorf("late = %q", res.Output)
		}
		if n := e.tgt.inits(); n != 1 {
			t.Errorf("initializations = %d, want 1", n)
		}
	}},
	{"re-lists on a change announced between requests", func(t *testing.T, e *env) {
		if e.tgt.addTool == nil {
			t.Skip("the test cannot reach into this server")
		}
		e.tools(t)
		// A change is announced on the GET stream, which the client opens
		// after initializing; announced before, it is lost (as MCP has it).
		eventually(t, "the GET stream to open", func() bool { return e.tgt.streams() > 0 })
		e.tgt.addTool("oob")
		eventually(t, "mcp_docs_oob to be offered", func() bool {
			_, ok := byName(e.tools(t))["mcp_docs_oob"]
			return ok
		})
	}},
	{"a server that goes down gives tool errors and comes back", func(t *testing.T, e *env) {
		entries := e.tools(t)
		if res := e.call(t, entries, "mcp_docs_echo", `{"text":"up"}`); res.Output != "up" {
			t.Fatalf("echo = %q", res.Output)
		}
		e.tgt.stop()
		res := e.call(t, entries, "mcp_docs_echo", `{"text":"down"}`)
		if !res.IsError || !strings.Contains(res.Output, "MCP server docs is unavailable") {
			t.Errorf("echo while down = %q (error %t), want an unavailable error", res.Output, res.IsError)
		}
		// The cycle goes on, offering what the server listed before.
		entries = e.tools(t)
		if _, ok := byName(entries)["mcp_docs_echo"]; !ok {
			t.Errorf("tools while down = %v, want the cached list", names(entries))
		}
		e.tgt.start()
		if res := e.call(t, entries, "mcp_docs_echo", `{"text":"back"}`); res.Output != "back" || res.IsError {
			t.Errorf("echo after restart = %q (error %t)", res.Output, res.IsError)
		}
	}},
	{"a server restarted between calls is reconnected at once", func(t *testing.T, e *env) {
		entries := e.tools(t)
		e.call(t, entries, "mcp_docs_echo", `{"text":"before"}`)
		e.tgt.stop()
		e.tgt.start() // it has forgotten the session
		if res := e.call(t, entries, "mcp_docs_echo", `{"text":"after"}`); res.Output != "after" || res.IsError {
			t.Errorf("echo after a restart = %q (error %t)", res.Output, res.IsError)
		}
		if n := e.tgt.inits(); n != 2 {
			t.Errorf("initializations = %d, want 2", n)
		}
	}},
	{"sends the credential and never shows it", func(t *testing.T, e *env) {
		entries := e.tools(t)
		if res := e.call(t, entries, "mcp_docs_authorized", `{}`); res.Output != `{"authorized":true}` {
			t.Errorf("authorized = %q", res.Output)
		}
		if e.tgt.auth != nil && !slices.Contains(e.tgt.auth(), "Bearer "+token) {
			t.Errorf("server saw Authorization %q, want the credential", e.tgt.auth())
		}
		// Exercise the failure paths too: they must not leak it either.
		e.call(t, entries, "mcp_docs_fail", `{}`)
		e.tgt.stop()
		e.call(t, entries, "mcp_docs_echo", `{"text":"x"}`)
		e.tools(t)
		e.tgt.start()
		for _, out := range e.outputs {
			if strings.Contains(out, token) {
				t.Errorf("a tool definition or result holds the credential: %q", out)
			}
		}
		if strings.Contains(e.logs.String(), token) {
			t.Errorf("the log holds the credential:\n%s", e.logs.String())
		}
		// The stdio server prints its credential on stderr (-leak), which
		// goes to the debug log redacted.
		if e.tgt.auth == nil && !strings.Contains(e.logs.String(), "starting with token [redacted]") {
			t.Errorf("the stdio server's stderr is not in the log, redacted:\n%s", e.logs.String())
		}
	}},
}

func TestConformance(t *testing.T) {
	bin := mcpservers.BuildStdio(t)
	for _, m := range makers(bin) {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					logs := &logBuffer{}
					creds := &fakeCreds{token: token}
					timers := &idleTimers{}
					tgt := m.make(t)
					var stdio []string
					if tgt.command != "" {
						stdio = append(stdio, tgt.command)
					}
					e := &env{tgt: tgt, creds: creds, logs: logs, timers: timers, pool: newPoolTimers(t, creds, logs, time.Minute, timers, stdio...)}
					c.run(t, e)
				})
			}
		})
	}
}

func jsonEqual(t *testing.T, got json.RawMessage, want string) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("schema is not JSON: %v", err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want is not JSON: %v", err)
	}
	return reflect.DeepEqual(g, w)
}
