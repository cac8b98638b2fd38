package anthropic

import (
	"encoding/json"
	"fmt"
	"sync"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/packages/param"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/models/internal/modelcall"
)

// encodedTools keeps each tool definition as the request body carries it,
// encoded by the SDK the first time it is sent: every step of a turn sends
// the tools the step before it sent, and the sessions of an agent send the
// same ones, so decoding each schema and encoding each tool through the
// SDK's reflection again was most of a request's cost past its messages.
// It is bounded by bytes: when full it starts afresh. Safe for concurrent
// use.
type encodedTools struct {
	max int

	mu    sync.Mutex
	total int
	byDef map[toolDef][]byte
}

// toolDef is what a tool's encoding is made of.
type toolDef struct{ name, description, schema string }

func newEncodedTools(maxBytes int) *encodedTools {
	return &encodedTools{max: maxBytes, byDef: map[toolDef][]byte{}}
}

// encode returns td's JSON as the SDK encodes a tool. A definition the
// API would refuse is an error, and is not kept.
func (c *encodedTools) encode(td core.ToolDef) ([]byte, error) {
	k := toolDef{name: td.Name, description: td.Description, schema: string(td.InputSchema)}
	c.mu.Lock()
	raw, ok := c.byDef[k]
	c.mu.Unlock()
	if ok {
		return raw, nil
	}
	tp, err := toolParam(td)
	if err != nil {
		return nil, err
	}
	raw, err = json.Marshal(sdk.ToolUnionParam{OfTool: &tp})
	if err != nil {
		return nil, fmt.Errorf("tool %s: %w", td.Name, err)
	}
	size := len(k.name) + len(k.description) + len(k.schema) + len(raw)
	if size > c.max {
		return raw, nil // not kept: it would push out every other
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.total+size > c.max {
		clear(c.byDef)
		c.total = 0
	}
	c.byDef[k] = raw
	c.total += size
	return raw, nil
}

// toolParam is td as the SDK's request names a tool.
func toolParam(td core.ToolDef) (sdk.ToolParam, error) {
	schema, err := modelcall.Schema(td.InputSchema)
	if err != nil {
		return sdk.ToolParam{}, fmt.Errorf("tool %s: %w", td.Name, err)
	}
	tp := sdk.ToolParam{Name: td.Name, InputSchema: param.Override[sdk.ToolInputSchemaParam](schema)}
	if td.Description != "" {
		tp.Description = sdk.String(td.Description)
	}
	return tp, nil
}
