package output

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// work follows one session: it claims the session's output, then
// renders it (follow) until it lets go. A worker whose claim went to
// another holder stops rendering and waits to claim the session again,
// for that holder may die before it is done.
func (s *Sink) work(ctx context.Context, id string, e *entry) {
	defer s.wg.Done()
	for {
		h, ok := s.claim(ctx, id)
		if !ok {
			return
		}
		s.log.Debug("rendering this session's output", "session_id", id, "epoch", h.claim.Epoch)
		retired := s.follow(h.ctx, id, e, h.claim)
		s.release(ctx, id, h)
		if retired || ctx.Err() != nil {
			return
		}
		s.log.Warn("another holder claimed this session's output; rendering stopped here", "session_id", id, "epoch", h.claim.Epoch)
	}
}

// follow acknowledges queued inputs and renders the log from the saved
// position under claim c, and lets go once the session has no open turn
// and everything is rendered (retired). It returns false when ctx ends or
// the claim is lost.
func (s *Sink) follow(ctx context.Context, id string, e *entry, c core.Claim) (retired bool) {
	log := s.log.With("session_id", id)
	wait := s.cfg.RetryMin
	for {
		e.mu.Lock()
		e.poked = false
		inputs := e.inputs
		e.inputs = false
		e.mu.Unlock()
		sess, err := s.pass(ctx, id, e, c, inputs)
		if errors.Is(err, core.ErrNotFound) {
			log.Warn("session gone; nothing to render")
			if s.retire(ctx, id, e, true) {
				s.drop(id, e)
			}
			return true
		}
		if ctx.Err() != nil || lost(ctx, err) {
			return false
		}
		if err != nil {
			log.Warn("render output; retrying", "retry_in", wait, "err", err)
			if !sleep(ctx, wait) {
				return false
			}
			wait = min(wait*2, s.cfg.RetryMax)
			continue
		}
		wait = s.cfg.RetryMin
		if sess.Status == core.StatusArchived {
			s.closed(ctx, sess)
		}
		if s.retire(ctx, id, e, false) {
			s.drop(id, e)
			log.Debug("output rendered to the end of the log; letting go of the session", "last_seq", sess.LastSeq)
			return true
		}
		// Wait for the next append; look again now and then, for a turn
		// that ends without one (its session archived mid-turn).
		t := time.NewTimer(s.cfg.Recheck)
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-e.signal:
		case <-t.C:
		}
		t.Stop()
	}
}

// pass acknowledges the queued inputs (when inputs is set) and renders
// what the log holds past the saved position. A panic in it (a
// renderer's, most likely) is a failed pass, retried with backoff as any
// failure: logged once with its stack, it delays this session's output
// and no other's. The next pass starts from the saved position.
func (s *Sink) pass(ctx context.Context, id string, e *entry, c core.Claim, inputs bool) (sess *core.Session, err error) {
	defer core.Recover(s.log, &err, "session_id", id)
	sess, err = s.cfg.Store.GetSession(ctx, id)
	if err != nil {
		return nil, err
	}
	if inputs {
		s.received(ctx, sess)
	}
	return sess, s.drain(ctx, sess, c, &e.targets)
}

// closed tells a Closer renderer that the session is archived; a failure,
// a panic included, is logged, not retried (the platform only shows it
// open).
func (s *Sink) closed(ctx context.Context, sess *core.Session) {
	defer core.Recover(s.log, nil, "session_id", sess.ID)
	c, ok := s.cfg.Renderer.(Closer)
	if !ok {
		return
	}
	if err := c.Closed(ctx, sess); err != nil && ctx.Err() == nil {
		s.log.Warn("show the session closed", "session_id", sess.ID, "err", err)
	}
}

// received hands the session's pending inputs to the renderer.
func (s *Sink) received(ctx context.Context, sess *core.Session) {
	pending, err := s.cfg.Store.Pending(ctx, sess.ID)
	if err == nil && len(pending) > 0 {
		err = s.cfg.Renderer.Received(ctx, sess, pending)
	}
	if err != nil && ctx.Err() == nil {
		s.log.Warn("acknowledge inputs", "session_id", sess.ID, "err", err)
	}
}

