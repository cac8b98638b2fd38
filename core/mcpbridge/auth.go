package mcpbridge

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/switchboardhq/switchboard/core"
)

// authTransport sets the vault credential on every request to an MCP
// server, asking the credential source each time so a rotated or
// refreshed credential is picked up without reconnecting.
type authTransport struct {
	base  http.RoundTripper
	creds core.CredentialSource
	id    string
	// session is the session the credential is used for: a credential
	// scoped to another tenant is refused.
	session string
	sec     *secrets
	log     *slog.Logger
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.creds == nil {
		return nil, fmt.Errorf("credential %s: no credential source configured", t.id)
	}
	out, err := t.authorize(req)
	if err != nil {
		closeBody(req)
		return nil, err
	}
	resp, err := t.base.RoundTrip(out)
	if err != nil || resp.StatusCode != http.StatusUnauthorized || !replayable(req) {
		return resp, err
	}
	// The server refused the credential: an expired oauth token is renewed
	// once and the request sent again; anything else keeps the 401.
	if rerr := t.creds.Refresh(core.WithCredentialSession(req.Context(), t.session), t.id); rerr != nil {
		t.log.Debug("mcp credential refresh failed", "credential", t.id, "host", req.URL.Host, "err", rerr)
		return resp, nil
	}
	drain(resp)
	retry, err := t.authorize(req)
	if err != nil {
		return nil, err
	}
	if req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return nil, fmt.Errorf("replay request body: %w", err)
		}
		retry.Body = body
	}
	return t.base.RoundTrip(retry)
}

// authorize returns a copy of req carrying the credential (a RoundTripper
// must not change the request it was given).
func (t *authTransport) authorize(req *http.Request) (*http.Request, error) {
	name, value, err := t.creds.Header(core.WithCredentialSession(req.Context(), t.session), t.id, req.URL.Host)
	if err != nil {
		return nil, fmt.Errorf("credential %s for %s: %w", t.id, req.URL.Host, err)
	}
	t.sec.add(value)
	if scheme, tok, ok := strings.Cut(value, " "); ok && strings.EqualFold(scheme, "bearer") {
		t.sec.add(tok)
	}
	out := req.Clone(req.Context())
	out.Header.Set(name, value)
	return out, nil
}

// staleRetry sends a request again, once, when it failed on a kept-alive
// connection the server had already closed (it restarted, or its idle
// timeout ran out) before a byte of answer came back. net/http retries only
// idempotent requests there, and every MCP message is a POST: without this
// the first call after a server restart would fail although the server
// never read it. As with OkHttp's retry on stale pooled connections, a
// server that read the request and died without answering could see it
// twice; that is taken as the price of restarts being invisible.
type staleRetry struct{ base http.RoundTripper }

func (t staleRetry) RoundTrip(req *http.Request) (*http.Response, error) {
	// A few tries: connections that were in use a moment ago can come back
	// to the idle pool as dead as the ones dropped before the first retry.
	for attempt := 1; ; attempt++ {
		var reused, answered atomic.Bool
		trace := &httptrace.ClientTrace{
			GotConn:              func(i httptrace.GotConnInfo) { reused.Store(i.Reused) },
			GotFirstResponseByte: func() { answered.Store(true) },
		}
		out := req.Clone(httptrace.WithClientTrace(req.Context(), trace))
		if attempt > 1 && req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, fmt.Errorf("replay request body: %w", err)
			}
			out.Body = body
		}
		resp, err := t.base.RoundTrip(out)
		if err == nil || attempt == maxStaleTries || !reused.Load() || answered.Load() ||
			req.Context().Err() != nil || !replayable(req) || !staleConnError(err) {
			return resp, err
		}
		// The other kept-alive connections to a restarted server are dead
		// too: dropping them makes the next try dial.
		t.CloseIdleConnections()
	}
}

// maxStaleTries bounds the sends of one request over stale connections.
const maxStaleTries = 3

// CloseIdleConnections lets the pool drop kept-alive connections.
func (t staleRetry) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

func staleConnError(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		// net/http's errServerClosedIdle is not exported.
		strings.Contains(err.Error(), "server closed idle connection")
}

// replayable reports whether req can be sent a second time.
func replayable(req *http.Request) bool {
	return req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	_ = resp.Body.Close()
}

// secrets are the credential values a connection has used, so that
// whatever a server sends back (a result, an error, its stderr) can be
// scrubbed of them before it reaches the model or a log.
type secrets struct {
	mu   sync.Mutex
	vals []string
}

// maxSecrets bounds the list: a credential is refreshed now and then, and
// only recent values can still come back.
const maxSecrets = 8

func (s *secrets) add(v string) {
	if len(v) < 4 { // too short to redact without mangling text
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, have := range s.vals {
		if have == v {
			return
		}
	}
	s.vals = append(s.vals, v)
	if len(s.vals) > maxSecrets {
		s.vals = s.vals[len(s.vals)-maxSecrets:]
	}
}

// redact replaces every known secret in text.
func (s *secrets) redact(text string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range s.vals {
		text = strings.ReplaceAll(text, v, "[redacted]")
	}
	return text
}

// lineLogger writes a stdio server's stderr to the log at debug level, one
// record per line, redacted.
type lineLogger struct {
	log *slog.Logger
	sec *secrets

	mu  sync.Mutex
	buf []byte
}

// maxLine bounds a line kept while waiting for its newline.
const maxLine = 8 << 10

func (l *lineLogger) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			if len(l.buf) > maxLine {
				l.emit(l.buf)
				l.buf = l.buf[:0]
			}
			return len(p), nil
		}
		l.emit(l.buf[:i])
		l.buf = l.buf[i+1:]
	}
}

func (l *lineLogger) emit(line []byte) {
	s := strings.TrimRight(string(line), "\r")
	if s == "" {
		return
	}
	l.log.Debug("mcp server stderr", "line", l.sec.redact(s))
}

// debugHandler hands mcp-go's transport logs on at debug level: it logs a
// GET stream that cannot reach a stopped server at error level every
// second, which here is expected and reported once by the pool.
type debugHandler struct{ h slog.Handler }

func (d debugHandler) Enabled(ctx context.Context, _ slog.Level) bool {
	return d.h.Enabled(ctx, slog.LevelDebug)
}

func (d debugHandler) Handle(ctx context.Context, r slog.Record) error {
	r.Level = slog.LevelDebug
	return d.h.Handle(ctx, r)
}

func (d debugHandler) WithAttrs(a []slog.Attr) slog.Handler { return debugHandler{d.h.WithAttrs(a)} }
func (d debugHandler) WithGroup(n string) slog.Handler      { return debugHandler{d.h.WithGroup(n)} }
