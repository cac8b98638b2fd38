package bolt

import (
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/writehealth"
	"go.etcd.io/bbolt"
)

// maxGroup bounds how many writes share one commit.
const maxGroup = 1000

// maxBatchTime bounds the time a commit spends running its writes before
// it syncs: the writes after are left to the next commit, so that a
// backlog of turn and posting writes never makes a long transaction for
// the acks queued behind it. Inputs (writeInput) always run.
const maxBatchTime = 10 * time.Millisecond

// maxGather bounds how long a commit waits for the writers of the last
// one (gather): about what a sync takes on a fast disk.
const maxGather = 2 * time.Millisecond

// committer groups concurrent write transactions into one bbolt commit and
// one fsync without waiting on a timer (bbolt's Batch waits up to its
// MaxBatchDelay, which a lone write would pay in full): a write that finds
// no commit in flight starts one at once, and writes arriving while it
// syncs share the next. Only after a commit of several writes does the
// next wait, briefly, for as many (gather).
//
// It is also where the commit stream starts: once a commit is durable, the
// changes its writes report are published, in commit order, before any of
// the writers is answered.
//
// It runs on a goroutine of its own and recovers no panic: one there stops
// the process, whatever its writers recover, since a store whose commit
// panicked cannot be trusted.
type committer struct {
	db      *bbolt.DB
	health  *writehealth.Health
	commits *core.Commits
	mu      sync.Mutex
	queue   []*commitCall
	// inputs are the writes an ack waits for (writeInput): each commit
	// takes them first.
	inputs []*commitCall
	busy   bool
	// batchTime, when set (tests), replaces maxBatchTime.
	batchTime time.Duration
	// arrived, when set, is closed at the next write queued (gather).
	arrived chan struct{}
	// gatherBound, when set (tests), replaces gather's bound.
	gatherBound func(took time.Duration) time.Duration
	// queued, when set (tests), is told of each write queued.
	queued func()
}

// writeFunc is a write transaction's body; it reports what it changed.
type writeFunc func(*bbolt.Tx) ([]core.Change, error)

type commitCall struct {
	fn      writeFunc
	input   bool
	changes []core.Change
	err     chan error
}

// do runs fn in a write transaction shared with concurrent callers and
// returns once that transaction is durable. fn may run twice (see commit),
// so it must derive everything from the transaction's state.
func (c *committer) do(fn func(*bbolt.Tx) error) error {
	return c.write(func(tx *bbolt.Tx) ([]core.Change, error) { return nil, fn(tx) })
}

// write is do for a write that changes sessions: it returns once the
// transaction is durable and the changes fn reported are published.
func (c *committer) write(fn writeFunc) error {
	return c.enqueue(&commitCall{fn: fn, err: make(chan error, 1)})
}

// writeInput is write for what an ack waits for (a webhook's or an API
// request's input and its dedupe keys): it goes into the next commit
// ahead of the writes queued before it, whatever their number.
func (c *committer) writeInput(fn writeFunc) error {
	return c.enqueue(&commitCall{fn: fn, input: true, err: make(chan error, 1)})
}

func (c *committer) enqueue(call *commitCall) error {
	c.mu.Lock()
	if call.input {
		c.inputs = append(c.inputs, call)
	} else {
		c.queue = append(c.queue, call)
	}
	if c.arrived != nil {
		close(c.arrived)
		c.arrived = nil
	}
	lead := !c.busy
	c.busy = true
	c.mu.Unlock()
	if c.queued != nil {
		c.queued()
	}
	if lead {
		go c.run()
	}
	return <-call.err
}

