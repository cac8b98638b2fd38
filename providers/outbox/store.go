package outbox

import (
	"context"
	"fmt"

	"github.com/switchboardhq/switchboard/core"
)

// SessionStore wraps the store the runtime appends through, so sinks
// learn of new events without polling and without a goroutine per idle
// session.
type SessionStore struct {
	core.Store
	sinks map[string]*Sink
}

// Wrap returns st with Append watched by sinks (by name, the origin
// provider of the sessions each renders).
func Wrap(st core.Store, sinks ...*Sink) *SessionStore {
	m := make(map[string]*Sink, len(sinks))
	for _, s := range sinks {
		m[s.Name()] = s
	}
	return &SessionStore{Store: st, sinks: m}
}

// startsTurn reports whether an append opens a turn: every event a sink
// renders is logged inside a turn, so marking here covers them all.
func startsTurn(evs []core.Event) bool {
	for _, e := range evs {
		if e.Type == core.TypeTurnStarted {
			return true
		}
	}
	return false
}

// Append marks the session active in its sink before a turn starts (so a
// crash after the append cannot lose the turn's output), appends, then
// wakes the sink.
func (w *SessionStore) Append(ctx context.Context, sessionID string, req core.AppendRequest) ([]core.Event, error) {
	if len(w.sinks) == 0 {
		return w.Store.Append(ctx, sessionID, req)
	}
	var release func()
	if startsTurn(req.Events) {
		sess, err := w.Store.GetSession(ctx, sessionID)
		if err == nil && sess.Origin != nil {
			if sink := w.sinks[sess.Origin.Provider]; sink != nil {
				if release, err = sink.hold(ctx, sessionID); err != nil {
					return nil, fmt.Errorf("mark %s output: %w", sink.Name(), err)
				}
			}
		}
	}
	evs, err := w.Store.Append(ctx, sessionID, req)
	switch {
	case release != nil:
		release()
	case len(evs) > 0:
		for _, sink := range w.sinks {
			sink.wake(sessionID, false, false, false)
		}
	}
	return evs, err
}
