package openai

import (
	"encoding/base64"
	"fmt"
	"strings"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/models/internal/modelcall"
)

func (c *Client) params(name string, req core.ModelRequest) (sdk.ChatCompletionNewParams, error) {
	p := sdk.ChatCompletionNewParams{
		Model:         name,
		StreamOptions: sdk.ChatCompletionStreamOptionsParam{IncludeUsage: sdk.Bool(true)},
	}
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = c.maxTokens
	}
	if maxTokens > 0 {
		p.MaxCompletionTokens = sdk.Int(int64(maxTokens))
	}
	if req.System != "" {
		p.Messages = append(p.Messages, sdk.SystemMessage(req.System))
	}
	for i, m := range req.Messages {
		ms, err := messages(m)
		if err != nil {
			return p, fmt.Errorf("openai: message %d: %w", i, err)
		}
		p.Messages = append(p.Messages, ms...)
	}
	for _, td := range req.Tools {
		schema, err := modelcall.Schema(td.InputSchema)
		if err != nil {
			return p, fmt.Errorf("openai: tool %s: %w", td.Name, err)
		}
		fd := shared.FunctionDefinitionParam{Name: td.Name, Parameters: shared.FunctionParameters(schema)}
		if td.Description != "" {
			fd.Description = sdk.String(td.Description)
		}
		p.Tools = append(p.Tools, sdk.ChatCompletionFunctionTool(fd))
	}
	return p, nil
}

// messages converts one core message to chat messages: a user message's
// tool results become tool messages, one per result in order, before the
// user's text; an assistant's tool_use blocks become its tool_calls.
func messages(m core.Message) ([]sdk.ChatCompletionMessageParamUnion, error) {
	var out []sdk.ChatCompletionMessageParamUnion
	var texts []string
	var calls []sdk.ChatCompletionMessageToolCallUnionParam
	// parts keep a user message's text and images in order, when it has
	// images; without, its text is one string.
	var parts []sdk.ChatCompletionContentPartUnionParam
	images := false
	for _, b := range m.Content {
		switch {
		case b.Type == core.BlockText:
			if b.Text != "" {
				texts = append(texts, b.Text)
				parts = append(parts, sdk.TextContentPart(b.Text))
			}
		case b.Type == core.BlockImage && m.Role == core.RoleUser:
			images = true
			parts = append(parts, sdk.ImageContentPart(sdk.ChatCompletionContentPartImageImageURLParam{
				URL: "data:" + b.MediaType + ";base64," + base64.StdEncoding.EncodeToString(b.Data)}))
		case b.Type == core.BlockToolResult && m.Role == core.RoleUser:
			// Chat Completions has no is_error; the output has to say it.
			// Chat Completions has no error flag on tool messages, so
			// the text has to say it.
			output := b.Output
			if b.IsError {
				output = "[tool error] " + output
			}
			out = append(out, sdk.ToolMessage(output, b.ToolUseID))
		case b.Type == core.BlockToolUse && m.Role == core.RoleAssistant:
			in, ok := modelcall.Input(string(b.Input))
			if !ok {
				return nil, fmt.Errorf("tool_use %s: input is not valid json: %w", b.ToolUseID, core.ErrInvalid)
			}
			calls = append(calls, sdk.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
					ID:       b.ToolUseID,
					Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: b.Name, Arguments: string(in)},
				},
			})
		default:
			return nil, fmt.Errorf("a %s message cannot hold a %q block: %w", m.Role, b.Type, core.ErrInvalid)
		}
	}
	text := strings.Join(texts, "\n\n")
	switch m.Role {
	case core.RoleUser:
		switch {
		case images:
			out = append(out, sdk.UserMessage(parts))
		case text != "":
			out = append(out, sdk.UserMessage(text))
		}
	case core.RoleAssistant:
		if text == "" && len(calls) == 0 {
			break
		}
		a := sdk.ChatCompletionAssistantMessageParam{ToolCalls: calls}
		if text != "" {
			a.Content.OfString = sdk.String(text)
		}
		out = append(out, sdk.ChatCompletionMessageParamUnion{OfAssistant: &a})
	default:
		return nil, fmt.Errorf("unknown role %q: %w", m.Role, core.ErrInvalid)
	}
	return out, nil
}
