package console

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/httpserver"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

// sessionStream relays the session's /v1 event stream (docs/api.md#events)
// to the session page, whose browser has the console's cookie but not the
// admin token. Each message is passed on whole, its id included, so the
// browser's Last-Event-ID (or ?after= when the page reopens the stream
// itself) resumes where it left off. When the sign-in ends the stream
// says so ("signed-out") and ends.
func (h *Handler) sessionStream(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	after, err := resumeAfter(r)
	if err != nil {
		streamRefusal(w, http.StatusBadRequest, err.Error())
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	resp, err := h.api.Stream(ctx, r.PathValue("id"), after, "")
	var ae *client.APIError
	switch {
	case errors.As(err, &ae) && ae.Status < 500:
		streamRefusal(w, ae.Status, ae.Message)
		return
	case err != nil:
		h.failed(w, r, s, "follow the session", err)
		return
	}
	defer resp.Body.Close()
	rc := http.NewResponseController(w)
	// The request is read; the heartbeats find a client that left.
	_ = rc.SetReadDeadline(time.Time{})
	startStream(w)
	_ = rc.Flush()
	messages := make(chan []byte)
	go readMessages(ctx, resp.Body, messages)
	drain := httpserver.Draining(r.Context())
	tick := time.NewTicker(h.heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-drain:
			return
		case m, ok := <-messages:
			if !ok {
				return // the API ended the stream; the browser reconnects
			}
			if _, err := w.Write(m); err != nil || rc.Flush() != nil {
				return
			}
		case <-tick.C:
			// A sign-out or an expiry elsewhere ends the stream too.
			if cur, err := h.current(r); err == nil && (cur == nil || cur.ID != s.ID) {
				fmt.Fprint(w, "event: signed-out\ndata: {}\n\n")
				_ = rc.Flush()
				return
			}
		}
	}
}

// resumeAfter is the seq the browser has: its Last-Event-ID when it
// reconnects by itself, else ?after=.
func resumeAfter(r *http.Request) (uint64, error) {
	v := r.Header.Get("Last-Event-ID")
	if v == "" {
		v = r.URL.Query().Get("after")
	}
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("after %q: want a seq", v)
	}
	return n, nil
}

// readMessages sends each SSE message of body (its lines up to a blank
// line, comments included) to out, whole, so the relay never cuts one in
// two; out is closed when body ends.
func readMessages(ctx context.Context, body io.Reader, out chan<- []byte) {
	defer close(out)
	br := bufio.NewReaderSize(body, 64<<10)
	var m bytes.Buffer
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			return
		}
		m.Write(line)
		if len(bytes.TrimRight(line, "\r\n")) > 0 {
			continue
		}
		select {
		case out <- bytes.Clone(m.Bytes()):
		case <-ctx.Done():
			return
		}
		m.Reset()
	}
}

// streamRefusal answers a stream that cannot be opened in plain text:
// EventSource gives up on an answer that is not 200 and the page's script
// opens a new stream later.
func streamRefusal(w http.ResponseWriter, status int, msg string) {
	securityHeaders(w.Header())
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = fmt.Fprintln(w, msg)
}
