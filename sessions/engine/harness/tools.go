package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// Yielder is a tool whose successful call always ends the turn with a
// reason; after a crash the harness uses it to finish the turn the same way.
type Yielder interface {
	YieldReason() core.Reason
}

// Conversation returns the built-in conversation tools: say, ask and
// plan.
func Conversation() []core.Tool { return []core.Tool{Say{}, Ask{}, Plan{}} }

// Say posts a user-level message now, without ending the turn.
type Say struct{}

func (Say) Def() core.ToolDef {
	return core.ToolDef{
		Name:        "say",
		Description: "Send a message to the people in this conversation right away, without ending your turn (progress updates, partial results). Your final answer does not need this tool: it is delivered when your turn ends.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"The message, in Markdown."}},"required":["text"]}`),
	}
}

func (Say) Call(_ context.Context, call core.ToolCall) (core.ToolResult, error) {
	text, err := stringArg(call.Input, "text")
	if err != nil {
		return core.ToolResult{Output: err.Error(), IsError: true}, nil
	}
	return core.ToolResult{Output: "delivered", UserMessage: text}, nil
}

// Ask posts a question and ends the turn until a person answers.
type Ask struct{}

func (Ask) Def() core.ToolDef {
	return core.ToolDef{
		Name:        "ask",
		Description: "Ask the people in this conversation a question you cannot proceed without. Your turn ends; their answer arrives as the next message.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"question":{"type":"string","description":"The question, in Markdown."}},"required":["question"]}`),
	}
}

func (Ask) Call(_ context.Context, call core.ToolCall) (core.ToolResult, error) {
	q, err := stringArg(call.Input, "question")
	if err != nil {
		return core.ToolResult{Output: err.Error(), IsError: true}, nil
	}
	return core.ToolResult{
		Output:      "The question was posted. The turn ends now; the answer will arrive as the next message.",
		UserMessage: q,
		Yield:       core.ReasonNeedsInput,
	}, nil
}

func (Ask) YieldReason() core.Reason { return core.ReasonNeedsInput }

func stringArg(input json.RawMessage, name string) (string, error) {
	var m map[string]any
	if err := json.Unmarshal(input, &m); err != nil {
		return "", fmt.Errorf("input must be a JSON object: %w", err)
	}
	s, _ := m[name].(string)
	if strings.TrimSpace(s) == "" {
		return "", fmt.Errorf("%q is required and must be a non-empty string", name)
	}
	return s, nil
}
