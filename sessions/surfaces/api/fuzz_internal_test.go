package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
)

// The targets below feed the decoders of the API's request bodies, as the
// handlers call them, arbitrary bytes. Beyond not panicking: a refusal is a
// 400 that says what is wrong, and what is accepted re-encodes to a body
// that is accepted again and decodes to the same value.

// refusal fails unless err is a 400 invalid_request with a message.
func refusal(t *testing.T, err error, body []byte) {
	t.Helper()
	var we *web.Error
	if !errors.As(err, &we) || we.Status != 400 || we.Type != "invalid_request" || we.Message == "" {
		t.Fatalf("refusal of %q is %#v, want a 400 invalid_request", body, err)
	}
}

// mustMarshal encodes v, failing the test when it cannot.
func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("re-encode %#v: %v", v, err)
	}
	return b
}

// wireSession is the create body as a client writes it: the agent as
// {id, version}, the form agentRef accepts besides a bare string.
type wireSession struct {
	Agent        *wireAgentRef          `json:"agent"`
	Input        *string                `json:"input"`
	Metadata     map[string]string      `json:"metadata"`
	Environment  string                 `json:"environment"`
	Destinations []core.DestinationSpec `json:"destinations"`
}

type wireAgentRef struct {
	ID      string `json:"id"`
	Version int    `json:"version"`
}

func (b createSessionBody) wire() wireSession {
	w := wireSession{Input: b.Input, Metadata: b.Metadata, Environment: b.Environment, Destinations: b.Destinations}
	if b.Agent != nil {
		w.Agent = &wireAgentRef{ID: b.Agent.ID, Version: b.Agent.Version}
	}
	return w
}

func FuzzSessionCreateBody(f *testing.F) {
	for _, s := range []string{
		`{"agent":"default","input":"hello"}`,
		`{"agent":{"id":"agt_1","version":2},"metadata":{"ticket":"OPS-7"}}`,
		`{"agent":"a","environment":"env_1","destinations":[{"url":"https://example.com/h","level":"user","types":["agent.message"]}]}`,
		`{"agent":"a","destinations":[{"url":"https://example.com/h","secret":"generate"}],"input":null}`,
		`{"agent":{"id":"a","colour":1}}`,
		`{"agent":"a"} {}`,
		``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var b createSessionBody
		if err := web.Decode(body, &b); err != nil {
			refusal(t, err, body)
			return
		}
		if err := checkMetadata(b.Metadata); err != nil {
			refusal(t, err, body)
		}
		again := mustMarshal(t, b.wire())
		var b2 createSessionBody
		if err := web.Decode(again, &b2); err != nil {
			t.Fatalf("%q decodes, its re-encoding %s does not: %v", body, again, err)
		}
		if third := mustMarshal(t, b2.wire()); !bytes.Equal(third, again) {
			t.Fatalf("%q decodes differently once re-encoded:\n%s\n%s", body, again, third)
		}
	})
}

func FuzzAgentBody(f *testing.F) {
	for _, s := range []string{
		`{"name":"reviewer","model":"anthropic/claude-test","system":"Be brief."}`,
		`{"name":"r","model":"openai/gpt","tools":[{"type":"bash"}],"limits":{"max_steps":3},"metadata":{"k":"v"}}`,
		`{"mcp_servers":[{"name":"docs","url":"https://example.com/mcp"}],"version":2}`,
		`{"environment":"env_1","description":null}`,
		`{"name":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var b agentBody
		if err := web.Decode(body, &b); err != nil {
			refusal(t, err, body)
			return
		}
		again := mustMarshal(t, b)
		var b2 agentBody
		if err := web.Decode(again, &b2); err != nil {
			t.Fatalf("%q decodes, its re-encoding %s does not: %v", body, again, err)
		}
		if third := mustMarshal(t, b2); !bytes.Equal(third, again) {
			t.Fatalf("%q decodes differently once re-encoded:\n%s\n%s", body, again, third)
		}
		// What create and update do next must not panic either.
		a := &core.Agent{}
		b.apply(a)
		_ = a.Validate()
	})
}

func FuzzPostedEvents(f *testing.F) {
	for _, s := range []string{
		`{"events":[{"type":"user.message","text":"hi"}]}`,
		`{"events":[{"type":"user.interrupt"},{"type":"user.message","text":"instead, this"}]}`,
		`{"events":[{"type":"user.tool_confirmation","tool_use_id":"toolu_1","result":"deny","message":"no"}]}`,
		`{"events":[{"type":"user.custom_tool_result","tool_use_id":"toolu_1","output":"42","is_error":true}]}`,
		`{"events":[{"type":"user.message","text":"x","result":"allow"}]}`,
		`{"events":[{"type":"user.message","text":"  "}]}`,
		`{"events":[[]]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var b struct {
			Events []json.RawMessage `json:"events"`
		}
		if err := web.Decode(body, &b); err != nil {
			refusal(t, err, body)
			return
		}
		for i, raw := range b.Events {
			typ, logged, err := parseInput(i, raw)
			if err != nil {
				refusal(t, err, raw)
				if !strings.Contains(err.Error(), "events["+strconv.Itoa(i)+"]") {
					t.Fatalf("refusal of %s does not name events[%d]: %v", raw, i, err)
				}
				continue
			}
			if !contains(core.InputTypes, typ) {
				t.Fatalf("%s accepted as %q, not an input type", raw, typ)
			}
			// The logged body, posted back with its type, is the same input.
			var fields map[string]json.RawMessage
			if err := json.Unmarshal(logged, &fields); err != nil {
				t.Fatalf("logged body %s of %s: %v", logged, raw, err)
			}
			fields["type"] = mustMarshal(t, typ)
			typ2, logged2, err := parseInput(i, mustMarshal(t, fields))
			if err != nil || typ2 != typ || !bytes.Equal(logged2, logged) {
				t.Fatalf("%s logged as %s %s; posted back: %s %s %v", raw, typ, logged, typ2, logged2, err)
			}
		}
	})
}

// FuzzLastEventID feeds the SSE resume header's parser (the query's
// after= shares it): an accepted value is a decimal seq written plainly,
// anything else is a 400 naming the header.
func FuzzLastEventID(f *testing.F) {
	for _, s := range []string{"0", "17", "18446744073709551615", "18446744073709551616", "-1", "+1", "0x10", "1_000", " 1", "007", "evt_1", "١٢"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		n, err := parseSeq(id, "Last-Event-ID")
		if err != nil {
			refusal(t, err, []byte(id))
			if !strings.Contains(err.Error(), "Last-Event-ID") {
				t.Fatalf("refusal of %q does not name the header: %v", id, err)
			}
			return
		}
		if id == "" {
			if n != 0 {
				t.Fatalf("empty id parsed as %d", n)
			}
			return
		}
		want := strings.TrimLeft(id, "0")
		if want == "" {
			want = "0"
		}
		if got := strconv.FormatUint(n, 10); got != want || !utf8.ValidString(id) {
			t.Fatalf("%q accepted as seq %d", id, n)
		}
	})
}
