package mcpbridge

import (
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

func TestToolName(t *testing.T) {
	long := strings.Repeat("x", 80)
	for _, c := range []struct {
		name, server, tool, want string
	}{
		{"plain", "docs", "search", "mcp_docs_search"},
		{"dots and spaces", "docs", "search.all files", "mcp_docs_search_all_files"},
		{"unicode", "docs", "café", "mcp_docs_caf_"},
		{"dashes kept", "my-server", "get-item", "mcp_my-server_get-item"},
		{"too long", "docs", long, "mcp_docs_" + long[:64-len("mcp_docs_")-9] + "_" + shortHash("docs", long)},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := toolName(c.server, c.tool)
			if got != c.want {
				t.Errorf("toolName(%q, %q) = %q, want %q", c.server, c.tool, got, c.want)
			}
			if err := core.ValidToolName(got); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestNamerKeepsNamesUnique(t *testing.T) {
	long := strings.Repeat("y", 80)
	for _, c := range []struct {
		name  string
		tools [][2]string // server, tool
	}{
		{"sanitised alike", [][2]string{{"docs", "a.b"}, {"docs", "a_b"}, {"docs", "a b"}}},
		{"cut alike", [][2]string{{"docs", long + "1"}, {"docs", long + "2"}}},
		{"server and tool split differently", [][2]string{{"a", "b_c"}, {"a_b", "c"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var n namer
			seen := map[string]bool{}
			for _, st := range c.tools {
				got := n.name(st[0], st[1])
				if got == "" || seen[got] {
					t.Fatalf("name(%q, %q) = %q: not unique among %v", st[0], st[1], got, seen)
				}
				if err := core.ValidToolName(got); err != nil {
					t.Error(err)
				}
				seen[got] = true
			}
			// The same listing names the same way the next cycle.
			var again namer
			for _, st := range c.tools {
				if got := again.name(st[0], st[1]); !seen[got] {
					t.Errorf("name(%q, %q) = %q the second time", st[0], st[1], got)
				}
			}
		})
	}
}
