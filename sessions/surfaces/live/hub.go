// Package live fans a session's newly logged events out to its followers
// (SSE streams) without anyone polling the store: the hub follows the
// store's commit stream, and followers catch up from the store by seq only
// when they fall behind.
package live

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/switchboardhq/switchboard/core"
)

// Hub routes published events to the subscribers of their session.
type Hub struct {
	mu    sync.RWMutex
	subs  map[string]map[*Sub]struct{}
	count atomic.Int64
}

// NewHub returns an empty hub.
func NewHub() *Hub { return &Hub{subs: map[string]map[*Sub]struct{}{}} }

// Frame is an event with its SSE encoding (id, event and data lines and
// the blank line that ends them), made once per publish and shared by
// every subscriber: a stream writes it as it is, or skips it when its
// level hides the event.
type Frame struct {
	Event core.Event
	SSE   []byte
}

// NewFrame encodes e.
func NewFrame(e core.Event) (Frame, error) {
	b, err := json.Marshal(e)
	if err != nil {
		return Frame{}, fmt.Errorf("encode event %s: %w", e.ID, err)
	}
	sse := make([]byte, 0, len(b)+len(e.Type)+40)
	sse = append(sse, "id: "...)
	sse = strconv.AppendUint(sse, e.Seq, 10)
	sse = append(sse, "\nevent: "...)
	sse = append(sse, e.Type...)
	sse = append(sse, "\ndata: "...)
	sse = append(sse, b...)
	sse = append(sse, "\n\n"...)
	return Frame{Event: e, SSE: sse}, nil
}

// Sub is one follower of a session. C carries frames in publish order;
// when C is full events are dropped and Lagged is signalled, so the
// follower reads the gap from the store.
type Sub struct {
	C      chan Frame
	Lagged chan struct{}
	hub    *Hub
	id     string
}

// Subscribe follows a session; buf is C's capacity.
func (h *Hub) Subscribe(sessionID string, buf int) *Sub {
	s := &Sub{C: make(chan Frame, buf), Lagged: make(chan struct{}, 1), hub: h, id: sessionID}
	h.mu.Lock()
	m := h.subs[sessionID]
	if m == nil {
		m = map[*Sub]struct{}{}
		h.subs[sessionID] = m
	}
	m[s] = struct{}{}
	h.mu.Unlock()
	h.count.Add(1)
	return s
}

// Close stops following.
func (s *Sub) Close() {
	h := s.hub
	h.mu.Lock()
	if m := h.subs[s.id]; m != nil {
		if _, ok := m[s]; ok {
			delete(m, s)
			h.count.Add(-1)
		}
		if len(m) == 0 {
			delete(h.subs, s.id)
		}
	}
	h.mu.Unlock()
}

// Subscribers is the number of open subscriptions.
func (h *Hub) Subscribers() int { return int(h.count.Load()) }

// Publish hands events to the session's subscribers without blocking.
func (h *Hub) Publish(sessionID string, events []core.Event) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	subs := h.subs[sessionID]
	if len(subs) == 0 {
		return
	}
	frames := make([]Frame, 0, len(events))
	for _, e := range events {
		// A body that does not encode cannot be streamed; followers read
		// it from the store, which will fail the same way, visibly.
		if f, err := NewFrame(e); err == nil {
			frames = append(frames, f)
		}
	}
	for s := range subs {
		for _, f := range frames {
			select {
			case s.C <- f:
			default:
				select {
				case s.Lagged <- struct{}{}:
				default:
				}
			}
		}
	}
}

// Run publishes the events of each committed change of sub (the store's
// commit stream) to the subscribers of its session until ctx ends. After a
// lag it tells every subscriber to catch up from the store, where their
// gap is.
func (h *Hub) Run(ctx context.Context, sub *core.Subscription) {
	sub.Run(ctx, func(c core.Change) {
		if len(c.Events) > 0 {
			h.Publish(c.SessionID, c.Events)
		}
	}, h.lagAll)
}

func (h *Hub) lagAll() {
	h.mu.RLock()
	defer h.mu.RUnlock()
	for _, subs := range h.subs {
		for s := range subs {
			select {
			case s.Lagged <- struct{}{}:
			default:
			}
		}
	}
}
