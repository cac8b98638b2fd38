package core_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

func TestAgentRuntimeValidate(t *testing.T) {
	acp := func(mod func(*core.AgentRuntime)) core.AgentRuntime {
		r := core.AgentRuntime{Kind: core.RuntimeACP, Command: []string{"claude-agent-acp"}}
		if mod != nil {
			mod(&r)
		}
		return r
	}
	tests := []struct {
		name    string
		model   string
		tools   []core.ToolSpec
		runtime core.AgentRuntime
		wantErr string // "" means valid
	}{
		{"zero is builtin", "anthropic/x", nil, core.AgentRuntime{}, ""},
		{"builtin named", "anthropic/x", nil, core.AgentRuntime{Kind: "builtin", Compaction: "off"}, ""},
		{"builtin needs a model", "", nil, core.AgentRuntime{}, "model"},
		{"bad compaction", "anthropic/x", nil, core.AgentRuntime{Compaction: "sometimes"}, `"sometimes"`},
		{"builtin with command", "anthropic/x", nil, core.AgentRuntime{Command: []string{"x"}}, `for kind "acp"`},
		{"unknown kind", "anthropic/x", nil, core.AgentRuntime{Kind: "claude"}, `"runtime.kind": "claude"`},
		{"acp without model", "", nil, acp(nil), ""},
		{"acp with a priced model", "anthropic/claude-sonnet-4-5", nil, acp(nil), ""},
		{"acp with a bad model", "sonnet", nil, acp(nil), `model "sonnet"`},
		{"acp without command", "", nil, acp(func(r *core.AgentRuntime) { r.Command = nil }), `"runtime.command" is required`},
		{"acp blank command", "", nil, acp(func(r *core.AgentRuntime) { r.Command = []string{" "} }), `"runtime.command" is required`},
		{"acp NUL in argv", "", nil, acp(func(r *core.AgentRuntime) { r.Command = append(r.Command, "a\x00b") }), "command[1]"},
		{"acp env", "", nil, acp(func(r *core.AgentRuntime) { r.Env = map[string]string{"DEBUG": "1"} }), ""},
		{"acp bad env name", "", nil, acp(func(r *core.AgentRuntime) { r.Env = map[string]string{"A-B": "1"} }), `"A-B"`},
		{"acp permissions", "", nil, acp(func(r *core.AgentRuntime) { r.Permissions = map[string]string{"edit": "always_allow", "fetch": "deny"} }), ""},
		{"acp unknown kind", "", nil, acp(func(r *core.AgentRuntime) { r.Permissions = map[string]string{"teleport": "deny"} }), `"teleport"`},
		{"acp bad policy", "", nil, acp(func(r *core.AgentRuntime) { r.Permissions = map[string]string{"edit": "maybe"} }), `"maybe"`},
		{"acp compaction", "", nil, acp(func(r *core.AgentRuntime) { r.Compaction = "off" }), "compacts its own"},
		{"acp custom tools", "", []core.ToolSpec{{Type: "custom", Name: "lookup"}}, acp(nil), "custom tools"},
		{"acp model credential", "", nil, acp(func(r *core.AgentRuntime) { r.ModelCredential = "vcr_01m8h5jpyh02n2czzf7ahrsnqv" }), ""},
		{"acp model credential not an id", "", nil, acp(func(r *core.AgentRuntime) { r.ModelCredential = "sk-ant-real-key" }), `"runtime.model_credential"`},
		{"builtin model credential", "anthropic/x", nil, core.AgentRuntime{ModelCredential: "vcr_01m8h5jpyh02n2czzf7ahrsnqv"}, "model_credential"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := core.Agent{Name: "a", Model: tt.model, Tools: tt.tools, Runtime: tt.runtime}
			wantValidation(t, a.Validate(), tt.wantErr)
		})
	}
}

// TestACPBudgetNeedsMetering: budgets on an ACP agent are refused unless
// its model traffic is metered (its key injected by the proxy).
func TestACPBudgetNeedsMetering(t *testing.T) {
	rt := core.AgentRuntime{Kind: core.RuntimeACP, Command: []string{"codex-acp"}}
	for _, l := range []core.Limits{{MaxTokens: 1000}, {MaxSessionTokens: 1000}, {MaxSessionCostUSD: 1}} {
		a := core.Agent{Name: "a", Runtime: rt, Limits: l}
		wantValidation(t, a.Validate(), "set runtime.model_credential")
		a.Runtime.ModelCredential = "vcr_01m8h5jpyh02n2czzf7ahrsnqv"
		wantValidation(t, a.Validate(), "")
	}
	a := core.Agent{Name: "a", Runtime: rt, Limits: core.Limits{TurnSeconds: 60, MaxSteps: 5}}
	wantValidation(t, a.Validate(), "")
}

func TestAgentRuntimeJSON(t *testing.T) {
	b, err := json.Marshal(core.Agent{Name: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), `"runtime"`) {
		t.Fatalf("an agent without a runtime shows %s, want no runtime (the built-in loop)", b)
	}
	b, err = json.Marshal(core.Agent{Name: "a", Runtime: core.AgentRuntime{Compaction: core.CompactionOff}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"runtime":{"kind":"builtin","compaction":"off"}`) {
		t.Fatalf("a built-in runtime with a setting shows %s", b)
	}
	var a core.Agent
	if err := json.Unmarshal([]byte(`{"name":"a","runtime":{"kind":"acp","command":["goose","acp"]}}`), &a); err != nil {
		t.Fatal(err)
	}
	if a.Runtime.Kind != core.RuntimeACP || len(a.Runtime.Command) != 2 {
		t.Fatalf("decoded %+v", a.Runtime)
	}
}

func TestPermissionPolicy(t *testing.T) {
	r := core.AgentRuntime{Kind: core.RuntimeACP, Permissions: map[string]string{"edit": "always_allow", "read": "always_ask"}}
	for kind, want := range map[string]core.Policy{
		"edit": core.PolicyAllow, "read": core.PolicyAsk, "search": core.PolicyAllow, "think": core.PolicyAllow,
		"execute": core.PolicyAsk, "delete": core.PolicyAsk, "": core.PolicyAsk, "unheard-of": core.PolicyAsk,
	} {
		if got := r.PermissionPolicy(kind); got != want {
			t.Errorf("PermissionPolicy(%q) = %s, want %s", kind, got, want)
		}
	}
}
