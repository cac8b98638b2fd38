package anthropic

import (
	"encoding/base64"
	"fmt"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/models/internal/modelcall"
)

// params is the request for req: its parameters without the messages and
// tools, and what to send (lastRequest.body) and keep of it once sent
// (lastRequests.keep).
func (c *Client) params(name string, req core.ModelRequest) (sdk.MessageNewParams, *lastRequest, error) {
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = c.maxTokens
	}
	p := sdk.MessageNewParams{Model: name, MaxTokens: int64(maxTokens)}
	if req.System != "" {
		p.System = []sdk.TextBlockParam{{Text: req.System}}
	}
	r, err := c.last.encodeAll(req.Conversation, req.Messages, c.encoded)
	if err != nil {
		return p, nil, fmt.Errorf("anthropic: %w", err)
	}
	tools := make([][]byte, 0, len(req.Tools))
	for _, td := range req.Tools {
		raw, err := c.tools.encode(td)
		if err != nil {
			return p, nil, fmt.Errorf("anthropic: %w", err)
		}
		tools = append(tools, raw)
	}
	rest, err := requestRest(p)
	if err != nil {
		return p, nil, fmt.Errorf("anthropic: encode request: %w", err)
	}
	r.build(tools, rest)
	return p, r, nil
}

// message converts one core message. In a user message the tool results
// come first, as the API requires them to lead the turn that answers the
// tool calls.
func message(m core.Message) (sdk.MessageParam, error) {
	var results, rest []sdk.ContentBlockParamUnion
	for _, b := range m.Content {
		switch {
		case b.Type == core.BlockText:
			if b.Text != "" {
				rest = append(rest, sdk.NewTextBlock(b.Text))
			}
		case b.Type == core.BlockImage && m.Role == core.RoleUser:
			rest = append(rest, sdk.NewImageBlockBase64(b.MediaType, base64.StdEncoding.EncodeToString(b.Data)))
		case b.Type == core.BlockToolUse && m.Role == core.RoleAssistant:
			in, ok := modelcall.Input(string(b.Input))
			if !ok {
				return sdk.MessageParam{}, fmt.Errorf("tool_use %s: input is not valid json: %w", b.ToolUseID, core.ErrInvalid)
			}
			rest = append(rest, sdk.NewToolUseBlock(b.ToolUseID, in, b.Name))
		case b.Type == core.BlockToolResult && m.Role == core.RoleUser:
			r := sdk.ToolResultBlockParam{ToolUseID: b.ToolUseID}
			if b.Output != "" {
				r.Content = []sdk.ToolResultBlockParamContentUnion{{OfText: &sdk.TextBlockParam{Text: b.Output}}}
			}
			if b.IsError {
				r.IsError = sdk.Bool(true)
			}
			results = append(results, sdk.ContentBlockParamUnion{OfToolResult: &r})
		default:
			return sdk.MessageParam{}, fmt.Errorf("a %s message cannot hold a %q block: %w", m.Role, b.Type, core.ErrInvalid)
		}
	}
	switch m.Role {
	case core.RoleUser:
		return sdk.MessageParam{Role: sdk.MessageParamRoleUser, Content: append(results, rest...)}, nil
	case core.RoleAssistant:
		return sdk.MessageParam{Role: sdk.MessageParamRoleAssistant, Content: rest}, nil
	}
	return sdk.MessageParam{}, fmt.Errorf("unknown role %q: %w", m.Role, core.ErrInvalid)
}
