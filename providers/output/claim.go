package output

import (
	"context"
	"errors"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// DefaultClaimTTL is how long a claim on a session's output lasts without
// renewal, as a session's lease does by default.
const DefaultClaimTTL = 15 * time.Second

// hold is the claim a worker holds on its session's output while it
// renders. It is renewed every third of the claim's TTL; when renewal
// says another holder claimed the session, or renewals keep failing for a
// whole TTL (the worker cannot know whether it still holds it), ctx is
// cancelled with core.ErrLeaseLost, so nothing more is rendered here.
// Renewals are paced by the wall clock; the claim expires by the store's.
type hold struct {
	claim  core.Claim
	ctx    context.Context
	cancel context.CancelCauseFunc
	done   chan struct{}
}

// claim waits until the worker holds the session's output: another
// holder's claim is retried every ClaimRetry, so the session is picked up
// once that claim is released, or expires because its holder died. ok is
// false once ctx ends.
func (s *Sink) claim(ctx context.Context, id string) (*hold, bool) {
	waiting := false
	for {
		c, ok, err := s.cfg.Store.ClaimSink(ctx, s.cfg.Name, id, s.cfg.Holder, s.cfg.ClaimTTL)
		switch {
		case ok:
			hctx, cancel := context.WithCancelCause(ctx)
			h := &hold{claim: c, ctx: hctx, cancel: cancel, done: make(chan struct{})}
			go s.renew(id, h)
			return h, true
		case err != nil && ctx.Err() == nil:
			s.log.Warn("claim a session's output; retrying", "session_id", id, "retry_in", s.cfg.ClaimRetry, "err", err)
		case err == nil && !waiting:
			waiting = true
			s.log.Debug("another holder renders this session's output; waiting for its claim to end", "session_id", id)
		}
		if !sleep(ctx, s.cfg.ClaimRetry) {
			return nil, false
		}
	}
}

func (s *Sink) renew(id string, h *hold) {
	defer close(h.done)
	ttl := s.cfg.ClaimTTL
	renewed := time.Now()
	for {
		if !sleep(h.ctx, ttl/3) {
			return
		}
		err := s.cfg.Store.RenewSinkClaim(h.ctx, s.cfg.Name, id, h.claim, ttl)
		switch {
		case err == nil:
			renewed = time.Now()
		case h.ctx.Err() != nil:
			return
		case errors.Is(err, core.ErrLeaseLost):
			h.cancel(core.ErrLeaseLost)
			return
		case time.Since(renewed) >= ttl:
			s.log.Warn("output claim could not be renewed for its whole TTL; stopping its rendering here", "session_id", id, "err", err)
			h.cancel(core.ErrLeaseLost)
			return
		default:
			s.log.Debug("renew output claim", "session_id", id, "err", err)
		}
	}
}

// release stops renewing and gives the claim back, so another holder may
// claim the session at once; a claim already lost is left alone.
func (s *Sink) release(ctx context.Context, id string, h *hold) {
	h.cancel(nil)
	<-h.done
	if err := s.cfg.Store.ReleaseSinkClaim(context.WithoutCancel(ctx), s.cfg.Name, id, h.claim); err != nil {
		s.log.Debug("release output claim", "session_id", id, "err", err)
	}
}

// lost reports whether err, or ctx's end, says the claim went to another
// holder.
func lost(ctx context.Context, err error) bool {
	return errors.Is(err, core.ErrLeaseLost) || errors.Is(context.Cause(ctx), core.ErrLeaseLost)
}
