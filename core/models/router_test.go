package models_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/models"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestNotConfigured(t *testing.T) {
	r := models.FromEnv(env(nil), nil)
	if r.Anthropic != nil || r.OpenAI != nil {
		t.Fatalf("clients built without keys: %+v", r)
	}
	for model, variable := range map[string]string{"anthropic/claude-x": "ANTHROPIC_API_KEY", "openai/gpt-x": "OPENAI_API_KEY"} {
		_, err := r.Generate(context.Background(), core.ModelRequest{Model: model})
		if !errors.Is(err, core.ErrModelNotConfigured) || !strings.Contains(err.Error(), variable) {
			t.Errorf("%s: err = %v, want ErrModelNotConfigured naming %s", model, err, variable)
		}
	}
	if _, err := r.Generate(context.Background(), core.ModelRequest{Model: "claude-x"}); !errors.Is(err, core.ErrInvalid) {
		t.Errorf("no prefix: err = %v, want ErrInvalid", err)
	}
}

func TestFromEnvDispatches(t *testing.T) {
	srv, hs := modelserver.Start(t)
	srv.APIKey = "sk-test"
	srv.Default = func(req modelserver.Request) modelserver.Step { return modelserver.Step{Text: req.Format} }
	r := models.FromEnv(env(map[string]string{
		"ANTHROPIC_API_KEY":  "sk-test",
		"ANTHROPIC_BASE_URL": modelserver.AnthropicBaseURL(hs.URL),
		"OPENAI_API_KEY":     "sk-test",
		"OPENAI_BASE_URL":    modelserver.OpenAIBaseURL(hs.URL),
	}), nil)
	for _, p := range []string{"anthropic", "openai"} {
		resp, err := r.Generate(context.Background(), core.ModelRequest{Model: p + "/m",
			Messages: []core.Message{{Role: core.RoleUser, Content: []core.Block{{Type: core.BlockText, Text: "hi"}}}}})
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if len(resp.Content) != 1 || resp.Content[0].Text != p {
			t.Errorf("%s: answered by %+v", p, resp.Content)
		}
	}
}
