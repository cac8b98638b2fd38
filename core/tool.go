package core

import (
	"context"
	"encoding/json"
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
}

// Tool is one capability the model can call.
type Tool interface {
	Def() ToolDef
	Call(ctx context.Context, call ToolCall) (ToolResult, error)
}
