package sessions

import (
	"sync"

	bolt "go.etcd.io/bbolt"
)

// maxGroup bounds how many writes share one commit.
const maxGroup = 1000

// committer groups concurrent write transactions into one bbolt commit and
// one fsync without waiting on a timer (bbolt's Batch waits up to its
// MaxBatchDelay, which a lone write would pay in full): a write that finds
// no commit in flight starts one at once, and writes arriving while it
// syncs share the next.
type committer struct {
	db    *bolt.DB
	mu    sync.Mutex
	queue []*commitCall
	busy  bool
}

type commitCall struct {
	fn  func(*bolt.Tx) error
	err chan error
}

// do runs fn in a write transaction shared with concurrent callers and
// returns once that transaction is durable. fn may run twice (see commit),
// so it must derive everything from the transaction's state.
func (c *committer) do(fn func(*bolt.Tx) error) error {
	call := &commitCall{fn: fn, err: make(chan error, 1)}
	c.mu.Lock()
	c.queue = append(c.queue, call)
	lead := !c.busy
	c.busy = true
	c.mu.Unlock()
	if lead {
		go c.run()
	}
	return <-call.err
}

// run commits queued calls until the queue is empty.
func (c *committer) run() {
	for {
		c.mu.Lock()
		n := min(len(c.queue), maxGroup)
		if n == 0 {
			c.busy = false
			c.mu.Unlock()
			return
		}
		calls := c.queue[:n:n]
		c.queue = c.queue[n:]
		c.mu.Unlock()
		c.commit(calls)
	}
}

// commit runs calls in one transaction. When one fails, the transaction
// rolls back for all of them, so each is run again alone and only the
// failing one reports an error.
func (c *committer) commit(calls []*commitCall) {
	err := c.db.Update(func(tx *bolt.Tx) error {
		for _, call := range calls {
			if err := call.fn(tx); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil || len(calls) == 1 {
		for _, call := range calls {
			call.err <- err
		}
		return
	}
	for _, call := range calls {
		call.err <- c.db.Update(call.fn)
	}
}
