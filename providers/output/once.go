package output

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Intent is a platform call announced and not yet known to have happened.
// It lives in the renderer's state, so it is saved with the position.
type Intent struct {
	Key string `json:"key"`
	At  int64  `json:"at"` // unix seconds, when it was announced
}

// UnmarshalJSON also reads an intent saved as its bare key.
func (in *Intent) UnmarshalJSON(b []byte) error {
	var key string
	if json.Unmarshal(b, &key) == nil {
		*in = Intent{Key: key}
		return nil
	}
	type plain Intent
	if err := json.Unmarshal(b, (*plain)(in)); err != nil {
		return fmt.Errorf("intent: %w", err)
	}
	return nil
}

// Post is a platform call that must happen exactly once (a reply, a check
// run, an activity).
type Post struct {
	// Key names the call uniquely within the session (its event and part);
	// the platform object carries it, so Find can recognise it.
	Key string
	// Point names the call for crash tests: the sink's Failpoint is called
	// with "before_"+Point once the intent is durable and "after_"+Point
	// once the call returned; "" for none.
	Point string
	// Find reports whether the platform has the call's result, made before
	// a crash left the intent unconfirmed. An error is retried: a look-up
	// that failed must not pass for "not made".
	Find func(ctx context.Context, in Intent) (found bool, err error)
	// Do makes the call.
	Do func(ctx context.Context) error
}

// PostOnce makes p exactly once across crashes: an unconfirmed intent for
// the same key is looked up first; otherwise the intent is saved (with
// state, the renderer's state that holds *intent) before the call, and
// cleared after it. The position that records the event as rendered is
// saved by the sink once Render returns.
func (t *Thread) PostOnce(ctx context.Context, state any, intent **Intent, p Post) error {
	if in := *intent; in != nil && in.Key == p.Key {
		found, err := p.Find(ctx, *in)
		if err != nil {
			return err
		}
		if found {
			t.sink.log.Info("found on the platform after a restart; not made again", "session_id", t.Session.ID, "key", p.Key)
			*intent = nil
			return nil
		}
	}
	*intent = &Intent{Key: p.Key, At: t.now().Unix()}
	if err := t.SaveState(ctx, state); err != nil {
		return err
	}
	t.failpoint(p.Point, "before_")
	if err := p.Do(ctx); err != nil {
		return err
	}
	t.failpoint(p.Point, "after_")
	*intent = nil
	return nil
}

// SaveState encodes state as the renderer's state and saves the position
// now, before the event being rendered.
func (t *Thread) SaveState(ctx context.Context, state any) error {
	raw, err := json.Marshal(state)
	if err != nil {
		return fmt.Errorf("encode sink state: %w", err)
	}
	t.State = raw
	return t.Save(ctx)
}

func (t *Thread) failpoint(point, when string) {
	if point != "" {
		t.sink.cfg.Failpoint(when + point)
	}
}

func (t *Thread) now() time.Time { return t.sink.cfg.Now() }
