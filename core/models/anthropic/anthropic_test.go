package anthropic_test

import (
	"context"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/models/anthropic"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
	"github.com/switchboardhq/switchboard/fixtures/modelserver/modeltest"
)

func TestConformance(t *testing.T) {
	modeltest.Run(t, func(t testing.TB, baseURL, apiKey string) core.Model {
		return anthropic.New(anthropic.Config{APIKey: apiKey, BaseURL: baseURL, RetryDelay: time.Millisecond})
	}, modelserver.FormatAnthropic)
}

// The client must take its configuration from Config alone: ambient
// ANTHROPIC_* variables would point it elsewhere or add credentials.
func TestIgnoresEnvironment(t *testing.T) {
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "leaked")
	t.Setenv("ANTHROPIC_CUSTOM_HEADERS", "X-Leak: yes")
	srv, hs := modelserver.Start(t)
	srv.Push(modelserver.Step{Text: "ok"})
	c := anthropic.New(anthropic.Config{APIKey: "k", BaseURL: modelserver.AnthropicBaseURL(hs.URL)})
	_, err := c.Generate(context.Background(), core.ModelRequest{Model: "anthropic/m",
		Messages: []core.Message{{Role: core.RoleUser, Content: []core.Block{{Type: core.BlockText, Text: "hi"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	h := srv.Requests()[0].Header
	if h.Get("Authorization") != "" || h.Get("X-Leak") != "" || h.Get("X-Api-Key") != "k" {
		t.Errorf("headers = %v", h)
	}
}
