package runtime

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/engine/harness"
)

// DefaultLeaseTTL is how long a session's lease lasts without renewal: a
// replica that dies has its turns resumed elsewhere after at most this.
const DefaultLeaseTTL = 15 * time.Second

// hold is a lease the runtime holds while a worker runs the session. It is
// renewed every third of its TTL; when renewal says another runtime took
// the session, or renewals keep failing for a whole TTL (the holder cannot
// know whether it still holds it), the session's work is cancelled with
// core.ErrLeaseLost: the turn stops where it is and stays open for the
// new holder. Renewals are paced by the wall clock even when a test drives
// the scheduler with its own: leases expire by the store's clock, which a
// runtime's fake clock does not move.
type hold struct {
	lease core.Lease
	stop  chan struct{}
	done  sync.WaitGroup
	// taken is set when a renewal was refused: another holder has the
	// session now.
	taken atomic.Bool
	// opened is the turn opened with the lease, if one was.
	opened string
}

// turnOpener is a store that opens a session's turn in the transaction
// that grants its lease (bolt.Store.TakeLeaseOpen): a wake then commits
// once before it calls the model, not twice.
type turnOpener interface {
	TakeLeaseOpen(ctx context.Context, sessionID, holder string, ttl time.Duration, open core.AppendRequest) (core.Lease, bool, []core.Event, error)
}

// runsOpened is a harness that runs a turn opened for its cycle
// (harness.Cycle.Opened).
type runsOpened interface{ RunsOpened() bool }

// prepared is what the runtime learned of a session while taking its
// lease, for the first cycle: the agent version it read, and the turn it
// opened.
type prepared struct {
	agent  *core.Agent
	opened string
}

// opening prepares the append that opens the session's turn with its
// lease: when the store can, and the session, idle with no turn open and
// primed (Config.Tools) or with nothing to prime, runs on a harness that
// takes a turn opened for it. The store decides,
// in the lease's transaction, whether the turn opens.
func (r *Runtime) opening(ctx context.Context, id string) (*core.AppendRequest, prepared) {
	if _, ok := r.cfg.Store.(turnOpener); !ok {
		return nil, prepared{}
	}
	s, err := r.cfg.Store.GetSession(ctx, id)
	if err != nil || s.TurnID != "" || s.Status == core.StatusArchived {
		return nil, prepared{}
	}
	a, err := r.cfg.Store.GetAgentVersion(ctx, s.Agent.ID, s.Agent.Version)
	if err != nil {
		return nil, prepared{}
	}
	p := prepared{agent: a}
	h, err := r.harness(a)
	if err != nil {
		return nil, p
	}
	if o, ok := h.(runsOpened); !ok || !o.RunsOpened() {
		return nil, p
	}
	if r.cfg.Tools != nil && s.LastSeq == 0 {
		// The toolset primes a session that has not run yet (its
		// platform's context, before its first turn): that turn opens
		// after it.
		return nil, p
	}
	req := harness.Opening(&harness.Cycle{Holder: r.cfg.Holder}, core.NewID(core.PrefixTurn))
	return &req, p
}

// takeLease takes the session's lease, opening its turn in the same
// transaction when open is set and the store can (turnOpener): the hold
// then names the turn. ok is false when another runtime holds it or has
// the session's affinity: that runtime runs it.
func (r *Runtime) takeLease(ctx context.Context, id string, cancel context.CancelCauseFunc, open *core.AppendRequest) (*hold, bool, error) {
	var l core.Lease
	var ok bool
	var err error
	var opened []core.Event
	if o, can := r.cfg.Store.(turnOpener); can && open != nil {
		l, ok, opened, err = o.TakeLeaseOpen(ctx, id, r.cfg.Holder, r.cfg.LeaseTTL, *open)
	} else {
		l, ok, err = r.cfg.Store.TakeLease(ctx, id, r.cfg.Holder, r.cfg.LeaseTTL)
	}
	if err != nil || !ok {
		return nil, false, err
	}
	h := &hold{lease: l, stop: make(chan struct{})}
	if len(opened) > 0 {
		h.opened = open.TurnID
	}
	h.done.Add(1)
	go r.renew(ctx, h, cancel)
	return h, true, nil
}

func (r *Runtime) renew(ctx context.Context, h *hold, cancel context.CancelCauseFunc) {
	defer h.done.Done()
	ttl := r.cfg.LeaseTTL
	renewed := core.WallClock{}.Now()
	for {
		c, stop := core.WallClock{}.Timer(ttl / 3)
		select {
		case <-h.stop:
			stop()
			return
		case <-ctx.Done():
			stop()
			return
		case <-c:
		}
		err := r.cfg.Store.RenewLease(ctx, h.lease, ttl)
		switch {
		case err == nil:
			renewed = core.WallClock{}.Now()
		case errors.Is(err, core.ErrLeaseLost):
			h.taken.Store(true)
			r.log.Warn("session lease lost to another runtime; stopping its turn here", "session_id", h.lease.SessionID, "epoch", h.lease.Epoch)
			cancel(core.ErrLeaseLost)
			return
		case core.WallClock{}.Now().Sub(renewed) >= ttl:
			r.log.Warn("session lease could not be renewed for its whole TTL; stopping its turn here", "session_id", h.lease.SessionID, "err", err)
			cancel(core.ErrLeaseLost)
			return
		default:
			r.log.Debug("renew session lease", "session_id", h.lease.SessionID, "err", err)
		}
	}
}

// release stops renewing and gives the lease back, so another runtime may
// take the session at once.
func (r *Runtime) release(ctx context.Context, h *hold) {
	close(h.stop)
	h.done.Wait()
	if err := r.cfg.Store.ReleaseLease(context.WithoutCancel(ctx), h.lease); err != nil {
		r.log.Debug("release session lease", "session_id", h.lease.SessionID, "err", err)
	}
}

// heartbeat tells the other runtimes sharing the store that this one is
// alive, so sessions it ran last wait for it (their sandboxes are here),
// until ctx ends.
func (r *Runtime) heartbeat(ctx context.Context) {
	defer r.wg.Done()
	for {
		if err := r.cfg.Store.Heartbeat(ctx, r.cfg.Holder, r.cfg.LeaseTTL, false); err != nil && ctx.Err() == nil {
			r.log.Debug("heartbeat", "err", err)
		}
		c, stop := core.WallClock{}.Timer(r.cfg.LeaseTTL / 3)
		select {
		case <-ctx.Done():
			stop()
			return
		case <-c:
		}
	}
}
