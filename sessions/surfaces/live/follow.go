package live

import (
	"context"
	"fmt"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// EventReader reads a session's log.
type EventReader interface {
	Events(ctx context.Context, sessionID string, after uint64, limit int) ([]core.Event, error)
}

// Follower yields a session's events after a seq: the logged history,
// then live events, with no gap and no duplicate at the seam.
type Follower struct {
	sub   *Sub
	store EventReader
	id    string
	last  uint64
}

const pageSize = 500

// Follow subscribes before reading history, so nothing committed between
// the two is missed; events already read are skipped by seq.
func Follow(h *Hub, store EventReader, sessionID string, after uint64, buf int) *Follower {
	return &Follower{sub: h.Subscribe(sessionID, buf), store: store, id: sessionID, last: after}
}

// Close stops following.
func (f *Follower) Close() { f.sub.Close() }

// Last is the seq of the last event returned.
func (f *Follower) Last() uint64 { return f.last }

// Backlog returns the logged events after the last one returned, up to a
// page; an empty answer means the follower is caught up.
func (f *Follower) Backlog(ctx context.Context) ([]Frame, error) {
	evs, err := f.store.Events(ctx, f.id, f.last, pageSize)
	if err != nil {
		return nil, fmt.Errorf("read log: %w", err)
	}
	frames := make([]Frame, 0, len(evs))
	for _, e := range evs {
		fr, err := NewFrame(e)
		if err != nil {
			return nil, err
		}
		frames = append(frames, fr)
		f.last = e.Seq
	}
	return frames, nil
}

// Next waits for the next live event or ctx's end; idle fires when the
// heartbeat channel does and returns (nil, nil). A gap (the follower fell
// behind) is filled from the store.
func (f *Follower) Next(ctx context.Context, heartbeat <-chan time.Time) ([]Frame, error) {
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-heartbeat:
			return nil, nil
		case <-f.sub.Lagged:
			evs, err := f.Backlog(ctx)
			if err != nil || len(evs) > 0 {
				return evs, err
			}
		case fr := <-f.sub.C:
			switch seq := fr.Event.Seq; {
			case seq <= f.last:
				continue // already sent from the history
			case seq == f.last+1:
				f.last = seq
				return f.burst(ctx, fr)
			default:
				return f.Backlog(ctx)
			}
		}
	}
}

// maxBurst bounds the frames one Next returns beyond the first.
const maxBurst = 64

// burst returns first with the live frames already waiting behind it, so
// a stream that fell behind, or events committed together, cost one
// write and one flush rather than one each.
func (f *Follower) burst(ctx context.Context, first Frame) ([]Frame, error) {
	out := []Frame{first}
	for range maxBurst {
		select {
		case fr := <-f.sub.C:
			switch seq := fr.Event.Seq; {
			case seq <= f.last:
				continue
			case seq == f.last+1:
				f.last = seq
				out = append(out, fr)
				continue
			}
			// A gap: the store has it, and this frame after it.
			more, err := f.Backlog(ctx)
			return append(out, more...), err
		default:
		}
		break
	}
	return out, nil
}