// drain renders every logged event after the saved position, saving
// under claim c. The position is read after the claim was granted, so an
// intent the previous holder saved is found and honoured.
func (s *Sink) drain(ctx context.Context, sess *core.Session, c core.Claim, targets *turnTargets) error {
	pos, err := s.cfg.Store.SinkPosition(ctx, s.cfg.Name, sess.ID)
	if err != nil {
		return err
	}
	saved := pos.Seq
	t := s.Thread(sess, pos)
	t.claim = c
	for {
		evs, err := s.cfg.Store.Events(ctx, sess.ID, t.seq, s.cfg.Batch)
		if err != nil || len(evs) == 0 {
			if err == nil && t.seq != saved {
				err = t.Save(ctx)
			}
			return err
		}
		for _, ev := range evs {
			key, err := targets.of(ctx, s.cfg.Store, sess, ev)
			if err != nil {
				return err
			}
			acted := false
			if answersAt(sess, key) == s.cfg.Name {
				t.Key = key
				if acted, err = s.render(ctx, t, ev); err != nil {
					s.fenced(ctx, t, err)
					return err
				}
			}
			t.seq = ev.Seq
			if acted {
				if err := t.Save(ctx); err != nil {
					s.fenced(ctx, t, err)
					return err
				}
				saved = t.seq
			}
		}
	}
}

// fenced lets a Fencer take down what the render just done may have shown
// after the claim went to another holder (err or ctx's end says it did).
// ctx is over by then: the call gets a deadline of its own.
func (s *Sink) fenced(ctx context.Context, t *Thread, err error) {
	f, ok := s.cfg.Renderer.(Fencer)
	if !ok || !lost(ctx, err) {
		return
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), fenceTimeout)
	defer cancel()
	if err := f.Fenced(fctx, t); err != nil {
		s.log.Warn("take down what a fenced render showed", "session_id", t.Session.ID, "err", err)
	}
}

// fenceTimeout bounds a Fencer's call: the worker waits on it before it
// waits to claim the session again.
const fenceTimeout = 10 * time.Second

// answersAt is the provider of key, the key an event of sess answers at;
// the origin's provider when it is the origin (whose key a session may
// not have).
func answersAt(sess *core.Session, key string) string {
	if sess.Origin != nil && key == sess.Origin.Key {
		return sess.Origin.Provider
	}
	provider, _, _ := strings.Cut(key, ":")
	return provider
}

// render renders one event, retrying failures with backoff until it
// succeeds, fails permanently or ctx ends.
func (s *Sink) render(ctx context.Context, t *Thread, ev core.Event) (bool, error) {
	wait := s.cfg.RetryMin
	ev = relayed(ev)
	for {
		acted, err := s.cfg.Renderer.Render(ctx, t, ev)
		switch {
		case err == nil:
			return acted, nil
		case ctx.Err() != nil:
			return false, ctx.Err()
		case errors.Is(err, core.ErrLeaseLost):
			return false, err // another holder renders it now
		case IsPermanent(err):
			s.log.Warn("output not rendered: giving up on this event", "session_id", t.Session.ID, "seq", ev.Seq, "type", ev.Type, "err", err)
			return true, nil
		}
		s.log.Warn("render failed; retrying", "session_id", t.Session.ID, "seq", ev.Seq, "type", ev.Type, "retry_in", wait, "err", err)
		if !sleep(ctx, wait) {
			return false, ctx.Err()
		}
		wait = min(wait*2, s.cfg.RetryMax)
	}
}

// retire lets go of the session when nothing is left to render: no turn
// open, no poke since the worker looked, the saved position at the end of
// the log, and the store's mark released (which it refuses if a turn
// started meanwhile). force lets go regardless (the session is gone).
func (s *Sink) retire(ctx context.Context, id string, e *entry, force bool) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !force {
		if e.poked || e.inputs {
			return false
		}
		sess, err := s.cfg.Store.GetSession(ctx, id)
		if err != nil || (sess.TurnID != "" && sess.Status != core.StatusArchived) {
			return false
		}
		pos, err := s.cfg.Store.SinkPosition(ctx, s.cfg.Name, id)
		if err != nil || pos.Seq < sess.LastSeq {
			return false
		}
		released, err := s.cfg.Store.ReleaseSink(ctx, s.cfg.Name, id, pos.Seq)
		if err != nil {
			s.log.Warn("release session", "session_id", id, "err", err)
		}
		if !released {
			return false
		}
	} else if _, err := s.cfg.Store.ReleaseSink(ctx, s.cfg.Name, id, 0); err != nil {
		s.log.Warn("release session", "session_id", id, "err", err)
	}
	e.retired = true
	return true
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
