// Package anthropic owns switchboard's client for the Anthropic Messages
// API: a core.Model built on the official SDK that always streams, converts
// the neutral core messages and tools to Anthropic's wire form, and reports
// failures as *core.ModelError.
package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/models/internal/modelcall"
	"github.com/switchboardhq/switchboard/core/web"
)

const vendor = "anthropic"

// encodedBytes bounds the messages a client keeps encoded: the histories
// of the conversations it serves most, about 1 MB a 10,000-turn one.
const encodedBytes = 32 << 20

// lastRequestBytes and lastRequestCount bound the conversations a client
// keeps the last request of: about as many as a gateway runs turns at
// once and then some, each as long as its history.
const (
	lastRequestBytes = 64 << 20
	lastRequestCount = 256
)

// toolBytes bounds the tool definitions a client keeps encoded: a few
// hundred tools of a few kilobytes each.
const toolBytes = 4 << 20

// Config configures a Client. Zero values take the defaults.
type Config struct {
	APIKey string
	// BaseURL is the API root, without /v1 (the SDK appends v1/messages).
	BaseURL    string
	HTTPClient *http.Client // nil: a web.APIClient
	// MaxRetries bounds retries of 429, 5xx and connection errors; 0 means 3,
	// a negative value none.
	MaxRetries int
	// DefaultMaxTokens is max_tokens when a request names none; 0 means 8192.
	DefaultMaxTokens int
	// RetryDelay is the first backoff of a stream that failed after it
	// opened (the SDK paces its own retries); 0 means 500ms.
	RetryDelay time.Duration
	Logger     *slog.Logger
}

// Client is a core.Model for anthropic/<model>.
type Client struct {
	messages  sdk.MessageService
	encoded   *encodedMessages
	last      *lastRequests
	tools     *encodedTools
	maxTokens int
	policy    modelcall.Policy
	log       *slog.Logger
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
	maxTokens := cfg.DefaultMaxTokens
	if maxTokens <= 0 {
		maxTokens = 8192
	}
	// WithoutEnvironmentDefaults keeps the SDK from reading ANTHROPIC_* and
	// profile files on its own: configuration comes through cfg only.
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithAPIKey(cfg.APIKey),
		option.WithMaxRetries(retries),
	}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = web.APIClient(0)
	}
	opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	c := sdk.NewClient(opts...)
	return &Client{
		messages:  c.Messages,
		encoded:   newEncodedMessages(encodedBytes),
		last:      newLastRequests(lastRequestCount, lastRequestBytes),
		tools:     newEncodedTools(toolBytes),
		maxTokens: maxTokens,
		log:       log,
		policy:    modelcall.Policy{Vendor: vendor, MaxRetries: retries, BaseDelay: cfg.RetryDelay, Logger: log},
	}
}

// Generate streams one response.
func (c *Client) Generate(ctx context.Context, req core.ModelRequest) (*core.ModelResponse, error) {
	name, err := modelcall.Name(req.Model, vendor)
	if err != nil {
		return nil, err
	}
	params, r, err := c.params(name, req)
	if err != nil {
		return nil, err
	}
	resp, err := c.policy.Do(ctx, func(ctx context.Context, t *modelcall.Tracker) (*core.ModelResponse, error) {
		return c.stream(ctx, params, r.body, req.OnText, t)
	}, classify)
	// Only a whole answer says the API read the whole body and the
	// transport is done with it: only then may the next request of the
	// conversation write into it.
	c.last.keep(r, err == nil)
	return resp, err
}

// block is a content block being assembled from deltas.
type block struct {
	typ      string
	text     string
	id, name string
	input    []byte
}

