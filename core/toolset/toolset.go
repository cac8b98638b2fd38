// Package toolset is a session's tool registry: the tools its model is
// offered (built-ins, platform and external MCP tools, sandbox tools, the
// agent's custom tools), each with its policy, under names both model APIs
// accept.
package toolset

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/switchboardhq/switchboard/core"
)

// Registry holds a session's tools in the order they are offered.
type Registry struct {
	entries []entry
	byName  map[string]int
}

type entry struct {
	tool   core.Tool
	policy core.Policy
}

// Policied is a built-in tool whose policy the operator sets (the web
// tools may be ask-first).
type Policied interface {
	Policy() core.Policy
}

// New returns a registry holding tools, allowed unless a tool says its
// policy (Policied).
func New(tools ...core.Tool) (*Registry, error) {
	r := &Registry{byName: map[string]int{}}
	for _, t := range tools {
		p := core.PolicyAllow
		if pt, ok := t.(Policied); ok && pt.Policy() != "" {
			p = pt.Policy()
		}
		if err := r.Add(t, p); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Add registers t under policy p. A denied tool is recorded (its name is
// taken) but never offered.
func (r *Registry) Add(t core.Tool, p core.Policy) error {
	name := t.Def().Name
	if err := core.ValidToolName(name); err != nil {
		return err
	}
	if _, dup := r.byName[name]; dup {
		return fmt.Errorf("tool name %q is offered twice: %w", name, core.ErrInvalid)
	}
	r.byName[name] = len(r.entries)
	r.entries = append(r.entries, entry{tool: t, policy: p})
	return nil
}

// Defs are the tools offered to the model.
func (r *Registry) Defs() []core.ToolDef {
	if r == nil {
		return nil
	}
	defs := make([]core.ToolDef, 0, len(r.entries))
	for _, e := range r.entries {
		if e.policy != core.PolicyDeny {
			defs = append(defs, e.tool.Def())
		}
	}
	return defs
}

// Get finds an offered tool and its policy.
func (r *Registry) Get(name string) (core.Tool, core.Policy, bool) {
	if r == nil {
		return nil, "", false
	}
	i, ok := r.byName[name]
	if !ok || r.entries[i].policy == core.PolicyDeny {
		return nil, "", false
	}
	return r.entries[i].tool, r.entries[i].policy, true
}

// CustomTool is an agent's custom tool: the client application runs it.
type CustomTool struct{ Spec core.ToolSpec }

var _ core.Custom = CustomTool{}

func (c CustomTool) Def() core.ToolDef {
	schema := c.Spec.InputSchema
	if len(schema) == 0 {
		schema = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return core.ToolDef{Name: c.Spec.Name, Description: c.Spec.Description, InputSchema: schema}
}

// Call is never used: the harness yields requires_action instead.
func (c CustomTool) Call(context.Context, core.ToolCall) (core.ToolResult, error) {
	return core.ToolResult{}, fmt.Errorf("custom tool %q runs in the client application", c.Spec.Name)
}

func (CustomTool) Custom() {}
