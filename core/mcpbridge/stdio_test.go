package mcpbridge_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/mcpbridge"
	"github.com/switchboardhq/switchboard/core/settings"
	"github.com/switchboardhq/switchboard/fixtures/mcpservers"
)

func TestLoadStdioAllow(t *testing.T) {
	for _, c := range []struct {
		name, value string
		allows      []string
		refuses     []string
		err         bool
	}{
		{name: "empty allows none", value: "", refuses: []string{"/bin/sh", ""}},
		{name: "exact paths", value: " /usr/bin/a ,/opt/b", allows: []string{"/usr/bin/a", "/opt/b"}, refuses: []string{"a", "/usr/bin/a/", "/usr/bin/ab", "/opt/./b"}},
		{name: "relative path", value: "bin/a", err: true},
		{name: "unclean path", value: "/usr/bin/../bin/a", err: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, err := mcpbridge.LoadStdioAllow(settings.Values{mcpbridge.StdioAllowEnv: c.value})
			if c.err {
				if err == nil || !strings.Contains(err.Error(), mcpbridge.StdioAllowEnv) {
					t.Fatalf("err = %v, want one naming %s", err, mcpbridge.StdioAllowEnv)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range c.allows {
				if !a.Allows(p) {
					t.Errorf("%q refused", p)
				}
			}
			for _, p := range c.refuses {
				if a.Allows(p) {
					t.Errorf("%q allowed", p)
				}
				err := a.Check([]core.MCPServerSpec{{Name: "x", Transport: core.TransportStdio, Command: p}})
				if !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), mcpbridge.StdioAllowEnv) {
					t.Errorf("Check(%q) = %v, want invalid naming %s", p, err, mcpbridge.StdioAllowEnv)
				}
			}
		})
	}
}

// TestAStdioServerOffTheAllowlistIsNotStarted: an agent stored before
// the allowlist can still name any command; the pool refuses to run it.
func TestAStdioServerOffTheAllowlistIsNotStarted(t *testing.T) {
	bin := mcpservers.BuildStdio(t)
	record := filepath.Join(t.TempDir(), "record")
	spec := core.MCPServerSpec{Name: "docs", Transport: core.TransportStdio, Command: bin, Args: []string{"-record", record}}
	logs := &logBuffer{}
	pool := newPoolTimers(t, nil, logs, time.Minute, nil, "/usr/bin/true")
	entries, err := pool.Tools(t.Context(), "ses_1", []mcpbridge.Server{mcpbridge.External(spec)})
	if err != nil || len(entries) != 0 {
		t.Fatalf("Tools = %v, %v; want no tools and no error", names(entries), err)
	}
	if !strings.Contains(logs.String(), mcpbridge.StdioAllowEnv) {
		t.Errorf("the log does not name %s:\n%s", mcpbridge.StdioAllowEnv, logs.String())
	}
	if rec := mcpservers.ReadStdioRecord(t, record); rec.Inits != 0 {
		t.Errorf("the server was started %d times", rec.Inits)
	}
}

type agentPages []*core.Agent

func (p agentPages) ListAgents(_ context.Context, after string, limit int) ([]*core.Agent, bool, error) {
	i := 0
	for i < len(p) && after != "" && p[i].ID <= after {
		i++
	}
	end := min(i+limit, len(p))
	return p[i:end], end < len(p), nil
}

func TestWarnDisallowedOncePerAgent(t *testing.T) {
	stdio := func(cmd string) core.MCPServerSpec {
		return core.MCPServerSpec{Name: "s", Transport: core.TransportStdio, Command: cmd}
	}
	var agents agentPages
	want := 0
	for i := range 250 {
		a := &core.Agent{ID: fmt.Sprintf("agt_%04d", i), Name: "a"}
		switch i % 3 {
		case 0: // two refused servers, still one warning
			a.MCPServers = []core.MCPServerSpec{stdio("/bin/sh"), stdio("/usr/bin/python3")}
			want++
		case 1:
			a.MCPServers = []core.MCPServerSpec{stdio("/opt/allowed")}
		case 2:
			a.MCPServers = []core.MCPServerSpec{{Name: "h", URL: "https://example.com/mcp"}}
		}
		agents = append(agents, a)
	}
	allow, err := mcpbridge.NewStdioAllow("/opt/allowed")
	if err != nil {
		t.Fatal(err)
	}
	logs := &logBuffer{}
	if err := mcpbridge.WarnDisallowed(t.Context(), agents, allow, logs.logger()); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(logs.String(), "will not be started"); got != want {
		t.Errorf("%d warnings, want %d:\n%s", got, want, logs.String())
	}
}
