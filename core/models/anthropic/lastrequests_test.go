package anthropic

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

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

// sendIn sends msgs in the conversation name of l, with no tools or
// parameters, and keeps the request as sent whole (sent) or not.
func sendIn(t testing.TB, l *lastRequests, enc *encodedMessages, name string, msgs []core.Message, sent bool) *lastRequest {
	t.Helper()
	r, err := l.encodeAll(name, msgs, enc)
	if err != nil {
		t.Fatal(err)
	}
	r.build(nil, nil)
	body := r.body
	l.keep(r, sent)
	r.body = body
	return r
}

// TestLastRequestsBounded: the kept requests stay within their count and
// their bytes, and what they hold past a request's end is let go.
func TestLastRequestsBounded(t *testing.T) {
	l := newLastRequests(4, 8<<10)
	enc := newEncodedMessages(1 << 20)
	for i := range 100 {
		msgs := []core.Message{{Role: core.RoleUser, Content: []core.Block{{Type: core.BlockText, Text: strings.Repeat("x", i*10)}}}}
		sendIn(t, l, enc, fmt.Sprintf("sess_%d", i%10), msgs, true)
		if l.lru.Len() > l.max || l.bytes > l.maxBytes || l.lru.Len() != len(l.byName) {
			t.Fatalf("keeps %d requests (%d names) of %d bytes; bounds %d, %d", l.lru.Len(), len(l.byName), l.bytes, l.max, l.maxBytes)
		}
	}

	long := followUp(followUp(conversation(), 1), 2)
	sendIn(t, l, enc, "sess_long", long, true)
	sendIn(t, l, enc, "sess_long", long[:2], true)
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

// TestBodyBuiltOnTheLastSent: a request that goes on with its
// conversation writes its body in the array of the last one sent, after
// the messages it repeats; after a request not sent whole (the transport
// may still read its body) or one that changes an early message, it
// builds in a new array. Every body says what the SDK would send.
func TestBodyBuiltOnTheLastSent(t *testing.T) {
	l := newLastRequests(4, 1<<20)
	enc := newEncodedMessages(1 << 20)
	send := func(msgs []core.Message, sent bool) *lastRequest {
		t.Helper()
		r := sendIn(t, l, enc, "sess_1", msgs, sent)
		var got map[string]any
		if err := json.Unmarshal(r.body, &got); err != nil {
			t.Fatalf("body is not json: %v\n%s", err, r.body)
		}
		want := sdkBody(t, core.ModelRequest{Messages: msgs})
		// Built with no parameters, the body has none of the SDK's.
		delete(want, "model")
		delete(want, "max_tokens")
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("body:\n got %v\nwant %v", got, want)
		}
		return r
	}
	msgs := conversation()
	// A long first message leaves the array room for a step more.
	msgs[0] = core.Message{Role: core.RoleUser, Content: []core.Block{{Type: core.BlockText, Text: strings.Repeat("look at this ", 100)}}}
	first := send(msgs, true)
	grown := followUp(msgs, 1)
	second := send(grown, false)
	if &second.body[0] != &first.body[0] || second.same != len(msgs) {
		t.Fatalf("a follow-up was built in a new array (repeating %d messages), not on the last body", second.same)
	}
	third := send(followUp(grown, 2), true)
	if &third.body[0] == &second.body[0] {
		t.Fatal("a request was built on a body not sent whole")
	}
	changed := slices.Clone(followUp(grown, 2))
	changed[0] = core.Message{Role: core.RoleUser, Content: []core.Block{{Type: core.BlockText, Text: "a new start"}}}
	if fourth := send(changed, true); fourth.same != 0 {
		t.Fatalf("repeats %d leading messages after the first changed", fourth.same)
	}
	// Shorter than the last: built on its first messages, the rest
	// written over.
	if fifth := send(changed[:3], true); fifth.same != 3 {
		t.Fatalf("repeats %d leading messages of a shortened request, want 3", fifth.same)
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

// BenchmarkFollowUpRequest builds the body of a request that goes on with
// a conversation of 3,334 messages (what a 10,000-event log derives) by
// an answer and an input, and reports it beside the same request with no
// conversation named: its every message found among the kept encodings
// by its hash and its body built afresh, as each was before
// conversations were kept.
func BenchmarkFollowUpRequest(b *testing.B) {
	const long = 3334
	history := make([]core.Message, 0, long)
	for i := range long {
		role := core.RoleUser
		if i%2 == 1 {
			role = core.RoleAssistant
		}
		history = append(history, core.Message{Role: role, Content: []core.Block{{Type: core.BlockText, Text: fmt.Sprintf("message %d: %s", i, strings.Repeat("words ", 40))}}})
	}
	c := New(Config{APIKey: "k"})
	measure := func(conversation string) float64 {
		req := core.ModelRequest{Model: "anthropic/m", Messages: history, Conversation: conversation}
		if _, _, err := c.params("m", req); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		for n := range b.N {
			req.Messages = followUp(history[:long-2], n)
			_, r, err := c.params("m", req)
			if err != nil {
				b.Fatal(err)
			}
			c.last.keep(r, true)
		}
		return float64(time.Since(start).Nanoseconds()) / float64(b.N)
	}
	b.ResetTimer()
	b.ReportMetric(measure("sess_bench"), "ns/request")
	b.ReportMetric(measure(""), "baseline-ns/request")
}
