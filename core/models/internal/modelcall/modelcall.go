// Package modelcall owns what the Anthropic and OpenAI clients share and
// their SDKs do not: vendor prefixes, tool schema and tool input
// normalization, and the retry of a stream that failed after it opened.
//
// The SDKs retry 429, 5xx and connection errors up to the moment the
// response status arrives. A stream that fails after a 200 (an SSE error
// event such as overloaded_error, or a dropped connection) is not theirs to
// retry; Policy.Do retries it, but only while nothing has reached the
// caller, so no text is ever delivered twice.
package modelcall

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// Name strips vendor's prefix from model ("anthropic/claude-x").
func Name(model, vendor string) (string, error) {
	p, name, err := core.SplitModel(model)
	if err != nil {
		return "", err
	}
	if p != vendor {
		return "", fmt.Errorf("model %q: the %s client serves %s/<model> only: %w", model, vendor, vendor, core.ErrInvalid)
	}
	return name, nil
}

// Schema returns a tool's input schema as a JSON object; an empty schema
// becomes {"type":"object","properties":{}}, which both APIs require at least.
func Schema(raw json.RawMessage) (map[string]any, error) {
	m := map[string]any{}
	if t := bytes.TrimSpace(raw); len(t) > 0 && string(t) != "null" {
		if err := json.Unmarshal(t, &m); err != nil {
			return nil, fmt.Errorf("input schema is not a json object: %v: %w", err, core.ErrInvalid)
		}
	}
	if _, ok := m["type"]; !ok {
		m["type"] = "object"
	}
	if _, ok := m["properties"]; !ok && m["type"] == "object" {
		m["properties"] = map[string]any{}
	}
	return m, nil
}

// Input returns tool input JSON, compacted; empty input is {}. ok is false
// when s is not valid JSON (a stream cut short by max_tokens).
func Input(s string) (in json.RawMessage, ok bool) {
	t := bytes.TrimSpace([]byte(s))
	if len(t) == 0 {
		return json.RawMessage("{}"), true
	}
	var b bytes.Buffer
	if err := json.Compact(&b, t); err != nil {
		return nil, false
	}
	return b.Bytes(), true
}

// Retryable is the core.ModelError rule for an HTTP status.
func Retryable(status int) bool {
	return status == http.StatusTooManyRequests || status >= 500
}

// Tracker follows one streamed call: whether its HTTP response opened (a
// 2xx arrived, so the SDK's retries are over) and whether any content
// reached the caller.
type Tracker struct {
	vendor    string
	log       *slog.Logger
	attempts  atomic.Int32
	opened    atomic.Bool
	delivered atomic.Bool
}

// Middleware has the shape of both SDKs' option.Middleware. It sees every
// HTTP attempt, including the SDK's own retries.
func (t *Tracker) Middleware(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	n := t.attempts.Add(1)
	res, err := next(req)
	switch {
	case err != nil:
		if req.Context().Err() == nil {
			t.log.Warn("model request failed", "vendor", t.vendor, "attempt", n, "err", err)
		}
	case res.StatusCode >= 200 && res.StatusCode < 300:
		t.opened.Store(true)
	default:
		t.log.Warn("model request refused", "vendor", t.vendor, "attempt", n, "status", res.StatusCode)
	}
	return res, err
}

// Delivered records that content reached the caller (text or a tool call).
func (t *Tracker) Delivered() { t.delivered.Store(true) }

// Policy is how Do retries.
type Policy struct {
	Vendor     string
	MaxRetries int
	BaseDelay  time.Duration // first delay; doubled per retry, at most 8s
	Logger     *slog.Logger
}

// Do runs call until it succeeds or fails for good. classify turns an SDK
// error into a *core.ModelError. A done ctx wins over any other error, and
// is returned wrapped so that errors.Is sees it.
func (p Policy) Do(ctx context.Context, call func(ctx context.Context, t *Tracker) (*core.ModelResponse, error), classify func(error) *core.ModelError) (*core.ModelResponse, error) {
	for retry := 0; ; retry++ {
		t := &Tracker{vendor: p.Vendor, log: p.Logger}
		resp, err := call(ctx, t)
		if err == nil {
			return resp, nil
		}
		if cerr := ctx.Err(); cerr != nil {
			return nil, fmt.Errorf("%s: %w", p.Vendor, cerr)
		}
		merr := classify(err)
		if !t.opened.Load() || t.delivered.Load() || !merr.Retryable || retry >= p.MaxRetries {
			return nil, merr
		}
		d := backoff(p.BaseDelay, retry)
		p.Logger.Warn("model stream failed before any content, retrying", "vendor", p.Vendor,
			"retry", retry+1, "delay", d.String(), "err", err)
		timer := time.NewTimer(d)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, fmt.Errorf("%s: %w", p.Vendor, ctx.Err())
		case <-timer.C:
		}
	}
}

func backoff(base time.Duration, retry int) time.Duration {
	if base <= 0 {
		base = 500 * time.Millisecond
	}
	d := base << min(retry, 10)
	d = min(d, 8*time.Second)
	// Jitter spreads the clients that one overload failed together.
	return d - time.Duration(rand.Int64N(int64(d)/4+1))
}
