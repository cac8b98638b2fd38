package modelcall

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

func TestName(t *testing.T) {
	if n, err := Name("anthropic/claude-x", "anthropic"); err != nil || n != "claude-x" {
		t.Errorf("Name = %q, %v", n, err)
	}
	for _, m := range []string{"openai/gpt", "claude-x", "anthropic/", "x/y"} {
		if _, err := Name(m, "anthropic"); !errors.Is(err, core.ErrInvalid) {
			t.Errorf("Name(%q) err = %v, want ErrInvalid", m, err)
		}
	}
}

func TestSchema(t *testing.T) {
	empty := map[string]any{"type": "object", "properties": map[string]any{}}
	for _, raw := range []string{"", "null", "{}", " "} {
		got, err := Schema(json.RawMessage(raw))
		if err != nil || !reflect.DeepEqual(got, empty) {
			t.Errorf("Schema(%q) = %v, %v", raw, got, err)
		}
	}
	got, err := Schema(json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`))
	if err != nil || got["required"] == nil || got["properties"].(map[string]any)["a"] == nil {
		t.Errorf("Schema kept %v, %v", got, err)
	}
	if _, err := Schema(json.RawMessage(`[1]`)); !errors.Is(err, core.ErrInvalid) {
		t.Errorf("Schema([1]) err = %v, want ErrInvalid", err)
	}
}

func TestInput(t *testing.T) {
	cases := map[string]string{"": "{}", "  ": "{}", `{ "a" : 1 }`: `{"a":1}`}
	for in, want := range cases {
		if got, ok := Input(in); !ok || string(got) != want {
			t.Errorf("Input(%q) = %s, %v", in, got, ok)
		}
	}
	if _, ok := Input(`{"a":`); ok {
		t.Error("Input accepted truncated json")
	}
}

func TestBackoff(t *testing.T) {
	for retry, want := range []time.Duration{100, 200, 400} {
		d := backoff(100*time.Millisecond, retry)
		if w := want * time.Millisecond; d > w || d < w*3/4 {
			t.Errorf("backoff(%d) = %v, want about %v", retry, d, w)
		}
	}
	if d := backoff(time.Second, 20); d > 8*time.Second {
		t.Errorf("backoff is not capped: %v", d)
	}
}
