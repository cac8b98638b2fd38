// Package openai owns switchboard's client for the OpenAI Chat Completions
// API and the servers that copy it (Ollama, vLLM, OpenRouter): a core.Model
// built on the official SDK that always streams, converts the neutral core
// messages and tools to chat messages and function tools, and reports
// failures as *core.ModelError.
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/models/internal/modelcall"
	"github.com/switchboardhq/switchboard/core/web"
)

const (
	vendor         = "openai"
	defaultBaseURL = "https://api.openai.com/v1/"
)

// Config configures a Client. Zero values take the defaults.
type Config struct {
	APIKey string
	// BaseURL ends in /v1 (the SDK appends chat/completions).
	BaseURL    string
	HTTPClient *http.Client // nil: a web.APIClient
	// MaxRetries bounds retries of 429, 5xx and connection errors; 0 means 3,
	// a negative value none.
	MaxRetries int
	// DefaultMaxTokens is max_completion_tokens when a request names none.
	// 0 leaves the field out: output ceilings differ between models and
	// servers, and a value above a model's ceiling is refused.
	DefaultMaxTokens int
	// RetryDelay is the first backoff of a stream that failed after it
	// opened (the SDK paces its own retries); 0 means 500ms.
	RetryDelay time.Duration
	Logger     *slog.Logger
}

// Client is a core.Model for openai/<model>.
type Client struct {
	completions sdk.ChatCompletionService
	maxTokens   int
	policy      modelcall.Policy
}

var _ core.Model = (*Client)(nil)

// New returns a client. It reads no environment: what it needs is in cfg.
func New(cfg Config) *Client {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	retries := cfg.MaxRetries
	switch {
	case retries == 0:
		retries = 3
	case retries < 0:
		retries = 0
	}
	base := cfg.BaseURL
	if base == "" {
		base = defaultBaseURL
	}
	// The completions service is built alone, not through sdk.NewClient,
	// so that the SDK does not read OPENAI_* (organization, project,
	// headers) behind cfg's back.
	opts := []option.RequestOption{
		option.WithBaseURL(base),
		option.WithAPIKey(cfg.APIKey),
		option.WithMaxRetries(retries),
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = web.APIClient(0)
	}
	opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	return &Client{
		completions: sdk.NewChatCompletionService(opts...),
		maxTokens:   cfg.DefaultMaxTokens,
		policy:      modelcall.Policy{Vendor: vendor, MaxRetries: retries, BaseDelay: cfg.RetryDelay, Logger: log},
	}
}

// Generate streams one response.
func (c *Client) Generate(ctx context.Context, req core.ModelRequest) (*core.ModelResponse, error) {
	name, err := modelcall.Name(req.Model, vendor)
	if err != nil {
		return nil, err
	}
	params, err := c.params(name, req)
	if err != nil {
		return nil, err
	}
	return c.policy.Do(ctx, func(ctx context.Context, t *modelcall.Tracker) (*core.ModelResponse, error) {
		return c.stream(ctx, params, req.OnText, t)
	}, classify)
}

// call is a tool call being assembled from deltas.
type call struct {
	id, name string
	args     []byte
}

