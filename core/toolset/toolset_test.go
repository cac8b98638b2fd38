package toolset_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/toolset"
)

type named string

func (n named) Def() core.ToolDef {
	return core.ToolDef{Name: string(n), InputSchema: json.RawMessage(`{"type":"object"}`)}
}
func (named) Call(context.Context, core.ToolCall) (core.ToolResult, error) {
	return core.ToolResult{}, nil
}

func TestRegistry(t *testing.T) {
	r, err := toolset.New(named("a"))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Add(named("a"), core.PolicyAllow); err == nil || !strings.Contains(err.Error(), `"a" is offered twice`) {
		t.Fatalf("duplicate accepted: %v", err)
	}
	if err := r.Add(named("bad name"), core.PolicyAllow); err == nil {
		t.Fatal("invalid name accepted")
	}
	_ = r.Add(named("secret"), core.PolicyDeny)
	_ = r.Add(named("careful"), core.PolicyAsk)
	_ = r.Add(toolset.CustomTool{Spec: core.ToolSpec{Type: "custom", Name: "client_side"}}, core.PolicyAllow)
	var names []string
	for _, d := range r.Defs() {
		names = append(names, d.Name)
	}
	if strings.Join(names, ",") != "a,careful,client_side" {
		t.Fatalf("offered %v", names)
	}
	if _, _, ok := r.Get("secret"); ok {
		t.Fatal("a denied tool is callable")
	}
	if _, p, ok := r.Get("careful"); !ok || p != core.PolicyAsk {
		t.Fatalf("careful: %v %v", p, ok)
	}
	tool, _, _ := r.Get("client_side")
	if _, ok := tool.(core.Custom); !ok {
		t.Fatal("custom tool not marked custom")
	}
	if string(tool.Def().InputSchema) == "" {
		t.Fatal("custom tool without a schema")
	}
}

// policied is a built-in tool whose policy the operator set.
type policied struct {
	named
	p core.Policy
}

func (p policied) Policy() core.Policy { return p.p }

// TestNewHonoursPolicy: a built-in tool that says its policy is
// registered under it (an ask-first web tool yields for confirmation).
func TestNewHonoursPolicy(t *testing.T) {
	r, err := toolset.New(named("plain"), policied{named("careful"), core.PolicyAsk}, policied{named("unset"), ""})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]core.Policy{"plain": core.PolicyAllow, "careful": core.PolicyAsk, "unset": core.PolicyAllow} {
		if _, p, ok := r.Get(name); !ok || p != want {
			t.Errorf("%s: policy %q (offered %v), want %q", name, p, ok, want)
		}
	}
}
