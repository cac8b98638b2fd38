package output

import (
	"context"

	"github.com/switchboardhq/switchboard/core"
)

// turnTargets know where each turn of a session answers: the source key
// of the turn's first input. They are filled as the sink reads the log,
// and from the log's start once when the sink starts in the middle of a
// turn whose inputs it did not read.
type turnTargets struct {
	keys map[string]string // turn id → key
	read uint64            // the log is read up to this seq
}

// note records the target of the turn of an input.
func (tt *turnTargets) note(ev core.Event) {
	if !core.IsInput(ev.Type) || ev.TurnID == "" || ev.SourceKey == "" {
		return
	}
	if tt.keys == nil {
		tt.keys = map[string]string{}
	}
	if _, ok := tt.keys[ev.TurnID]; !ok {
		tt.keys[ev.TurnID] = ev.SourceKey
	}
}

// of is the key ev answers at: an input's own source, else its turn's;
// the session's origin when there is none.
func (tt *turnTargets) of(ctx context.Context, store Store, sess *core.Session, ev core.Event) (string, error) {
	origin := ""
	if sess.Origin != nil {
		origin = sess.Origin.Key
	}
	if core.IsInput(ev.Type) {
		tt.note(ev)
		tt.read = max(tt.read, ev.Seq)
		if ev.SourceKey != "" {
			return ev.SourceKey, nil
		}
		return origin, nil
	}
	if ev.TurnID == "" {
		return origin, nil
	}
	if _, ok := tt.keys[ev.TurnID]; !ok && ev.Seq > tt.read+1 {
		// The turn's inputs came before where this sink started.
		if err := tt.readUpTo(ctx, store, sess.ID, ev.Seq); err != nil {
			return "", err
		}
	}
	tt.read = max(tt.read, ev.Seq)
	if key, ok := tt.keys[ev.TurnID]; ok {
		return key, nil
	}
	return origin, nil
}

// readUpTo reads the log's inputs from where it was read to seq.
func (tt *turnTargets) readUpTo(ctx context.Context, store Store, sessionID string, seq uint64) error {
	for tt.read+1 < seq {
		evs, err := store.Events(ctx, sessionID, tt.read, min(int(seq-tt.read-1), 1000))
		if err != nil {
			return err
		}
		if len(evs) == 0 {
			return nil
		}
		for _, e := range evs {
			tt.note(e)
			tt.read = e.Seq
		}
	}
	return nil
}
