package providers_test

import (
	"strconv"
	"testing"

	"github.com/mark3labs/mcp-go/server"
	"github.com/switchboardhq/switchboard/providers"
)

func TestToolCache(t *testing.T) {
	c := &providers.ToolCache[string]{Max: 2}
	built := 0
	build := func() *server.MCPServer { built++; return server.NewMCPServer("t"+strconv.Itoa(built), "1") }
	a := c.Get("s1", "inst1", build)
	steps := []struct {
		name, session, key string
		same               *server.MCPServer
		builds             int
	}{
		{"same session and key: kept", "s1", "inst1", a, 1},
		{"another session: built", "s2", "inst1", nil, 2},
		{"key changed: rebuilt", "s2", "inst2", nil, 3},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			got := c.Get(st.session, st.key, build)
			if st.same != nil && got != st.same {
				t.Fatal("a new server for the same session and key")
			}
			if built != st.builds {
				t.Fatalf("built %d, want %d", built, st.builds)
			}
		})
	}
	// Max 2: a third session drops the least recently used (s1).
	c.Get("s3", "inst1", build)
	if c.Get("s1", "inst1", build) == a {
		t.Fatal("the least recently used server was kept beyond Max")
	}
	s3 := c.Get("s3", "inst1", build)
	c.Forget(func(k string) bool { return k == "inst1" })
	if c.Get("s3", "inst1", build) == s3 {
		t.Fatal("Forget kept a server of the forgotten key")
	}
}
