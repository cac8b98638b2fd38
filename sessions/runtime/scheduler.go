package runtime

import (
	"context"
	"time"
)

// maxIdleWait bounds how long the scheduler sleeps without looking at the
// wake queue, so wakes written by other paths are seen.
const maxIdleWait = 30 * time.Second

// scheduler moves due wakes from the persisted queue to the workers and
// sleeps until the next one is due.
func (r *Runtime) scheduler(ctx context.Context) {
	defer r.wg.Done()
	for {
		wait := maxIdleWait
		due, err := r.cfg.Store.DueWakes(ctx, time.Now(), 1000)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			r.log.Error("read wake queue", "err", err)
			wait = r.cfg.RetryAfter
		}
		for _, id := range due {
			r.Wake(id)
		}
		if len(due) == 1000 {
			continue
		}
		if err == nil {
			if at, ok, nerr := r.cfg.Store.NextWake(ctx); nerr == nil && ok {
				if d := time.Until(at); d < wait {
					wait = d
				}
			}
		}
		if wait <= 0 {
			// Due but already handed to a worker; look again shortly rather
			// than spin while it runs.
			wait = 200 * time.Millisecond
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		case <-r.schedule:
			t.Stop()
		}
	}
}

// poke makes the scheduler look at the queue now.
func (r *Runtime) poke() {
	select {
	case r.schedule <- struct{}{}:
	default:
	}
}
