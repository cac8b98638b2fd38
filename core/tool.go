package core

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
)

// ToolCall is one call the model made.
type ToolCall struct {
	SessionID string
	TurnID    string
	ID        string // tool_use_id
	Name      string
	Input     json.RawMessage
}

// ToolResult is what a tool returns to the model.
type ToolResult struct {
	Output  string
	IsError bool
	// UserMessage, when set, is logged as a user-level agent.message (say, ask).
	UserMessage string
	// Yield ends the turn after this step with the given reason (ask yields
	// needs_input).
	Yield Reason
	// Plan, when set, is logged as an agent.plan (the plan tool).
	Plan *PlanBody
}

// Tool is one capability the model can call.
type Tool interface {
	Def() ToolDef
	Call(ctx context.Context, call ToolCall) (ToolResult, error)
}

// Policy says whether a tool runs when the model calls it.
type Policy string

const (
	PolicyAllow Policy = "always_allow" // run at once (the default)
	PolicyAsk   Policy = "always_ask"   // yield requires_action until a person confirms
	PolicyDeny  Policy = "deny"         // never offered to the model
)

// ParsePolicy validates a policy; empty means always_allow.
func ParsePolicy(s string) (Policy, error) {
	switch Policy(s) {
	case "", PolicyAllow:
		return PolicyAllow, nil
	case PolicyAsk, PolicyDeny:
		return Policy(s), nil
	}
	return "", fmt.Errorf("policy %q: want always_allow, always_ask or deny: %w", s, ErrInvalid)
}

// Custom is implemented by tools the client application runs: a call is
// logged as agent.custom_tool_use and the turn yields requires_action
// until a user.custom_tool_result answers it.
type Custom interface {
	Custom()
}

var toolNamePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// ValidToolName checks a tool name against what Anthropic and OpenAI accept.
func ValidToolName(name string) error {
	if !toolNamePattern.MatchString(name) {
		return fmt.Errorf("tool name %q: want 1 to 64 of a-z, A-Z, 0-9, _ and -: %w", name, ErrInvalid)
	}
	return nil
}

// ReservedToolNames are the built-in tools (conversation and sandbox
// hands); an agent cannot declare tools under these names, nor under the
// mcp_ prefix that MCP server tools take.
func ReservedToolNames() []string {
	return append([]string{"say", "ask", PlanTool, "memory", "skill", "schedule", "web_fetch", "web_search"}, handsToolNames...)
}

// handsToolNames are the tools that work in a session's sandbox.
var handsToolNames = []string{"bash", "read", "write", "edit", "ls", "glob", "grep"}

// IsHandsTool reports whether name is a tool that works in the session's
// sandbox: a session whose log holds a call of one has had a sandbox.
func IsHandsTool(name string) bool {
	return slices.Contains(handsToolNames, name)
}
