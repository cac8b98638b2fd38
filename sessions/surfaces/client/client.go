// Package client is the typed Go client of the switchboard /v1 API
// (docs/api.md): agents, sessions, their events as pages and as a resumable
// SSE stream. The CLI is built on it; scripts in Go can use it directly.
// Answers decode into the server's own types (core.Agent, core.Event and
// the views of sessions/surfaces/api), so the two sides cannot drift apart.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Client talks to one switchboard server with one token (the admin token,
// or a session's client token for that session's read and steer calls).
type Client struct {
	base  string
	token string
	hc    *http.Client
	// after, when set (tests), stands in for the timer of Follow's
	// reconnect backoff.
	after func(time.Duration) <-chan time.Time
}

// New returns a client for the server at baseURL (e.g.
// "http://127.0.0.1:8080"). A nil httpClient means a plain one; it should
// have no overall Timeout, which would cut Follow's long-lived stream —
// bound single calls with their context instead.
func New(baseURL, token string, httpClient *http.Client) *Client {
	if httpClient == nil {
		httpClient = &http.Client{}
	}
	return &Client{base: strings.TrimRight(baseURL, "/"), token: token, hc: httpClient}
}

// APIError is a non-2xx answer, parsed from the API's
// {"error":{"type","message"}} body.
type APIError struct {
	Status  int
	Type    string // invalid_request, unauthorized, not_found, conflict, …
	Message string
}

// Error is the server's message alone, so a CLI can show it verbatim.
func (e *APIError) Error() string { return e.Message }

// maxErrorBody bounds how much of an error answer is read.
const maxErrorBody = 64 << 10

// request describes one call.
type request struct {
	method string
	path   string // below the base URL, already escaped
	query  url.Values
	body   any // JSON-encoded when non-nil
	// raw, when non-nil, is sent as is with Content-Type rawType.
	raw     []byte
	rawType string
	header  http.Header
}

// newRequest builds the HTTP request with auth and content headers.
func (c *Client) newRequest(ctx context.Context, rq request) (*http.Request, error) {
	u := c.base + rq.path
	if len(rq.query) > 0 {
		u += "?" + rq.query.Encode()
	}
	var body io.Reader
	if rq.body != nil {
		raw, err := json.Marshal(rq.body)
		if err != nil {
			return nil, fmt.Errorf("%s %s: encode body: %w", rq.method, rq.path, err)
		}
		body = bytes.NewReader(raw)
	}
	if rq.raw != nil {
		body = bytes.NewReader(rq.raw)
	}
	req, err := http.NewRequestWithContext(ctx, rq.method, u, body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", rq.method, rq.path, err)
	}
	for k, v := range rq.header {
		req.Header[k] = v
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if rq.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if rq.raw != nil {
		req.Header.Set("Content-Type", rq.rawType)
	}
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "application/json")
	}
	return req, nil
}

// do sends rq and decodes a 2xx answer into out (when non-nil); a
// *[]byte out takes the answer's bytes as they are.
func (c *Client) do(ctx context.Context, rq request, out any) error {
	req, err := c.newRequest(ctx, rq)
	if err != nil {
		return err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return transportError(rq.method, rq.path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return readError(resp)
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if raw, ok := out.(*[]byte); ok {
		if *raw, err = io.ReadAll(resp.Body); err != nil {
			return transportError(rq.method, rq.path, err)
		}
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("%s %s: decode answer: %w", rq.method, rq.path, err)
	}
	return nil
}

// transportError names the call once; the *url.Error inside would repeat
// the method and URL in its own spelling.
func transportError(method, path string, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return fmt.Errorf("%s %s: %w", method, path, err)
}

// readError turns a non-2xx answer into an *APIError. A body that is not
// the API's error shape (a proxy's HTML page, say) still gives a readable
// message.
func readError(resp *http.Response) *APIError {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	var body struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(raw, &body) == nil && body.Error.Message != "" {
		return &APIError{Status: resp.StatusCode, Type: body.Error.Type, Message: body.Error.Message}
	}
	msg := fmt.Sprintf("%s %s: %s", resp.Request.Method, resp.Request.URL.Path, resp.Status)
	if s := strings.TrimSpace(string(raw)); s != "" {
		if len(s) > 200 {
			s = s[:200] + "…"
		}
		msg += ": " + s
	}
	return &APIError{Status: resp.StatusCode, Message: msg}
}

// pathf builds a path with each argument path-escaped.
func pathf(format string, ids ...string) string {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = url.PathEscape(id)
	}
	return fmt.Sprintf(format, args...)
}
