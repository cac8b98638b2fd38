package harness

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// textDeltas logs a model response's text while it streams, as
// agent.message_delta events no closer together than every: a sink that
// shows answers as they are written (Slack's streamed messages) reads them
// from the log, so it works on whichever replica holds the session's
// output, and survives a restart like any event. The events are coalesced
// rather than one per token, since each is a durable append.
//
// What is still buffered when the response ends is not logged: the
// agent.message that follows holds the whole text. A response that
// finishes within every logs no delta at all.
type textDeltas struct {
	c        *Cycle
	ctx      context.Context
	turn     string
	every    time.Duration
	response string

	mu      sync.Mutex
	buf     strings.Builder
	started bool
	failed  bool
	stop    chan struct{}
	done    chan struct{}
}

func newTextDeltas(ctx context.Context, c *Cycle, turn string, every time.Duration) *textDeltas {
	return &textDeltas{c: c, ctx: ctx, turn: turn, every: every, response: core.NewID("resp"),
		stop: make(chan struct{}), done: make(chan struct{})}
}

// add is the model request's OnText.
func (d *textDeltas) add(s string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.failed {
		return
	}
	d.buf.WriteString(s)
	if !d.started {
		d.started = true
		go d.run()
	}
}

// run flushes until close. A panic here ends the deltas only, as a
// failed append does: the response's agent.message still holds its text.
func (d *textDeltas) run() {
	defer close(d.done)
	defer core.Recover(d.c.Logger, nil, "session_id", d.c.SessionID, "turn_id", d.turn)
	t := time.NewTicker(d.every)
	defer t.Stop()
	for {
		select {
		case <-d.stop:
			return
		case <-t.C:
			d.flush()
		}
	}
}

// flush logs the text buffered since the last flush.
func (d *textDeltas) flush() {
	d.mu.Lock()
	text := d.buf.String()
	d.buf.Reset()
	d.mu.Unlock()
	if text == "" {
		return
	}
	ev := core.NewEvent(core.TypeAgentMessageDelta, core.LevelProgress, core.ActorAgent, core.MessageDeltaBody{Response: d.response, Text: text})
	if _, err := d.c.Log.Append(d.ctx, d.c.SessionID, core.AppendRequest{Epoch: d.c.Epoch, TurnID: d.turn, Events: []core.Event{ev}}); err != nil {
		// Deltas are a courtesy: the response's agent.message still
		// carries all of it. A lease lost ends the turn anyway.
		d.c.Logger.Warn("log streamed text; no more deltas for this response", "session_id", d.c.SessionID, "err", err)
		d.mu.Lock()
		d.failed = true
		d.mu.Unlock()
	}
}

// close stops the deltas once the response is over; a flush under way
// finishes first, so no delta is logged after the response's events.
func (d *textDeltas) close() {
	d.mu.Lock()
	started := d.started
	d.failed = true
	d.mu.Unlock()
	close(d.stop)
	if started {
		<-d.done
	}
}
