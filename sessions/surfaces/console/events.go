package console

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/httpserver"
)

// eventsBuffer is how many changes a slow stream may fall behind before
// it is told it lagged.
const eventsBuffer = 64

// statusEvent is the data of an SSE "status" event.
type statusEvent struct {
	Session string      `json:"session"`
	Status  core.Status `json:"status"`
}

// events streams session status changes as SSE, from the store's commit
// stream, for the sessions page to update its rows in place:
//
//	event: status   data: {"session":"ses_…","status":"running"}
//	event: lag      the stream dropped changes: reload the rows
//	event: signed-out  the sign-in ended: the stream ends
//
// Nothing is replayed: the stream starts now, and a page that missed
// something (a lag, a reconnect) reads its rows again.
func (h *Handler) events(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	rc := http.NewResponseController(w)
	// The request is read; the heartbeats find a client that left.
	_ = rc.SetReadDeadline(time.Time{})
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	drain := httpserver.Draining(r.Context())
	// Subscribe before the answer starts, so whatever commits after the
	// browser sees the stream open is on it.
	sub := h.store.Subscribe("console", eventsBuffer)
	defer sub.Close()
	startStream(w)
	bw := bufio.NewWriter(w)
	fmt.Fprint(bw, "retry: 2000\n\n")
	tick := time.NewTicker(h.heartbeat)
	defer tick.Stop()
	for {
		if bw.Flush() != nil || rc.Flush() != nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-drain:
			fmt.Fprint(bw, ": server shutting down\n\n")
			_ = bw.Flush()
			return
		case c := <-sub.C:
			if c.Status == "" {
				continue
			}
			b, err := json.Marshal(statusEvent{Session: c.SessionID, Status: c.Status})
			if err != nil {
				return
			}
			fmt.Fprintf(bw, "event: status\ndata: %s\n\n", b)
		case <-sub.Lagged:
			fmt.Fprint(bw, "event: lag\ndata: {}\n\n")
		case <-tick.C:
			// A sign-out or an expiry elsewhere ends the stream too.
			if cur, err := h.current(r); err == nil && (cur == nil || cur.ID != s.ID) {
				fmt.Fprint(bw, "event: signed-out\ndata: {}\n\n")
				_ = bw.Flush()
				return
			}
			fmt.Fprint(bw, ": heartbeat\n\n")
		}
	}
}

// startStream answers with an event stream that no cache or proxy holds
// back.
func startStream(w http.ResponseWriter) {
	hdr := w.Header()
	securityHeaders(hdr)
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("Cache-Control", "no-store")
	hdr.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
}
