package anthropic

import (
	"encoding/json"
	"reflect"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/switchboardhq/switchboard/core"
)

func conversation() []core.Message {
	return []core.Message{
		{Role: core.RoleUser, Content: []core.Block{{Type: core.BlockText, Text: "look at <this> & that"}}},
		{Role: core.RoleAssistant, Content: []core.Block{
			{Type: core.BlockText, Text: "reading"},
			{Type: core.BlockToolUse, ToolUseID: "c1", Name: "read", Input: json.RawMessage(`{"path": "a.go"}`)},
		}},
		{Role: core.RoleUser, Content: []core.Block{
			{Type: core.BlockText, Text: "also b"},
			{Type: core.BlockToolResult, ToolUseID: "c1", Output: "package a", IsError: true},
			{Type: core.BlockImage, MediaType: "image/png", Data: []byte{1, 2, 3}},
		}},
		{Role: core.RoleAssistant, Content: []core.Block{{Type: core.BlockText}}}, // left out
		{Role: core.RoleAssistant, Content: []core.Block{{Type: core.BlockText, Text: "done"}}},
	}
}

// TestRequestBodyAsTheSDKs: the body built from kept encodings (messages
// and tools) says what the SDK's encoding of the whole request says.
func TestRequestBodyAsTheSDKs(t *testing.T) {
	c := New(Config{APIKey: "k"})
	req := core.ModelRequest{Model: "anthropic/m", System: "be brief", Messages: conversation(),
		Tools: []core.ToolDef{
			{Name: "read", Description: "reads", InputSchema: json.RawMessage(`{"type":"object"}`)},
			{Name: "write", InputSchema: json.RawMessage(`{"properties":{"path":{"type":"string"}},"required":["path"]}`)},
			{Name: "now"},
		}}
	for round := range 2 { // the second from the kept encodings
		if got, want := bodyOf(t, c, req), sdkBody(t, req); !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d:\n got %v\nwant %v", round, got, want)
		}
	}
}

// bodyOf is the body c sends for req, decoded; the request is then kept
// as sent whole, as Generate keeps one the API answered.
func bodyOf(t *testing.T, c *Client, req core.ModelRequest) map[string]any {
	t.Helper()
	_, r, err := c.params("m", req)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(r.body, &got); err != nil {
		t.Fatalf("body is not json: %v\n%s", err, r.body)
	}
	c.last.keep(r, true)
	return got
}

// sdkBody is the SDK's own encoding of req as a stream, decoded.
func sdkBody(t *testing.T, req core.ModelRequest) map[string]any {
	t.Helper()
	p := sdk.MessageNewParams{Model: "m", MaxTokens: 8192}
	if req.System != "" {
		p.System = []sdk.TextBlockParam{{Text: req.System}}
	}
	for _, m := range req.Messages {
		mp, err := message(m)
		if err != nil {
			t.Fatal(err)
		}
		if len(mp.Content) > 0 {
			p.Messages = append(p.Messages, mp)
		}
	}
	for _, td := range req.Tools {
		tp, err := toolParam(td)
		if err != nil {
			t.Fatal(err)
		}
		p.Tools = append(p.Tools, sdk.ToolUnionParam{OfTool: &tp})
	}
	whole, err := p.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	if err := json.Unmarshal(whole, &want); err != nil {
		t.Fatal(err)
	}
	want["stream"] = true
	return want
}

// TestEncodedMessagesKept: a message sent again, as an equal copy, is not
// encoded again; one that differs in any field the API reads is.
func TestEncodedMessagesKept(t *testing.T) {
	c := newEncodedMessages(1 << 20)
	msgs := conversation()
	first, err := c.encode(msgs[2])
	if err != nil {
		t.Fatal(err)
	}
	again, _ := c.encode(conversation()[2])
	if &again[0] != &first[0] {
		t.Fatal("an equal message was encoded again")
	}
	for name, change := range map[string]func(b *core.Block){
		"text":     func(b *core.Block) { b.Text = "also c" },
		"is_error": func(b *core.Block) { b.IsError = false },
		"data":     func(b *core.Block) { b.Data = []byte{1, 2, 4} },
	} {
		m := conversation()[2]
		for i := range m.Content {
			change(&m.Content[i])
		}
		other, err := c.encode(m)
		if err != nil {
			t.Fatal(err)
		}
		if string(other) == string(first) {
			t.Fatalf("%s changed, the encoding did not", name)
		}
	}
	if c.total > c.max {
		t.Fatalf("keeps %d bytes, bound %d", c.total, c.max)
	}
}

// TestEncodedMessagesBounded: the kept encodings stay within their bound.
func TestEncodedMessagesBounded(t *testing.T) {
	c := newEncodedMessages(4 << 10)
	for i := range 1000 {
		m := core.Message{Role: core.RoleUser, Content: []core.Block{{Type: core.BlockText, Text: string(rune('a'+i%26)) + string(make([]byte, i%50))}}}
		if _, err := c.encode(m); err != nil {
			t.Fatal(err)
		}
	}
	if c.total > c.max || c.lru.Len() != len(c.byKey) {
		t.Fatalf("keeps %d bytes in %d entries (%d keys), bound %d", c.total, c.lru.Len(), len(c.byKey), c.max)
	}
}

// TestEncodedMessagesKeepOnlyTheirEncoding: an entry holds and counts its
// encoding, not the message (an image's bytes are held once, base64).
func TestEncodedMessagesKeepOnlyTheirEncoding(t *testing.T) {
	c := newEncodedMessages(1 << 20)
	img := make([]byte, 100<<10)
	m := core.Message{Role: core.RoleUser, Content: []core.Block{{Type: core.BlockImage, MediaType: "image/png", Data: img}}}
	raw, err := c.encode(m)
	if err != nil {
		t.Fatal(err)
	}
	if c.total != len(raw)+entryOverhead || c.total >= len(raw)+len(img) {
		t.Fatalf("counts %d bytes for an entry of %d bytes of encoding (image %d)", c.total, len(raw), len(img))
	}
}

// TestEncodedMessagesCheckTheShape: an entry under a message's key but of
// another shape is not its encoding.
func TestEncodedMessagesCheckTheShape(t *testing.T) {
	c := newEncodedMessages(1 << 20)
	m := conversation()[2]
	key, shape := c.hash(m)
	for name, other := range map[string]messageShape{
		"role":   {role: core.RoleAssistant, blocks: shape.blocks, bytes: shape.bytes},
		"blocks": {role: shape.role, blocks: shape.blocks + 1, bytes: shape.bytes},
		"bytes":  {role: shape.role, blocks: shape.blocks, bytes: shape.bytes - 1},
	} {
		c.put(&encodedMessage{key: key, shape: other, raw: []byte(`"stale"`)})
		got, err := c.encode(m)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) == `"stale"` {
			t.Fatalf("%s: an entry of another shape answered", name)
		}
	}
}
