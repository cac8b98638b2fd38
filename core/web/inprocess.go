package web

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
)

// InProcess is an http.RoundTripper that serves every request with h in
// this process, without a socket: a page of the gateway can call the
// gateway's own API through its typed client, so every write goes through
// the one handler that validates it. Answers stream (an SSE handler's
// flushed writes reach the reader as they are written), and canceling the
// request's context ends the handler's.
func InProcess(h http.Handler) http.RoundTripper { return inProcess{h} }

type inProcess struct{ h http.Handler }

func (t inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body == nil {
		req.Body = http.NoBody
	}
	// The handler's context ends with the request's or when the reader
	// closes the body, as a server's ends when its client goes away.
	ctx, cancel := context.WithCancel(req.Context())
	in := req.Clone(ctx)
	in.RequestURI = req.URL.RequestURI()
	in.RemoteAddr = "in-process"
	if in.Host == "" {
		in.Host = req.URL.Host
	}
	pr, pw := io.Pipe()
	w := &pipeWriter{header: http.Header{}, body: pw, ready: make(chan struct{})}
	returned := make(chan struct{})
	go func() {
		// A handler blocked writing to a reader that went away is let go.
		// One that returned has closed the body itself: what it wrote is
		// read to its end, however late (its context ends as it returns,
		// which must not cut the body).
		select {
		case <-ctx.Done():
			select {
			case <-returned:
			default:
				_ = pr.CloseWithError(ctx.Err())
			}
		case <-returned:
		}
	}()
	go func() {
		defer cancel()
		defer close(returned)
		defer func() {
			if v := recover(); v != nil {
				w.finish(fmt.Errorf("in-process handler for %s %s panicked: %v", req.Method, req.URL.Path, v))
				return
			}
			w.finish(nil)
		}()
		t.h.ServeHTTP(w, in)
	}()
	// The caller's context, not ctx: a handler that returns without
	// writing closes ready and then cancels ctx, and a select that saw
	// both would pick the error half the time.
	select {
	case <-w.ready:
	case <-req.Context().Done():
		return nil, req.Context().Err()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", w.status, http.StatusText(w.status)),
		StatusCode:    w.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        w.sent,
		Body:          body{pr, cancel},
		ContentLength: -1,
		Request:       req,
	}, nil
}

// pipeWriter is the handler's side: the header is sent (ready closed) at
// the first WriteHeader, Write or Flush, or when the handler returns.
type pipeWriter struct {
	mu     sync.Mutex
	header http.Header
	sent   http.Header
	status int
	body   *io.PipeWriter
	ready  chan struct{}
}

// body ends the handler's context when the reader closes it.
type body struct {
	*io.PipeReader
	cancel context.CancelFunc
}

func (b body) Close() error {
	b.cancel()
	return b.PipeReader.Close()
}

func (w *pipeWriter) Header() http.Header { return w.header }

func (w *pipeWriter) WriteHeader(status int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.sent != nil {
		return
	}
	w.status, w.sent = status, w.header.Clone()
	close(w.ready)
}

func (w *pipeWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(p)
}

// Flush sends the header; written bytes need no flushing, a pipe hands
// them over as they are written.
func (w *pipeWriter) Flush() { w.WriteHeader(http.StatusOK) }

func (w *pipeWriter) finish(err error) {
	w.WriteHeader(http.StatusOK)
	_ = w.body.CloseWithError(err)
}
