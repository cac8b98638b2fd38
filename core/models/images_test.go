package models

import (
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core/settings"
)

func TestLoadImages(t *testing.T) {
	env := func(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }
	for _, tt := range []struct {
		name     string
		setting  string
		env      map[string]string
		accepted []string
		refused  []string
		err      string
	}{
		{"default", "", nil, []string{"anthropic/claude-x", "openai/gpt-x"}, nil, ""},
		{"a custom Anthropic base URL", "", map[string]string{"ANTHROPIC_BASE_URL": "http://localhost:1"}, []string{"openai/gpt-x"}, []string{"anthropic/claude-x"}, ""},
		{"a custom OpenAI base URL", "", map[string]string{"OPENAI_BASE_URL": "http://ollama:11434/v1"}, []string{"anthropic/claude-x"}, []string{"openai/llama3"}, ""},
		{"listed", "openai/llava, anthropic/*", map[string]string{"OPENAI_BASE_URL": "http://ollama:11434/v1", "ANTHROPIC_BASE_URL": "http://x"}, []string{"openai/llava", "anthropic/claude-x"}, []string{"openai/llama3"}, ""},
		{"every model", "*", nil, []string{"openai/x", "anthropic/y"}, nil, ""},
		{"none", "none", nil, nil, []string{"anthropic/claude-x", "openai/gpt-x"}, ""},
		{"an unknown vendor", "mistral/*", nil, nil, nil, `"mistral/*": want vendor/model`},
		{"no model", "openai", nil, nil, nil, `"openai": want vendor/model`},
		{"a bad pattern", "openai/[", nil, nil, nil, `"openai/["`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			im, err := LoadImages(settings.Values{"SWITCHBOARD_MODEL_IMAGES": tt.setting}, env(tt.env))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), "SWITCHBOARD_MODEL_IMAGES") {
					t.Fatalf("err = %v, want one naming the variable and %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range tt.accepted {
				if !im.Accept(m) {
					t.Errorf("%s is not given images", m)
				}
			}
			for _, m := range tt.refused {
				if im.Accept(m) {
					t.Errorf("%s is given images", m)
				}
			}
		})
	}
}
