package core

import (
	"context"
	"encoding/json"
	"fmt"
)

// Role of a model message.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// BlockType of a content block.
type BlockType string

const (
	BlockText       BlockType = "text"
	BlockToolUse    BlockType = "tool_use"
	BlockToolResult BlockType = "tool_result"
	// BlockImage is an image in a user message (models that take them).
	BlockImage BlockType = "image"
)

// Block is one piece of a model message, in a wire-neutral form that the
// model clients translate to Anthropic's or OpenAI's format.
type Block struct {
	Type      BlockType       `json:"type"`
	Text      string          `json:"text,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"` // tool_use and tool_result
	Name      string          `json:"name,omitempty"`        // tool_use
	Input     json.RawMessage `json:"input,omitempty"`       // tool_use
	Output    string          `json:"output,omitempty"`      // tool_result
	IsError   bool            `json:"is_error,omitempty"`    // tool_result
	// MediaType and Data are an image's (image/png, …; the raw bytes).
	MediaType string `json:"media_type,omitempty"`
	Data      []byte `json:"data,omitempty"`
	// Attachment, on a block of a derived context, is the attachment the
	// block stands for until the harness reads it from the store: an
	// image's bytes, a text file's content, or a note where it is.
	Attachment *Attachment `json:"attachment,omitempty"`
}

// Message is one turn of a model conversation.
type Message struct {
	Role    Role    `json:"role"`
	Content []Block `json:"content"`
}

// ToolDef is a tool as offered to a model.
type ToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// ModelRequest is one model call.
type ModelRequest struct {
	// Model is the full model string, "anthropic/<name>" or "openai/<name>".
	Model     string
	System    string
	Messages  []Message
	Tools     []ToolDef
	MaxTokens int // output tokens for this call; 0 means the client default
	// Conversation, when set, names the conversation this request goes
	// on with (a session's turns): a client may keep what it encoded of
	// the last request so named and take a message of this one that has
	// the same role and the very same blocks (one array, as long) as
	// encoded then. A caller that names one therefore never changes a
	// sent message's blocks in place, nor the bytes they refer to: a
	// message it adds to gets a new array (slices.Clip before append).
	Conversation string
	// OnText, when set, receives text deltas as they stream.
	OnText func(delta string)
}

// StopKind is why a model response ended.
type StopKind string

const (
	StopEnd       StopKind = "end_turn"
	StopToolUse   StopKind = "tool_use"
	StopMaxTokens StopKind = "max_tokens"
)

// ModelResponse is a complete model answer: text and tool_use blocks.
type ModelResponse struct {
	Content []Block
	Stop    StopKind
	Usage   Usage
}

// Model generates one response. Implementations stream from the wire,
// retry 429 and 5xx with backoff, honour ctx, and return *ModelError for
// answers that are not a response.
type Model interface {
	Generate(ctx context.Context, req ModelRequest) (*ModelResponse, error)
}

// ModelError is a model call that failed after retries.
type ModelError struct {
	Status    int // HTTP status, 0 for transport errors
	Message   string
	Retryable bool
	Err       error
}

func (e *ModelError) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("model: status %d: %s", e.Status, e.Message)
	}
	return "model: " + e.Message
}

func (e *ModelError) Unwrap() error { return e.Err }
