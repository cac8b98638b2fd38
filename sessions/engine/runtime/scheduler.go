package runtime

import (
	"context"
	"time"
)

// maxIdleWait bounds how long the scheduler sleeps without looking at the
// wake queue, so wakes written by other paths are seen. It sleeps no
// longer than a lease either (idleWait).
const maxIdleWait = 30 * time.Second

// dueAgain is how soon the scheduler looks again at a wake that is
// already due when it would otherwise sleep.
const dueAgain = 200 * time.Millisecond

// scheduler moves due wakes from the persisted queue to the workers and
// sleeps until the next one is due. A due session that is backing off
// after failed cycles waits for its retry time instead.
func (r *Runtime) scheduler(ctx context.Context) {
	defer r.wg.Done()
	clock := r.cfg.Clock
	for {
		wait := r.idleWait()
		now := clock.Now()
		due, err := r.cfg.Store.DueWakes(ctx, now, 1000)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			r.log.Error("read wake queue", "err", err)
			wait = r.cfg.RetryAfter
		}
		handed := false
		for _, id := range due {
			if at, ok := r.backingOff(id, now); ok {
				wait = min(wait, at.Sub(now))
				continue
			}
			r.Wake(id)
			handed = true
		}
		if len(due) == 1000 && handed {
			continue
		}
		if err == nil {
			if at, ok, nerr := r.cfg.Store.NextWake(ctx); nerr == nil && ok {
				if d := at.Sub(now); d > 0 && d < wait {
					wait = d
				} else if d <= 0 && (handed || len(due) == 0) {
					// Due but already handed to a worker; or due though
					// the read before found nothing due: a lease that
					// held the session ran out between the two reads.
					// Look again shortly rather than spin, or sleep
					// through the takeover.
					wait = min(wait, dueAgain)
				}
			}
		}
		wait = max(wait, time.Millisecond)
		c, stop := clock.Timer(wait)
		select {
		case <-ctx.Done():
			stop()
			return
		case <-c:
		case <-r.schedule:
			stop()
		}
	}
}

// idleWait is how long the scheduler sleeps when nothing is due or
// known to be: at most one lease TTL. Another replica's turns reach this
// one as notices, and a replica that dies can take the last of them with
// it (they are sent after its commits); this one then knows nothing of
// the lease left to run out, and finds it at its next look: within two
// lease TTLs of the death, not after maxIdleWait.
func (r *Runtime) idleWait() time.Duration {
	return min(maxIdleWait, r.cfg.LeaseTTL)
}

// poke makes the scheduler look at the queue now.
func (r *Runtime) poke() {
	select {
	case r.schedule <- struct{}{}:
	default:
	}
}

// sweeper deletes dedupe and idempotency keys past their retention, and
// with them the store's other records past it (expired console sign-ins,
// old failed sign-ins: see the stores' Sweep).
func (r *Runtime) sweeper(ctx context.Context) {
	defer r.wg.Done()
	t := time.NewTicker(r.cfg.SweepEvery)
	defer t.Stop()
	for {
		n, err := r.cfg.Store.Sweep(ctx, time.Now().Add(-r.cfg.KeyRetention))
		switch {
		case err != nil && ctx.Err() == nil:
			r.log.Warn("sweep expired records", "err", err)
		case n > 0:
			r.log.Info("swept expired records", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