// stream sends body, the request params stands for (the SDK's own
// encoding of it is only params' small part: the messages come encoded).
func (c *Client) stream(ctx context.Context, params sdk.MessageNewParams, body []byte, onText func(string), t *modelcall.Tracker) (*core.ModelResponse, error) {
	s := c.messages.NewStreaming(ctx, params, option.WithMiddleware(t.Middleware), option.WithRequestBody("application/json", body))
	defer s.Close()

	var (
		blocks  []*block
		byIndex = map[int64]*block{}
		stop    sdk.StopReason
		usage   core.Usage
		ended   bool
	)
	for s.Next() {
		ev := s.Current()
		switch ev.Type {
		case "message_start":
			u := ev.Message.Usage
			usage = core.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
				CacheReadInputTokens: u.CacheReadInputTokens, CacheCreationInputTokens: u.CacheCreationInputTokens}
		case "content_block_start":
			cb := ev.ContentBlock
			b := &block{typ: cb.Type, text: cb.Text, id: cb.ID, name: cb.Name}
			byIndex[ev.Index] = b
			blocks = append(blocks, b)
			if b.typ == "tool_use" {
				t.Delivered()
			}
			if b.typ == "text" && b.text != "" {
				t.Delivered()
				if onText != nil {
					onText(b.text)
				}
			}
		case "content_block_delta":
			b := byIndex[ev.Index]
			if b == nil {
				return nil, fmt.Errorf("anthropic: delta for unknown content block %d", ev.Index)
			}
			switch ev.Delta.Type {
			case "text_delta":
				b.text += ev.Delta.Text
				t.Delivered()
				if onText != nil && ev.Delta.Text != "" {
					onText(ev.Delta.Text)
				}
			case "input_json_delta":
				b.input = append(b.input, ev.Delta.PartialJSON...)
			}
		case "message_delta":
			stop = ev.Delta.StopReason
			// message_delta counts are cumulative totals for the message.
			if ev.Usage.JSON.OutputTokens.Valid() {
				usage.OutputTokens = ev.Usage.OutputTokens
			}
			if ev.Usage.JSON.InputTokens.Valid() && ev.Usage.InputTokens > 0 {
				usage.InputTokens = ev.Usage.InputTokens
			}
			if ev.Usage.JSON.CacheReadInputTokens.Valid() && ev.Usage.CacheReadInputTokens > 0 {
				usage.CacheReadInputTokens = ev.Usage.CacheReadInputTokens
			}
			if ev.Usage.JSON.CacheCreationInputTokens.Valid() && ev.Usage.CacheCreationInputTokens > 0 {
				usage.CacheCreationInputTokens = ev.Usage.CacheCreationInputTokens
			}
		case "message_stop":
			ended = true
		}
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	if !ended {
		// A cut connection can look like a clean end of the body.
		return nil, errors.New("anthropic: stream ended before message_stop")
	}
	return c.response(blocks, stop, usage)
}

func (c *Client) response(blocks []*block, stop sdk.StopReason, usage core.Usage) (*core.ModelResponse, error) {
	resp := &core.ModelResponse{Stop: stopKind(stop), Usage: usage}
	for _, b := range blocks {
		switch b.typ {
		case "text":
			if b.text != "" {
				resp.Content = append(resp.Content, core.Block{Type: core.BlockText, Text: b.text})
			}
		case "tool_use":
			in, ok := modelcall.Input(string(b.input))
			if !ok {
				if resp.Stop == core.StopMaxTokens {
					// The call was cut off mid-input; it cannot run.
					c.log.Warn("dropping truncated tool call", "vendor", vendor, "tool", b.name, "tool_use_id", b.id)
					continue
				}
				return nil, fmt.Errorf("anthropic: tool %s: input is not valid json", b.name)
			}
			resp.Content = append(resp.Content, core.Block{Type: core.BlockToolUse, ToolUseID: b.id, Name: b.name, Input: in})
		}
	}
	return resp, nil
}

func stopKind(r sdk.StopReason) core.StopKind {
	switch r {
	case sdk.StopReasonToolUse:
		return core.StopToolUse
	case sdk.StopReasonMaxTokens, sdk.StopReasonModelContextWindowExceeded:
		return core.StopMaxTokens
	}
	return core.StopEnd
}

// classify turns an SDK error into a *core.ModelError.
func classify(err error) *core.ModelError {
	var me *core.ModelError
	if errors.As(err, &me) {
		return me
	}
	var ae *sdk.Error
	if errors.As(err, &ae) {
		var body struct {
			Error struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"error"`
		}
		_ = json.Unmarshal([]byte(ae.RawJSON()), &body)
		status := ae.StatusCode
		if status < 400 {
			// An SSE error event arrives on a 200; its type says what it is.
			status = statusOfType(body.Error.Type)
		}
		msg := body.Error.Message
		if msg == "" {
			msg = http.StatusText(status)
		}
		return &core.ModelError{Status: status, Message: msg, Retryable: modelcall.Retryable(status), Err: err}
	}
	return &core.ModelError{Message: err.Error(), Retryable: true, Err: err}
}

func statusOfType(t string) int {
	switch t {
	case "invalid_request_error":
		return http.StatusBadRequest
	case "authentication_error":
		return http.StatusUnauthorized
	case "permission_error":
		return http.StatusForbidden
	case "not_found_error":
		return http.StatusNotFound
	case "request_too_large":
		return http.StatusRequestEntityTooLarge
	case "rate_limit_error":
		return http.StatusTooManyRequests
	case "timeout_error":
		return http.StatusGatewayTimeout
	case "overloaded_error":
		return 529
	}
	return http.StatusInternalServerError
}
