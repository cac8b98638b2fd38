package webhooks

import (
	"context"
	"fmt"
	"sync"

	"github.com/switchboardhq/switchboard/core"
)

// maxBatch bounds how many attempts one store transaction records.
const maxBatch = 256

// recorder records the workers' attempts in batches: the attempts that
// finished while the previous batch was being stored share the next
// transaction, and so one commit. No timer holds an attempt back: one
// that finds no batch under way is recorded at once.
type recorder struct {
	store core.DeliveryQueue
	mu    sync.Mutex
	queue []*recordCall
	busy  bool
}

type recordCall struct {
	rec  core.AttemptRecord
	done chan core.RecordedAttempt
}

// submit queues an attempt to be stored as RecordAttempt does and returns
// where its answer comes. Attempts are stored in the order submitted, so
// a stream's attempts submitted one after another are stored in order.
func (r *recorder) submit(ctx context.Context, c core.Claim, id string, res core.AttemptResult) <-chan core.RecordedAttempt {
	call := &recordCall{rec: core.AttemptRecord{Claim: c, ID: id, Result: res}, done: make(chan core.RecordedAttempt, 1)}
	r.mu.Lock()
	r.queue = append(r.queue, call)
	lead := !r.busy
	r.busy = true
	r.mu.Unlock()
	if lead {
		go r.run(ctx)
	}
	return call.done
}

// run stores queued attempts until the queue is empty.
func (r *recorder) run(ctx context.Context) {
	for {
		r.mu.Lock()
		n := min(len(r.queue), maxBatch)
		if n == 0 {
			r.busy = false
			r.mu.Unlock()
			return
		}
		calls := r.queue[:n:n]
		r.queue = r.queue[n:]
		r.mu.Unlock()
		r.batch(ctx, calls)
	}
}

// batch records calls in one transaction. When it fails as a whole (a
// store error, or a deadlock between replicas' batches), each attempt is
// recorded alone, so it fails only the attempts it is about.
func (r *recorder) batch(ctx context.Context, calls []*recordCall) {
	recs := make([]core.AttemptRecord, len(calls))
	for i, c := range calls {
		recs[i] = c.rec
	}
	out, err := r.store.RecordAttempts(ctx, recs)
	if err == nil && len(out) != len(calls) {
		err = fmt.Errorf("record attempts: %d answers for %d attempts", len(out), len(calls))
	}
	if err == nil {
		for i, c := range calls {
			c.done <- out[i]
		}
		return
	}
	if len(calls) == 1 {
		calls[0].done <- core.RecordedAttempt{Err: err}
		return
	}
	for _, c := range calls {
		stored, next, err := r.store.RecordAttempt(ctx, c.rec.Claim, c.rec.ID, c.rec.Result)
		c.done <- core.RecordedAttempt{Stored: stored, Next: next, Err: err}
	}
}
