package api

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/httpserver"
	"github.com/switchboardhq/switchboard/sessions/surfaces/live"
)

// subscriberBuffer is how many events a slow stream may fall behind before
// it catches up from the store instead.
const subscriberBuffer = 256

// stream serves the session's events as SSE: the history after a seq,
// then live events, with heartbeats, until the client leaves.
//
// A stream outlives the server's read deadline, which it lifts, and ends
// with a last comment when the server shuts down. A stream an attach
// token opened (token, its id) ends when the token is revoked: the log
// says so on every replica, and the store is read again with every batch
// and heartbeat, as a revoke on an archived session logs nothing.
func (h *Handler) stream(w http.ResponseWriter, r *http.Request, id string, after uint64, level core.Level, token string) error {
	rc := http.NewResponseController(w)
	// The request is read; the heartbeats find a client that left.
	_ = rc.SetReadDeadline(time.Time{})
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	drain := httpserver.Draining(r.Context())
	if drain != nil {
		go func() {
			select {
			case <-drain:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	f := live.Follow(h.Hub, h.Store, id, after, subscriberBuffer)
	defer f.Close()
	if h.OnSSE != nil {
		h.OnSSE(1)
		defer h.OnSSE(-1)
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("Connection", "keep-alive")
	hdr.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriterSize(w, 16<<10)
	// Tell EventSource how soon to come back after a drop.
	fmt.Fprint(bw, "retry: 1000\n\n")
	// When the server stops, the client hears it before the end.
	defer func() {
		select {
		case <-drain:
			fmt.Fprint(bw, ": server shutting down\n\n")
			if bw.Flush() == nil {
				_ = rc.Flush()
			}
		default:
		}
	}()
	for {
		evs, err := f.Backlog(ctx)
		if err != nil {
			return nil // the status line is sent; the client will reconnect
		}
		if revokes(evs, token) || h.revoked(ctx, token) {
			return endRevoked(bw, rc)
		}
		if _, err := writeEvents(bw, evs, level); err != nil {
			return nil
		}
		if len(evs) == 0 {
			break
		}
	}
	if bw.Flush() != nil || rc.Flush() != nil {
		return nil
	}
	tick := time.NewTicker(h.Heartbeat)
	defer tick.Stop()
	for {
		evs, err := f.Next(ctx, tick.C)
		if err != nil {
			return nil
		}
		if revokes(evs, token) || h.revoked(ctx, token) {
			return endRevoked(bw, rc)
		}
		if evs == nil {
			fmt.Fprint(bw, ": heartbeat\n\n")
		} else if n, err := writeEvents(bw, evs, level); err != nil {
			return nil
		} else if n > 0 {
			// A stream that is sending events needs no heartbeat: the
			// next one is due an interval after the last write, so busy
			// streams cost no timer writes.
			tick.Reset(h.Heartbeat)
		}
		if bw.Flush() != nil || rc.Flush() != nil {
			return nil
		}
	}
}

// revokes reports whether frames log the revocation of attach token id.
func revokes(frames []live.Frame, id string) bool {
	if id == "" {
		return false
	}
	for _, f := range frames {
		var b core.AttachTokenBody
		if f.Event.Type == core.TypeAttachTokenRevoked && f.Event.Decode(&b) == nil && b.ID == id {
			return true
		}
	}
	return false
}

// revoked reports whether the store says attach token id is revoked or
// gone; a store that cannot answer now is asked again next time.
func (h *Handler) revoked(ctx context.Context, id string) bool {
	if id == "" || h.AttachTokens == nil {
		return false
	}
	t, err := h.AttachTokens.GetAttachToken(ctx, id)
	if errors.Is(err, core.ErrNotFound) {
		return true
	}
	return err == nil && t.Revoked()
}

// endRevoked ends a stream whose attach token was revoked with a last
// comment; the client's reconnect gets the 401 that says why.
func endRevoked(bw *bufio.Writer, rc *http.ResponseController) error {
	fmt.Fprint(bw, ": attach token revoked\n\n")
	if bw.Flush() == nil {
		_ = rc.Flush()
	}
	return nil
}

// writeEvents writes the frames level shows and says how many.
func writeEvents(bw *bufio.Writer, frames []live.Frame, level core.Level) (int, error) {
	n := 0
	for _, f := range frames {
		if !level.Shows(f.Event.Level) {
			continue
		}
		if _, err := bw.Write(f.SSE); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
