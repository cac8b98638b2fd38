package linearapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/Khan/genqlient/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// maxResponse bounds what a GraphQL answer may weigh.
const maxResponse = 32 << 20

// NewClient is a graphql.Client for Linear at endpoint (LINEAR_API_URL +
// "/graphql"). hc carries the authentication (an oauth2 transport adding
// "Authorization: Bearer …"); nil means http.DefaultClient. Unlike
// genqlient's own client it keeps the HTTP status and the rate-limit
// headers: every failed answer is an *Error.
func NewClient(endpoint string, hc *http.Client) graphql.Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	return &client{endpoint: endpoint, hc: hc}
}

type client struct {
	endpoint string
	hc       *http.Client
}

func (c *client) MakeRequest(ctx context.Context, req *graphql.Request, resp *graphql.Response) error {
	body, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("linear %s: encode: %w", req.OpName, err)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("linear %s: %w", req.OpName, err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	hresp, err := c.hc.Do(hreq)
	if err != nil {
		return fmt.Errorf("linear %s: %w", req.OpName, err)
	}
	defer hresp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(hresp.Body, maxResponse))
	if err != nil {
		return fmt.Errorf("linear %s: read answer: %w", req.OpName, err)
	}
	if hresp.StatusCode != http.StatusOK {
		e := &Error{Op: req.OpName, StatusCode: hresp.StatusCode, RetryAfter: retryAfter(hresp.Header, time.Now())}
		var gr struct {
			Errors gqlerror.List `json:"errors"`
		}
		if json.Unmarshal(raw, &gr) == nil {
			e.Errors = gr.Errors
		}
		if len(e.Errors) == 0 {
			e.Errors = gqlerror.List{{Message: strings.TrimSpace(string(truncate(raw, 512)))}}
		}
		return e
	}
	if err := json.Unmarshal(raw, resp); err != nil {
		return fmt.Errorf("linear %s: decode answer: %w", req.OpName, err)
	}
	if len(resp.Errors) > 0 {
		return &Error{Op: req.OpName, StatusCode: hresp.StatusCode, Errors: resp.Errors, RetryAfter: retryAfter(hresp.Header, time.Now())}
	}
	return nil
}

func truncate(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

// Error is a failed answer from Linear: a non-200 status, or GraphQL
// errors in a 200 (the data, if any, is still decoded).
type Error struct {
	Op         string // the operation's name
	StatusCode int
	Errors     gqlerror.List
	// RetryAfter is how long Linear asked to wait (Retry-After, else the
	// X-RateLimit-*-Reset headers), measured when the answer came; 0 when
	// it named no time.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	var msgs []string
	for _, ge := range e.Errors {
		m := ge.Message
		if s, _ := ge.Extensions["userPresentableMessage"].(string); s != "" && s != m {
			m += " (" + s + ")"
		}
		if code, _ := ge.Extensions["code"].(string); code != "" {
			m += " [" + code + "]"
		}
		msgs = append(msgs, m)
	}
	return fmt.Sprintf("linear %s: status %d: %s", e.Op, e.StatusCode, strings.Join(msgs, "; "))
}

// Message is what a person should read: Linear's user-presentable message
// when there is one, else the first error's message.
func (e *Error) Message() string {
	for _, ge := range e.Errors {
		if s, _ := ge.Extensions["userPresentableMessage"].(string); s != "" {
			return s
		}
	}
	if len(e.Errors) > 0 {
		return e.Errors[0].Message
	}
	return http.StatusText(e.StatusCode)
}

// RateLimited reports whether err is Linear refusing for its rate limits
// (HTTP 429, or errors[].extensions.code RATELIMITED, which Linear sends
// with status 400), and how long it asked to wait (0: not said).
func RateLimited(err error) (retryAfter time.Duration, ok bool) {
	var e *Error
	if !errors.As(err, &e) {
		return 0, false
	}
	if e.StatusCode == http.StatusTooManyRequests || e.has(func(code, typ string, _ bool) bool {
		return code == "RATELIMITED" || typ == "ratelimited"
	}) {
		return e.RetryAfter, true
	}
	return 0, false
}

// UserError reports whether Linear refused the request itself (invalid
// input, an entity not found, a validation error, a forbidden action):
// sending it again cannot succeed, so it is never retried. Rate limits and
// authentication failures are not user errors.
func UserError(err error) bool {
	if _, limited := RateLimited(err); limited || Unauthenticated(err) {
		return false
	}
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	return e.has(func(code, typ string, userError bool) bool {
		switch {
		case userError:
			return true
		case typ == "invalid input", typ == "user error", typ == "feature not accessible", typ == "forbidden",
			typ == "usage limit exceeded", typ == "graphql error":
			return true
		case code == "INPUT_ERROR", code == "INVALID_INPUT", code == "BAD_USER_INPUT", code == "FORBIDDEN",
			code == "GRAPHQL_VALIDATION_FAILED", code == "GRAPHQL_PARSE_FAILED":
			return true
		}
		return false
	}) || (e.StatusCode >= 400 && e.StatusCode < 500 && e.StatusCode != http.StatusRequestTimeout)
}

// NotFound reports whether Linear answered that an id names nothing
// ("Entity not found: …"), a user error the caller may want to tell apart.
func NotFound(err error) bool {
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	for _, ge := range e.Errors {
		code, _ := ge.Extensions["code"].(string)
		if code == "NOT_FOUND" || code == "ENTITY_NOT_FOUND" || strings.HasPrefix(strings.ToLower(ge.Message), "entity not found") {
			return true
		}
	}
	return false
}

// Unauthenticated reports whether Linear refused the token (HTTP 401, or
// an "authentication error"): refresh it, or the installation is gone.
func Unauthenticated(err error) bool {
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	return e.StatusCode == http.StatusUnauthorized || e.has(func(code, typ string, _ bool) bool {
		return typ == "authentication error" || code == "AUTHENTICATION_ERROR"
	})
}

func (e *Error) has(match func(code, typ string, userError bool) bool) bool {
	for _, ge := range e.Errors {
		code, _ := ge.Extensions["code"].(string)
		typ, _ := ge.Extensions["type"].(string)
		ue, _ := ge.Extensions["userError"].(bool)
		if match(code, strings.ToLower(typ), ue) {
			return true
		}
	}
	return false
}

// retryAfter reads Retry-After (seconds), else the latest of Linear's
// X-RateLimit-Requests-Reset and X-RateLimit-Complexity-Reset (epoch
// milliseconds; seconds tolerated).
func retryAfter(h http.Header, now time.Time) time.Duration {
	if s := h.Get("Retry-After"); s != "" {
		if n, err := strconv.ParseFloat(s, 64); err == nil && n > 0 {
			return time.Duration(n * float64(time.Second))
		}
		if t, err := http.ParseTime(s); err == nil && t.After(now) {
			return t.Sub(now)
		}
	}
	var wait time.Duration
	for _, k := range []string{"X-RateLimit-Requests-Reset", "X-RateLimit-Complexity-Reset", "X-RateLimit-Endpoint-Requests-Reset"} {
		n, err := strconv.ParseInt(h.Get(k), 10, 64)
		if err != nil || n <= 0 {
			continue
		}
		at := time.UnixMilli(n)
		if n < 1e12 { // seconds
			at = time.Unix(n, 0)
		}
		if d := at.Sub(now); d > wait {
			wait = d
		}
	}
	return wait
}