// run commits queued calls until the queue is empty.
func (c *committer) run() {
	last, took := 0, time.Duration(0)
	for {
		c.gather(last, took)
		c.mu.Lock()
		ni := min(len(c.inputs), maxGroup)
		if len(c.queue) > 0 {
			// Inputs go first but never take every slot: a flood of them
			// would hold turns' writes (and lease renewals) back for as
			// long as it lasts.
			ni = min(ni, maxGroup-1)
		}
		n := min(len(c.queue), maxGroup-ni)
		if ni+n == 0 {
			c.busy = false
			c.mu.Unlock()
			return
		}
		calls := append(c.inputs[:ni:ni], c.queue[:n]...)
		c.inputs = c.inputs[ni:]
		c.queue = c.queue[n:]
		budget := maxBatchTime
		if c.batchTime > 0 {
			budget = c.batchTime
		}
		c.mu.Unlock()
		start := time.Now()
		left := c.commit(calls, budget)
		took = time.Since(start)
		last = len(calls) - len(left)
		if len(left) > 0 {
			c.mu.Lock()
			c.queue = append(left, c.queue...)
			c.mu.Unlock()
		}
	}
}

// gather lets the writers the last commit answered (last of them) queue
// their next writes before the next commit starts, so that a steady load
// shares each sync between all its writers rather than splitting into
// two cohorts that commit in turn. It waits while the queue is short of
// last, at most a quarter of what the last commit took (took) and never
// more than maxGather, so it costs a lone write nothing and a loaded one
// a fraction of a commit.
func (c *committer) gather(last int, took time.Duration) {
	if last < 2 {
		return
	}
	// An input never waits for more.
	bound := min(took/4, maxGather)
	c.mu.Lock()
	if c.gatherBound != nil {
		bound = c.gatherBound(took)
	}
	c.mu.Unlock()
	deadline := time.Now().Add(bound)
	for {
		c.mu.Lock()
		n := len(c.queue)
		if n >= last || len(c.inputs) > 0 || !time.Now().Before(deadline) {
			c.mu.Unlock()
			return
		}
		c.arrived = make(chan struct{})
		wait := c.arrived
		c.mu.Unlock()
		t := time.NewTimer(time.Until(deadline))
		select {
		case <-wait:
		case <-t.C:
		}
		t.Stop()
	}
}

// commit runs calls in one transaction, the inputs among them first, and
// returns the calls it left for the next commit: those that would have
// started once the others had run for budget, except the first write
// after the inputs. When one fails, the
// transaction rolls back for all of them, so each is run again alone and
// only the failing one reports an error.
func (c *committer) commit(calls []*commitCall, budget time.Duration) (left []*commitCall) {
	err := c.update(func(tx *bbolt.Tx) error {
		start := time.Now()
		// The first write after the inputs runs whatever the inputs took,
		// so each commit moves the other writes on by one at least.
		wrote := false
		for i, call := range calls {
			if i > 0 && !call.input && wrote && time.Since(start) > budget {
				calls, left = calls[:i], calls[i:]
				return nil
			}
			wrote = wrote || !call.input
			ch, err := call.fn(tx)
			if err != nil {
				return err
			}
			call.changes = ch
		}
		return nil
	})
	if err == nil || len(calls) == 1 {
		for _, call := range calls {
			if err == nil {
				c.commits.Publish(call.changes...)
			}
			call.err <- err
		}
		return left
	}
	for _, call := range calls {
		err := c.update(func(tx *bbolt.Tx) error {
			ch, err := call.fn(tx)
			call.changes = ch
			return err
		})
		if err == nil {
			c.commits.Publish(call.changes...)
		}
		call.err <- err
	}
	return left
}

// update runs fn in a write transaction and tells the store's health
// whether the commit itself failed: an error fn returns is a refused
// write (not found, conflict), not a store that cannot write.
func (c *committer) update(fn func(*bbolt.Tx) error) error {
	var refused bool
	err := c.db.Update(func(tx *bbolt.Tx) error {
		err := fn(tx)
		refused = err != nil
		return err
	})
	switch {
	case err == nil:
		c.health.Succeeded()
	case !refused:
		c.health.Failed(err)
	}
	return err
}
