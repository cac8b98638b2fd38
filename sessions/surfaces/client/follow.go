package client

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// Reconnect backoff of Follow: short, because the server resumes exactly
// where the client left off and a gateway restart takes about a second.
const (
	minBackoff = 500 * time.Millisecond
	maxBackoff = 2 * time.Second
)

// Follow streams the session's events after seq after, at the level
// threshold (user, progress or internal; "" for all), calling fn for each
// in order. A dropped connection is reopened with Last-Event-ID, and
// events already seen are skipped, so fn sees every event exactly once.
//
// Follow returns fn's first error as is, ctx's error when ctx ends, or an
// *APIError the server answered that retrying cannot fix (4xx but 429:
// unknown session, bad token, bad level). The stream has no natural end,
// an archived session included: stop it with ctx or fn.
func (c *Client) Follow(ctx context.Context, id string, after uint64, level string, fn func(core.Event) error) error {
	last := after
	delay := minBackoff
	for {
		connected, err := c.followOnce(ctx, id, &last, level, fn)
		var fe *fnError
		var ae *APIError
		switch {
		case errors.As(err, &fe):
			return fe.err
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.As(err, &ae) && ae.Status < 500 && ae.Status != http.StatusTooManyRequests:
			return ae
		}
		if connected {
			delay = minBackoff
		}
		wake, stop := c.timer(delay)
		select {
		case <-ctx.Done():
			stop()
			return ctx.Err()
		case <-wake:
		}
		delay = min(delay*2, maxBackoff)
	}
}

// timer starts the wait of one reconnect backoff.
func (c *Client) timer(d time.Duration) (wake <-chan time.Time, stop func()) {
	if c.after != nil {
		return c.after(d), func() {}
	}
	t := time.NewTimer(d)
	return t.C, func() { t.Stop() }
}

// fnError carries the callback's error out of the read loop untouched.
type fnError struct{ err error }

func (e *fnError) Error() string { return e.err.Error() }

// followOnce reads one connection until it ends; connected reports
// whether the server accepted the stream. *last advances past every event
// fn accepted.
func (c *Client) followOnce(ctx context.Context, id string, last *uint64, level string, fn func(core.Event) error) (connected bool, err error) {
	resp, err := c.Stream(ctx, id, *last, level)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	path := pathf("/v1/sessions/%s/events", id)
	err = readSSE(resp.Body, func(m sseMessage) error {
		var e core.Event
		if err := json.Unmarshal([]byte(m.data), &e); err != nil {
			return fmt.Errorf("GET %s: event %q: %w", path, m.id, err)
		}
		if e.Seq == 0 {
			e.Seq, _ = strconv.ParseUint(m.id, 10, 64)
		}
		if e.Seq <= *last {
			return nil // already delivered before a reconnect
		}
		if err := fn(e); err != nil {
			return &fnError{err}
		}
		*last = e.Seq
		return nil
	})
	return true, err
}

// sseMessage is one dispatched server-sent event.
type sseMessage struct {
	id    string
	event string
	data  string
}

// readSSE parses an event stream (the WHATWG format): fields id, event and
// data (several data lines join with "\n"), comments (":" lines, the
// heartbeats) skipped, a blank line dispatching. A message without data is
// not dispatched. It returns io.ErrUnexpectedEOF when the stream ends, the
// normal way a dropped connection shows.
func readSSE(r io.Reader, dispatch func(sseMessage) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var m sseMessage
	var data []string
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			if errors.Is(err, io.EOF) {
				return io.ErrUnexpectedEOF
			}
			return err
		}
		line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		if line == "" {
			if data != nil {
				m.data = strings.Join(data, "\n")
				if err := dispatch(m); err != nil {
					return err
				}
			}
			m, data = sseMessage{}, nil
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			m.id = value
		case "event":
			m.event = value
		case "data":
			data = append(data, value)
		}
	}
}
