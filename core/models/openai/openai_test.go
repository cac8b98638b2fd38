package openai_test

import (
	"context"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/models/openai"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
	"github.com/switchboardhq/switchboard/fixtures/modelserver/modeltest"
)

func TestConformance(t *testing.T) {
	modeltest.Run(t, func(t testing.TB, baseURL, apiKey string) core.Model {
		return openai.New(openai.Config{APIKey: apiKey, BaseURL: baseURL, RetryDelay: time.Millisecond})
	}, modelserver.FormatOpenAI)
}

// The client must take its configuration from Config alone.
func TestIgnoresEnvironment(t *testing.T) {
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	t.Setenv("OPENAI_ORG_ID", "org-leak")
	t.Setenv("OPENAI_CUSTOM_HEADERS", "X-Leak: yes")
	srv, hs := modelserver.Start(t)
	srv.Push(modelserver.Step{Text: "ok"})
	c := openai.New(openai.Config{APIKey: "k", BaseURL: modelserver.OpenAIBaseURL(hs.URL), DefaultMaxTokens: 77})
	_, err := c.Generate(context.Background(), core.ModelRequest{Model: "openai/m",
		Messages: []core.Message{{Role: core.RoleUser, Content: []core.Block{{Type: core.BlockText, Text: "hi"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	if r.Header.Get("OpenAI-Organization") != "" || r.Header.Get("X-Leak") != "" || r.Header.Get("Authorization") != "Bearer k" {
		t.Errorf("headers = %v", r.Header)
	}
	if r.MaxTokens != 77 {
		t.Errorf("max tokens = %d, want the configured default 77", r.MaxTokens)
	}
}
