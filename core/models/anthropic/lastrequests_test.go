package anthropic

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// followUp is msgs and a step more: an answer and the next input.
func followUp(msgs []core.Message, n int) []core.Message {
	return append(msgs[:len(msgs):len(msgs)],
		core.Message{Role: core.RoleAssistant, Content: []core.Block{{Type: core.BlockText, Text: fmt.Sprintf("answer %d", n)}}},
		core.Message{Role: core.RoleUser, Content: []core.Block{{Type: core.BlockText, Text: fmt.Sprintf("input %d", n)}}},
	)
}

// cloned is msgs with every string and byte slice copied: equal, but
// none of its bytes those of msgs.
func cloned(msgs []core.Message) []core.Message {
	out := make([]core.Message, len(msgs))
	for i, m := range msgs {
		out[i] = core.Message{Role: m.Role}
		for _, b := range m.Content {
			b.Text, b.ToolUseID, b.Name, b.Output, b.MediaType = strings.Clone(b.Text), strings.Clone(b.ToolUseID), strings.Clone(b.Name), strings.Clone(b.Output), strings.Clone(b.MediaType)
			b.Input, b.Data = append(json.RawMessage(nil), b.Input...), append([]byte(nil), b.Data...)
			out[i].Content = append(out[i].Content, b)
		}
	}
	return out
}

// TestConversationSendsWhatItAdds: a request that goes on with its
// conversation takes the messages it repeats, by reference, as the last
// request sent them, and its body is still what the SDK would send.
func TestConversationSendsWhatItAdds(t *testing.T) {
	for _, tc := range []struct {
		name string
		// next is the second request's messages, given the first's.
		next   func([]core.Message) []core.Message
		reused int
	}{
		{"followed up", func(m []core.Message) []core.Message { return followUp(m, 1) }, 5},
		{"the same", func(m []core.Message) []core.Message { return m }, 5},
		{"equal copies", func(m []core.Message) []core.Message { return followUp(cloned(m), 1) }, 0},
		{"shortened", func(m []core.Message) []core.Message { return m[:3] }, 3},
		{"one replaced", func(m []core.Message) []core.Message {
			m = followUp(m, 1)
			m[2] = core.Message{Role: core.RoleUser, Content: []core.Block{{Type: core.BlockText, Text: "resolved again"}}}
			return m
		}, 4},
		{"the last message grown", func(m []core.Message) []core.Message {
			m = slices.Clone(m)
			m[4].Content = append(slices.Clip(m[4].Content), core.Block{Type: core.BlockText, Text: "and c"})
			return m
		}, 4},
		{"a block replaced", func(m []core.Message) []core.Message {
			m = slices.Clone(m)
			m[2].Content = slices.Clone(m[2].Content)
			m[2].Content[1].Output = "package b"
			return m
		}, 4},
		{"another role", func(m []core.Message) []core.Message {
			m[4].Role = core.RoleUser
			return m
		}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := New(Config{APIKey: "k"})
			req := core.ModelRequest{Model: "anthropic/m", Messages: conversation(), Conversation: "sess_1"}
			if got, want := bodyOf(t, c, req), sdkBody(t, req); !reflect.DeepEqual(got, want) {
				t.Fatalf("first request:\n got %v\nwant %v", got, want)
			}
			req.Messages = tc.next(req.Messages)
			before := c.last.reused.Load()
			if got, want := bodyOf(t, c, req), sdkBody(t, req); !reflect.DeepEqual(got, want) {
				t.Fatalf("second request:\n got %v\nwant %v", got, want)
			}
			if got := c.last.reused.Load() - before; got != int64(tc.reused) {
				t.Fatalf("took %d messages as sent, want %d", got, tc.reused)
			}
		})
	}
}

// TestConversationsApart: requests of another conversation, or of none,
// take nothing from a conversation's last request.
func TestConversationsApart(t *testing.T) {
	c := New(Config{APIKey: "k"})
	msgs := conversation()
	bodyOf(t, c, core.ModelRequest{Model: "anthropic/m", Messages: msgs, Conversation: "sess_1"})
	for _, name := range []string{"sess_2", ""} {
		req := core.ModelRequest{Model: "anthropic/m", Messages: followUp(msgs, 1), Conversation: name}
		if got, want := bodyOf(t, c, req), sdkBody(t, req); !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\n got %v\nwant %v", name, got, want)
		}
		if n := c.last.reused.Load(); n != 0 {
			t.Fatalf("%q took %d messages of another conversation", name, n)
		}
	}
	if c.last.lru.Len() != 2 {
		t.Fatalf("keeps %d conversations, want the 2 named", c.last.lru.Len())
	}
}

// TestLastRequestsBounded: the kept requests stay within their count and
// their bytes, and what they hold past a request's end is let go.
func TestLastRequestsBounded(t *testing.T) {
	l := newLastRequests(4, 8<<10)
	enc := newEncodedMessages(1 << 20)
	for i := range 100 {
		msgs := []core.Message{{Role: core.RoleUser, Content: []core.Block{{Type: core.BlockText, Text: strings.Repeat("x", i*10)}}}}
		if _, err := l.encodeAll(fmt.Sprintf("sess_%d", i%10), msgs, enc); err != nil {
			t.Fatal(err)
		}
		if l.lru.Len() > l.max || l.bytes > l.maxBytes || l.lru.Len() != len(l.byName) {
			t.Fatalf("keeps %d requests (%d names) of %d bytes; bounds %d, %d", l.lru.Len(), len(l.byName), l.bytes, l.max, l.maxBytes)
		}
	}

	long := followUp(followUp(conversation(), 1), 2)
	if _, err := l.encodeAll("sess_long", long, enc); err != nil {
		t.Fatal(err)
	}
	if _, err := l.encodeAll("sess_long", long[:2], enc); err != nil {
		t.Fatal(err)
	}
	r := l.take("sess_long")
	for _, m := range r.msgs[len(r.msgs):cap(r.msgs)] {
		if m.Content != nil {
			t.Fatal("a shortened request still holds the blocks past its end")
		}
	}
	for _, raw := range r.raw[len(r.raw):cap(r.raw)] {
		if raw != nil {
			t.Fatal("a shortened request still holds the encodings past its end")
		}
	}
}

// TestConversationRefusesWhatTheAPIRefuses: a message that cannot be
// encoded fails the request, with its index, and leaves nothing kept
// under the conversation's name.
func TestConversationRefusesWhatTheAPIRefuses(t *testing.T) {
	c := New(Config{APIKey: "k"})
	msgs := append(conversation(), core.Message{Role: core.RoleAssistant, Content: []core.Block{{Type: core.BlockToolUse, ToolUseID: "c2", Name: "read", Input: json.RawMessage(`{not json`)}}})
	_, _, err := c.params("m", core.ModelRequest{Messages: msgs, Conversation: "sess_1"})
	if err == nil || !strings.Contains(err.Error(), "message 5") {
		t.Fatalf("err = %v, want one naming message 5", err)
	}
	if c.last.take("sess_1") != nil {
		t.Fatal("a refused request was kept")
	}
}
