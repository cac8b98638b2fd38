package core_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

func TestAgentValidateTools(t *testing.T) {
	custom := func(name string) core.ToolSpec { return core.ToolSpec{Type: "custom", Name: name} }
	tests := []struct {
		name    string
		tools   []core.ToolSpec
		servers []core.MCPServerSpec
		wantErr string // "" means valid
	}{
		{"valid", []core.ToolSpec{custom("lookup_order"), custom("refund-v2")}, []core.MCPServerSpec{{Name: "docs", URL: "http://127.0.0.1:9/mcp"}, {Name: "git-hub", Transport: "stdio", Command: "/bin/gh-mcp"}}, ""},
		{"invalid characters", []core.ToolSpec{custom("look up")}, nil, `"look up"`},
		{"too long", []core.ToolSpec{custom(strings.Repeat("x", 65))}, nil, "1 to 64"},
		{"empty name", []core.ToolSpec{custom("")}, nil, `""`},
		{"duplicate", []core.ToolSpec{custom("a"), custom("a")}, nil, `"a" collides with tools[0]`},
		{"built-in", []core.ToolSpec{custom("bash")}, nil, `"bash" collides with a built-in tool`},
		{"mcp prefix", []core.ToolSpec{custom("mcp_docs_search")}, nil, "mcp_ prefix is reserved"},
		{"bad type", []core.ToolSpec{{Type: "function", Name: "x"}}, nil, `type "function"`},
		{"bad policy", []core.ToolSpec{{Type: "custom", Name: "x", Policy: "sometimes"}}, nil, `"sometimes"`},
		{"bad schema", []core.ToolSpec{{Type: "custom", Name: "x", InputSchema: []byte("{")}}, nil, "not valid JSON"},
		{"server underscore", nil, []core.MCPServerSpec{{Name: "my_docs", URL: "http://h/"}}, `"my_docs"`},
		{"server duplicate", nil, []core.MCPServerSpec{{Name: "docs", URL: "http://h/"}, {Name: "docs", URL: "http://h/"}}, "also mcp_servers[0]"},
		{"server policy", nil, []core.MCPServerSpec{{Name: "docs", URL: "http://h/", Policy: "never"}}, `"never"`},
		{"tool policy", nil, []core.MCPServerSpec{{Name: "docs", URL: "http://h/", ToolPolicies: map[string]string{"rm": "maybe"}}}, `tool_policies["rm"]`},
		{"no url", nil, []core.MCPServerSpec{{Name: "docs"}}, "http or https URL"},
		{"stdio without command", nil, []core.MCPServerSpec{{Name: "docs", Transport: "stdio"}}, "needs a command"},
		{"bad transport", nil, []core.MCPServerSpec{{Name: "docs", Transport: "carrier-pigeon", URL: "http://h/"}}, `"carrier-pigeon"`},
		{"auth without credential", nil, []core.MCPServerSpec{{Name: "docs", URL: "http://h/", Auth: &core.MCPAuth{}}}, "vault_credential"},
		{"stdio auth without env", nil, []core.MCPServerSpec{{Name: "docs", Transport: "stdio", Command: "x", Auth: &core.MCPAuth{VaultCredential: "vcr_1"}}}, "needs env"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := core.Agent{Name: "a", Model: "anthropic/x", Tools: tt.tools, MCPServers: tt.servers}
			wantValidation(t, a.Validate(), tt.wantErr)
		})
	}
}

// wantValidation checks a validation's outcome: nil when wantErr is
// empty, else an ErrInvalid naming wantErr.
func wantValidation(t *testing.T, err error, wantErr string) {
	t.Helper()
	if wantErr == "" {
		if err != nil {
			t.Fatalf("valid agent refused: %v", err)
		}
		return
	}
	if err == nil || !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), wantErr) {
		t.Fatalf("error %v, want one containing %q", err, wantErr)
	}
}

func TestSplitModel(t *testing.T) {
	for in, ok := range map[string]bool{"anthropic/claude": true, "openai/gpt-4o": true, "openai/": false, "claude": false, "google/gemini": false} {
		if _, _, err := core.SplitModel(in); (err == nil) != ok {
			t.Errorf("SplitModel(%q) = %v", in, err)
		}
	}
}

func TestTimeFormat(t *testing.T) {
	b, _ := core.NewTime(mustParse(t, "2026-11-22T10:00:00.1Z")).MarshalJSON()
	if string(b) != `"2026-11-22T10:00:00.100Z"` {
		t.Fatalf("got %s", b)
	}
}
