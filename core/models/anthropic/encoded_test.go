package anthropic

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// encode is encodeAll of one message.
func (c *encodedMessages) encode(m core.Message) ([]byte, error) {
	raw, err := c.encodeAll([]core.Message{m})
	if err != nil {
		return nil, err
	}
	return raw[0], nil
}

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

// TestRequestBodyAsTheSDKs: the body built from kept encodings says what
// the SDK's encoding of the whole request says.
func TestRequestBodyAsTheSDKs(t *testing.T) {
	c := New(Config{APIKey: "k"})
	req := core.ModelRequest{Model: "anthropic/m", System: "be brief", Messages: conversation(),
		Tools: []core.ToolDef{{Name: "read", Description: "reads", InputSchema: json.RawMessage(`{"type":"object"}`)}}}
	for round := range 2 { // the second from the kept encodings
		p, body, err := c.params("m", req)
		if err != nil {
			t.Fatal(err)
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
		whole, err := p.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var got, want map[string]any
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatalf("round %d: body is not json: %v\n%s", round, err, body)
		}
		if err := json.Unmarshal(whole, &want); err != nil {
			t.Fatal(err)
		}
		want["stream"] = true
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d:\n got %s\nwant %s", round, body, whole)
		}
	}
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

// TestEncodedMessagesByPlace: the same message sent again is found where
// it is; bytes written in place (a tool input) are encoded again, and a
// copy found by what it says is found where the copy is from then on.
func TestEncodedMessagesByPlace(t *testing.T) {
	c := newEncodedMessages(1 << 20)
	m := conversation()[1]
	first, err := c.encode(m)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := c.encode(m); &again[0] != &first[0] || c.hashed != 1 {
		t.Fatalf("the same message sent again was hashed or encoded again (%d hashes)", c.hashed)
	}
	// An equal copy, its strings elsewhere (literals share theirs).
	fresh := conversation()[1]
	for i := range fresh.Content {
		b := &fresh.Content[i]
		b.Text, b.ToolUseID, b.Name = strings.Clone(b.Text), strings.Clone(b.ToolUseID), strings.Clone(b.Name)
	}
	byContent, _ := c.encode(fresh)
	if &byContent[0] != &first[0] {
		t.Fatal("an equal copy was encoded again")
	}
	if el, ok := c.byPlace[c.place(fresh)]; !ok || &el.Value.(*encodedMessage).msg.Content[1].Input[0] != &fresh.Content[1].Input[0] || c.hashed != 2 {
		t.Fatal("an equal copy found by content is not found where it is")
	}
	copy(fresh.Content[1].Input, `{"path": "b.go"}`)
	changed, err := c.encode(fresh)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(changed), "b.go") {
		t.Fatalf("an input written in place kept its old encoding: %s", changed)
	}
	if c.lru.Len() != len(c.byPlace) || c.lru.Len() != len(c.byKey) {
		t.Fatalf("%d entries, %d places, %d keys", c.lru.Len(), len(c.byPlace), len(c.byKey))
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
	if c.total > c.max || c.lru.Len() != len(c.byKey) || c.lru.Len() != len(c.byPlace) {
		t.Fatalf("keeps %d bytes in %d entries (%d keys, %d places), bound %d", c.total, c.lru.Len(), len(c.byKey), len(c.byPlace), c.max)
	}
}

// TestEncodedMessagesCountWhatTheyKeep: an entry counts the message it
// keeps to compare against, not only its encoding: an image's bytes are
// held twice, once as data and once base64-encoded.
func TestEncodedMessagesCountWhatTheyKeep(t *testing.T) {
	c := newEncodedMessages(1 << 20)
	img := make([]byte, 100<<10)
	m := core.Message{Role: core.RoleUser, Content: []core.Block{{Type: core.BlockImage, MediaType: "image/png", Data: img}}}
	raw, err := c.encode(m)
	if err != nil {
		t.Fatal(err)
	}
	if c.total < len(raw)+len(img) {
		t.Fatalf("counts %d bytes for an entry holding %d of encoding and %d of image", c.total, len(raw), len(img))
	}
}

// BenchmarkParamsLongConversation builds the request of a conversation of
// 3,334 messages (a log of 10,000 events), sent again with one message
// more, as each step of a turn does: what a request costs on top of what
// is new.
func BenchmarkParamsLongConversation(b *testing.B) {
	c := New(Config{APIKey: "k"})
	var msgs []core.Message
	for i := range 3334 {
		role := core.RoleUser
		if i%2 == 1 {
			role = core.RoleAssistant
		}
		msgs = append(msgs, core.Message{Role: role, Content: []core.Block{{Type: core.BlockText, Text: strings.Repeat("lorem ipsum ", 16) + strconv.Itoa(i)}}})
	}
	req := core.ModelRequest{Model: "anthropic/m", System: "be brief", Messages: msgs}
	if _, _, err := c.params("m", req); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := c.params("m", req); err != nil {
			b.Fatal(err)
		}
	}
}
