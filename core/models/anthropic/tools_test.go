package anthropic

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/switchboardhq/switchboard/core"
)

// TestEncodedToolsKept: a tool sent again is its kept encoding, not a new
// one; a definition that differs in any part is encoded anew.
func TestEncodedToolsKept(t *testing.T) {
	c := newEncodedTools(1 << 20)
	td := core.ToolDef{Name: "read", Description: "reads", InputSchema: json.RawMessage(`{"type":"object"}`)}
	first, err := c.encode(td)
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.encode(core.ToolDef{Name: "read", Description: "reads", InputSchema: json.RawMessage(`{"type":"object"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if &again[0] != &first[0] {
		t.Fatal("an equal tool was encoded again")
	}
	for _, other := range []core.ToolDef{
		{Name: "read2", Description: td.Description, InputSchema: td.InputSchema},
		{Name: td.Name, Description: "reads files", InputSchema: td.InputSchema},
		{Name: td.Name, Description: td.Description, InputSchema: json.RawMessage(`{"type":"object","properties":{"p":{"type":"string"}}}`)},
	} {
		raw, err := c.encode(other)
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"input_schema"`
		}
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		if got.Name != other.Name || got.Description != other.Description || !strings.Contains(string(got.InputSchema), `"type":"object"`) {
			t.Fatalf("%+v encoded as %s", other, raw)
		}
		if other.Name == td.Name && other.Description == td.Description && string(raw) == string(first) {
			t.Fatalf("a changed schema kept the old encoding: %s", raw)
		}
	}
}

// TestEncodedToolsRefuseBadSchemas: a schema that is not a JSON object is
// an error the caller sees each time, not an encoding kept.
func TestEncodedToolsRefuseBadSchemas(t *testing.T) {
	c := newEncodedTools(1 << 20)
	for range 2 {
		_, err := c.encode(core.ToolDef{Name: "bad", InputSchema: json.RawMessage(`[1,2]`)})
		if !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), "tool bad") {
			t.Fatalf("err %v, want an invalid schema naming the tool", err)
		}
	}
	if len(c.byDef) != 0 {
		t.Fatalf("%d encodings kept for a refused tool", len(c.byDef))
	}
}

// TestEncodedToolsBounded: the kept encodings stay within their bytes,
// starting afresh when the next would pass them; one larger than the
// whole bound is encoded and not kept.
func TestEncodedToolsBounded(t *testing.T) {
	const limit = 4096
	c := newEncodedTools(limit)
	for i := range 200 {
		if _, err := c.encode(core.ToolDef{Name: "tool_" + strings.Repeat("x", i%7) + string(rune('a'+i%26)), Description: strings.Repeat("d", i)}); err != nil {
			t.Fatal(err)
		}
		if c.total > limit {
			t.Fatalf("after %d tools %d bytes kept, bound %d", i+1, c.total, limit)
		}
	}
	before := len(c.byDef)
	big := core.ToolDef{Name: "big", Description: strings.Repeat("b", 2*limit)}
	raw, err := c.encode(big)
	if err != nil || !strings.Contains(string(raw), `"name":"big"`) {
		t.Fatalf("big tool: %s %v", raw, err)
	}
	if _, kept := c.byDef[toolDef{name: "big", description: big.Description}]; kept || c.total > limit {
		t.Fatalf("a tool larger than the bound was kept (%d bytes)", c.total)
	}
	if len(c.byDef) != before {
		t.Fatalf("a tool larger than the bound pushed out the others: %d kept, %d before", len(c.byDef), before)
	}
}

// BenchmarkToolsInRequest builds the body of a one-message request that
// offers twelve tools, from the kept encodings, and reports it beside the
// same tools decoded and encoded through the SDK for every request, as
// each was before the encodings were kept.
func BenchmarkToolsInRequest(b *testing.B) {
	c := New(Config{APIKey: "k"})
	req := core.ModelRequest{Model: "anthropic/m", Messages: conversation()[:1]}
	for i := range 12 {
		req.Tools = append(req.Tools, core.ToolDef{
			Name:        "mcp_slack_tool_" + strings.Repeat("x", i),
			Description: "Post a message to Slack, in this conversation's thread unless another channel or thread is given.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"The message, in Markdown."},"channel":{"type":"string","description":"A channel id (default: this conversation's channel)."},"thread_ts":{"type":"string"}},"required":["text"]}`),
		})
	}
	measure := func(build func() error) float64 {
		start := time.Now()
		for range b.N {
			if err := build(); err != nil {
				b.Fatal(err)
			}
		}
		return float64(time.Since(start).Nanoseconds()) / float64(b.N)
	}
	b.ResetTimer()
	kept := measure(func() error { _, _, err := c.params("m", req); return err })
	sdkEach := measure(func() error {
		p, _, err := c.params("m", core.ModelRequest{Model: req.Model, Messages: req.Messages})
		if err != nil {
			return err
		}
		for _, td := range req.Tools {
			tp, err := toolParam(td)
			if err != nil {
				return err
			}
			p.Tools = append(p.Tools, sdk.ToolUnionParam{OfTool: &tp})
		}
		_, err = p.MarshalJSON()
		return err
	})
	b.ReportMetric(kept, "ns/request")
	b.ReportMetric(sdkEach, "baseline-ns/request")
}
