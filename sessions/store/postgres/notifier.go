package postgres

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// notifier sends this store's notices to the other replicas after the
// writes that report them have committed, from one goroutine, as many as
// are waiting in one short transaction. A NOTIFY inside the writing
// transaction would hold the database's notification lock from the
// commit until its WAL flush, serializing every write of every replica at
// the disk's sync rate; sent afterwards, the writes' commits share
// flushes again, and the notices' transaction does not wait for its own
// flush (synchronous_commit off): a notice is a hint, and one lost in a
// crash leaves the others to catch up by seq at the session's next notice
// or their next look at the store.
type notifier struct {
	send func(ctx context.Context, payloads []string) error
	log  *slog.Logger
	// max bounds the notices waiting: past it, they are replaced by one
	// that tells the receivers they lagged.
	max int

	mu      sync.Mutex
	queue   []string
	closed  bool
	wake    chan struct{} // cap 1
	stopped chan struct{}
	cancel  context.CancelFunc
}

const (
	// notifyBatch bounds the notices one statement sends.
	notifyBatch = 1000
	// maxWaitingNotices bounds the queue while the database does not
	// take them.
	maxWaitingNotices = 100_000
	// notifyRetryFirst and notifyRetryMax bound the back-off after a
	// failed send.
	notifyRetryFirst = 50 * time.Millisecond
	notifyRetryMax   = 5 * time.Second
	// notifyFlush bounds how long Close waits for the last notices.
	notifyFlush = 2 * time.Second
)

// newNotifier starts a notifier that sends with send and keeps at most
// max notices waiting (lagged stands for them past that).
func newNotifier(send func(ctx context.Context, payloads []string) error, log *slog.Logger, lagged string, max int) *notifier {
	ctx, cancel := context.WithCancel(context.Background())
	n := &notifier{send: send, log: log, max: max, wake: make(chan struct{}, 1), stopped: make(chan struct{}), cancel: cancel}
	go n.run(ctx, lagged)
	return n
}

// add queues payloads, in the order their writes committed.
func (n *notifier) add(payloads []string) {
	if len(payloads) == 0 {
		return
	}
	n.mu.Lock()
	if !n.closed {
		n.queue = append(n.queue, payloads...)
	}
	n.mu.Unlock()
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

// take removes up to notifyBatch waiting notices; lagged replaces them all
// when too many wait.
func (n *notifier) take(lagged string) (batch []string, closed bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.queue) > n.max {
		n.log.Warn("too many notices waiting for the database; the other replicas will catch up from the store", "notices", len(n.queue))
		n.queue = []string{lagged}
	}
	k := min(len(n.queue), notifyBatch)
	batch = append([]string(nil), n.queue[:k]...)
	n.queue = n.queue[k:]
	if len(n.queue) == 0 {
		n.queue = nil
	}
	return batch, n.closed
}

// putBack returns a batch that failed to the front of the queue.
func (n *notifier) putBack(batch []string) {
	n.mu.Lock()
	n.queue = append(batch, n.queue...)
	n.mu.Unlock()
}

func (n *notifier) run(ctx context.Context, lagged string) {
	defer close(n.stopped)
	wait := notifyRetryFirst
	failing := false
	for {
		batch, closed := n.take(lagged)
		if len(batch) == 0 {
			if closed {
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-n.wake:
			}
			continue
		}
		err := n.send(ctx, batch)
		if err == nil {
			if failing {
				n.log.Info("notices reach the other replicas again")
			}
			failing, wait = false, notifyRetryFirst
			continue
		}
		if ctx.Err() != nil {
			return
		}
		if !failing {
			n.log.Warn("cannot notify the other replicas; retrying", "err", err)
		}
		failing = true
		n.putBack(batch)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		wait = min(wait*2, notifyRetryMax)
	}
}

// close sends what waits, for up to notifyFlush, and stops.
func (n *notifier) close() {
	n.mu.Lock()
	n.closed = true
	n.mu.Unlock()
	select {
	case n.wake <- struct{}{}:
	default:
	}
	t := time.NewTimer(notifyFlush)
	defer t.Stop()
	select {
	case <-n.stopped:
	case <-t.C:
		n.cancel()
		<-n.stopped
	}
	n.cancel()
}

// sendNotices is the notifier's send: a notice is a hint, so its
// transaction does not wait for its flush.
func (s *Store) sendNotices(ctx context.Context, payloads []string) error {
	_, err := s.execRelaxed(ctx, `SELECT pg_notify($1, p) FROM unnest($2::text[]) WITH ORDINALITY AS u(p, ord) ORDER BY ord`, s.channel, payloads)
	return err
}