func (c *Client) stream(ctx context.Context, params sdk.ChatCompletionNewParams, onText func(string), t *modelcall.Tracker) (*core.ModelResponse, error) {
	s := c.completions.NewStreaming(ctx, params, option.WithMiddleware(t.Middleware))
	defer s.Close()

	var (
		text   []byte
		calls  []*call             // in order of arrival, the model's order
		open   = map[int64]*call{} // by the index deltas name
		finish string
		usage  core.Usage
	)
	for s.Next() {
		ch := s.Current()
		if ch.JSON.Usage.Valid() {
			usage = chatUsage(ch.Usage)
		}
		for _, choice := range ch.Choices {
			if choice.Index != 0 {
				continue
			}
			d := choice.Delta
			if d.Content != "" {
				text = append(text, d.Content...)
				t.Delivered()
				if onText != nil {
					onText(d.Content)
				}
			}
			for _, tc := range d.ToolCalls {
				cl := open[tc.Index]
				// Some compatible servers repeat index 0 for every call;
				// a new id is a new call.
				if cl == nil || (tc.ID != "" && cl.id != "" && tc.ID != cl.id) {
					cl = &call{}
					open[tc.Index] = cl
					calls = append(calls, cl)
					t.Delivered()
				}
				if tc.ID != "" {
					cl.id = tc.ID
				}
				if tc.Function.Name != "" && cl.name == "" {
					cl.name = tc.Function.Name
				}
				cl.args = append(cl.args, tc.Function.Arguments...)
			}
			if choice.FinishReason != "" {
				finish = choice.FinishReason
			}
		}
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	if finish == "" {
		// A cut connection can look like a clean end of the body.
		return nil, errors.New("openai: stream ended without a finish_reason")
	}
	return response(string(text), calls, finish, usage)
}

func response(text string, calls []*call, finish string, usage core.Usage) (*core.ModelResponse, error) {
	resp := &core.ModelResponse{Stop: stopKind(finish), Usage: usage}
	if text != "" {
		resp.Content = append(resp.Content, core.Block{Type: core.BlockText, Text: text})
	}
	for _, cl := range calls {
		in, ok := modelcall.Input(string(cl.args))
		if !ok {
			if resp.Stop == core.StopMaxTokens {
				continue // cut off mid-arguments; it cannot run
			}
			return nil, fmt.Errorf("openai: tool %s: arguments are not valid json", cl.name)
		}
		resp.Content = append(resp.Content, core.Block{Type: core.BlockToolUse, ToolUseID: cl.id, Name: cl.name, Input: in})
	}
	// Some compatible servers finish tool calls with "stop".
	if resp.Stop == core.StopEnd && len(resp.Content) > 0 && resp.Content[len(resp.Content)-1].Type == core.BlockToolUse {
		resp.Stop = core.StopToolUse
	}
	return resp, nil
}

func stopKind(finish string) core.StopKind {
	switch finish {
	case "tool_calls", "function_call":
		return core.StopToolUse
	case "length":
		return core.StopMaxTokens
	}
	return core.StopEnd
}

// apiError is the error object of an error answer or SSE error event.
type apiError struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    any    `json:"code"`
}

// classify turns an SDK error into a *core.ModelError.
func classify(err error) *core.ModelError {
	var me *core.ModelError
	if errors.As(err, &me) {
		return me
	}
	var ae *sdk.Error
	if errors.As(err, &ae) {
		msg := ae.Message
		if msg == "" {
			msg = http.StatusText(ae.StatusCode)
		}
		return &core.ModelError{Status: ae.StatusCode, Message: msg, Retryable: modelcall.Retryable(ae.StatusCode), Err: err}
	}
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		var body struct {
			Error apiError `json:"error"`
		}
		_ = json.Unmarshal(se.Event.Data, &body)
		status := statusOf(body.Error)
		msg := body.Error.Message
		if msg == "" {
			msg = se.Message
		}
		return &core.ModelError{Status: status, Message: msg, Retryable: modelcall.Retryable(status), Err: err}
	}
	return &core.ModelError{Message: err.Error(), Retryable: true, Err: err}
}

// statusOf guesses the HTTP status of an error sent mid-stream, on a 200.
func statusOf(e apiError) int {
	switch {
	case e.Code == "rate_limit_exceeded" || e.Type == "requests" || e.Type == "rate_limit_error":
		return http.StatusTooManyRequests
	case e.Code == "invalid_api_key":
		return http.StatusUnauthorized
	case e.Type == "invalid_request_error":
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}

// chatUsage normalises OpenAI's counts to core.Usage: prompt_tokens
// include the cached ones, which core.Usage counts apart. OpenAI reports
// no cache writes.
func chatUsage(u sdk.CompletionUsage) core.Usage {
	cached := min(u.PromptTokensDetails.CachedTokens, u.PromptTokens)
	return core.Usage{InputTokens: u.PromptTokens - cached, OutputTokens: u.CompletionTokens, CacheReadInputTokens: cached}
}
