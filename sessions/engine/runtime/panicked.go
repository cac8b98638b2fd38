package runtime

import (
	"context"
	"errors"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/engine/harness"
)

// guardedCycle runs one cycle of the session. A panic in it (a harness,
// a model client, the builder of its tools) is the session's alone:
// logged once with its stack, it ends the session's turn with a
// retryable internal error (harness.EndPanicked), and the worker goes on
// with other sessions.
func (r *Runtime) guardedCycle(ctx context.Context, id string, epoch uint64, inputs <-chan struct{}, prep prepared) error {
	err := r.recoveredCycle(ctx, id, epoch, inputs, prep)
	if !errors.Is(err, core.ErrPanicked) {
		return err
	}
	// The turn's own context may be cancelled; its end must land still.
	wctx := context.WithoutCancel(ctx)
	r.reset(wctx, id)
	c := &harness.Cycle{SessionID: id, Holder: r.cfg.Holder, Epoch: epoch, Log: r.store, Logger: r.log}
	if _, err := harness.EndPanicked(wctx, c); err != nil {
		return err
	}
	return r.settle(wctx, id, epoch)
}

func (r *Runtime) recoveredCycle(ctx context.Context, id string, epoch uint64, inputs <-chan struct{}, prep prepared) (err error) {
	defer core.Recover(r.log, &err, "session_id", id)
	return r.cycle(ctx, id, epoch, inputs, prep)
}

// reset tells the harnesses that keep a session's state beyond its log
// (an ACP agent's process) to drop it: the turn that used it panicked.
func (r *Runtime) reset(ctx context.Context, id string) {
	hs := []harness.Harness{r.cfg.Harness}
	for _, h := range r.cfg.Runtimes {
		hs = append(hs, h)
	}
	for _, h := range hs {
		if rs, ok := h.(harness.Resetter); ok {
			rs.Reset(ctx, id)
		}
	}
}

// runGuarded runs the session's cycles (runSession). A panic outside a
// cycle (taking, renewing or releasing its lease, a move between
// replicas) backs the session off as a failed cycle does; the worker
// goes on with other sessions.
func (r *Runtime) runGuarded(ctx context.Context, id string, a *activeTurn) {
	var err error
	defer func() {
		if err == nil {
			return
		}
		r.mu.Lock()
		delete(r.running, id)
		r.mu.Unlock()
		r.failed(ctx, id, 0, err)
	}()
	defer core.Recover(r.log, &err, "session_id", id)
	r.runSession(ctx, id, a)
}
