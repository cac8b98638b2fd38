// Package models owns the choice of model client: a Router that sends each
// request to the Anthropic or OpenAI client by the vendor prefix of its
// model, and FromEnv, which builds the clients whose keys are configured.
// The clients themselves live in models/anthropic and models/openai.
package models

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/models/anthropic"
	"github.com/switchboardhq/switchboard/core/models/openai"
)

// Router is a core.Model that dispatches on the model's vendor prefix. A
// nil client means that vendor is not configured.
type Router struct {
	Anthropic core.Model
	OpenAI    core.Model
}

var _ core.Model = (*Router)(nil)

// Generate sends req to the client of its vendor.
func (r *Router) Generate(ctx context.Context, req core.ModelRequest) (*core.ModelResponse, error) {
	m, err := r.For(req.Model)
	if err != nil {
		return nil, err
	}
	return m.Generate(ctx, req)
}

// For returns the client that serves model, or an error wrapping
// core.ErrInvalid (a malformed model) or core.ErrModelNotConfigured (no
// client; the message names the variable to set).
func (r *Router) For(model string) (core.Model, error) {
	p, _, err := core.SplitModel(model)
	if err != nil {
		return nil, err
	}
	var m core.Model
	var key string
	switch p {
	case "anthropic":
		m, key = r.Anthropic, "ANTHROPIC_API_KEY"
	case "openai":
		m, key = r.OpenAI, "OPENAI_API_KEY (or OPENAI_BASE_URL for a keyless OpenAI-compatible server)"
	}
	if m == nil {
		return nil, fmt.Errorf("model %q: set %s: %w", model, key, core.ErrModelNotConfigured)
	}
	return m, nil
}

// Check says whether a client serves model: nil, or the error of For,
// which names the variable to set.
func (r *Router) Check(model string) error {
	_, err := r.For(model)
	return err
}

// FromEnv builds a client for each vendor whose key variable is set
// (ANTHROPIC_API_KEY, OPENAI_API_KEY), with the matching *_BASE_URL when set.
// OPENAI_BASE_URL alone is enough for OpenAI-compatible servers that need
// no key (Ollama, vLLM).
func FromEnv(getenv func(string) string, logger *slog.Logger) *Router {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	r := &Router{}
	if key := getenv("ANTHROPIC_API_KEY"); key != "" {
		r.Anthropic = anthropic.New(anthropic.Config{
			APIKey:  key,
			BaseURL: getenv("ANTHROPIC_BASE_URL"),
			Logger:  logger,
		})
	}
	if key, base := getenv("OPENAI_API_KEY"), getenv("OPENAI_BASE_URL"); key != "" || base != "" {
		r.OpenAI = openai.New(openai.Config{
			APIKey:  key,
			BaseURL: base,
			Logger:  logger,
		})
	}
	return r
}

// WithNote adds note to the system prompt of every request to m.
func WithNote(m core.Model, note string) core.Model { return noted{Model: m, note: note} }

type noted struct {
	core.Model
	note string
}

func (m noted) Generate(ctx context.Context, req core.ModelRequest) (*core.ModelResponse, error) {
	if req.System == "" {
		req.System = m.note
	} else {
		req.System += "\n\n" + m.note
	}
	return m.Model.Generate(ctx, req)
}
