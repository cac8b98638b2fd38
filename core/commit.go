package core

import (
	"context"
	"sync"
)

// Change is what one committed write did to one session. A store announces
// it after the transaction is durable, so whoever acts on it (a wake, an SSE
// frame, a webhook delivery, a platform post) acts on something a crash
// cannot take back.
type Change struct {
	SessionID string
	// Provider is the origin provider of the session ("slack"), "" for a
	// session started over the API.
	Provider string
	// Sinks are the providers whose output sinks render the session: its
	// origin's and its links' (SinkProviders). Sinks pick their sessions
	// by it.
	Sinks []string
	// Events were appended to the log, in seq order.
	Events []Event
	// Queued are inputs queued on the session, not yet in the log.
	Queued []Event
	// Status is the session's status after the write when the write
	// changed it, else "".
	Status Status
	// Remote marks a write another process committed (another replica
	// sharing the store), announced here so that what acts on a session
	// wherever it is (a turn to interrupt, SSE followers, an archived
	// session's sandbox) hears of it. What counts this process's own
	// work (metrics) skips it, or every replica would count it.
	Remote bool
}

// Interrupts reports whether the change queued a user.interrupt.
func (c Change) Interrupts() bool {
	for _, e := range c.Queued {
		if e.Type == TypeUserInterrupt {
			return true
		}
	}
	return false
}

// StartsTurn reports whether the change logged a turn.started.
func (c Change) StartsTurn() bool {
	for _, e := range c.Events {
		if e.Type == TypeTurnStarted {
			return true
		}
	}
	return false
}

// InTurn reports whether the change logged events of a turn.
func (c Change) InTurn() bool {
	for _, e := range c.Events {
		if e.TurnID != "" {
			return true
		}
	}
	return false
}

// CommitStream announces what each committed transaction changed, in
// commit order, to subscribers (the runtime, the SSE hub, the webhook
// dispatcher, the platforms' output sinks, metrics). Order is promised per
// session only. A store in another process feeds the same stream from its
// own notifications and catch-up reads.
//
// The stream is a hint: buffers are bounded, and a subscriber that falls
// behind is told so (Subscription.Lagged) and recovers from the store,
// where everything it acts on is durable.
type CommitStream interface {
	// Subscribe follows the stream from now on; name identifies the
	// subscriber in logs and metrics, buf bounds its backlog.
	Subscribe(name string, buf int) *Subscription
}

// Subscription is one subscriber's view of a CommitStream.
type Subscription struct {
	// C carries changes in commit order.
	C <-chan Change
	// Lagged is signalled when changes were dropped because C was full:
	// the subscriber must recover what it missed from the store.
	Lagged <-chan struct{}
	// Name is the name given to Subscribe.
	Name string

	c      chan Change
	lagged chan struct{}
	stream *Commits
}

// Close stops the subscription; C is not closed, so a reader selects on
// its own context to stop.
func (s *Subscription) Close() {
	s.stream.mu.Lock()
	delete(s.stream.subs, s)
	s.stream.mu.Unlock()
}

// Commits is the in-process CommitStream a store publishes into.
type Commits struct {
	mu   sync.RWMutex
	subs map[*Subscription]struct{}
	// OnLag, when set, is told the name of a subscriber that just fell
	// behind (metrics).
	OnLag func(name string)
}

var _ CommitStream = (*Commits)(nil)

// NewCommits returns a stream with no subscribers.
func NewCommits() *Commits { return &Commits{subs: map[*Subscription]struct{}{}} }

// Subscribe adds a subscriber with a backlog of buf changes (at least 1).
func (s *Commits) Subscribe(name string, buf int) *Subscription {
	c, lagged := make(chan Change, max(buf, 1)), make(chan struct{}, 1)
	sub := &Subscription{C: c, Lagged: lagged, Name: name, c: c, lagged: lagged, stream: s}
	s.mu.Lock()
	s.subs[sub] = struct{}{}
	s.mu.Unlock()
	return sub
}

// Publish hands changes to every subscriber without blocking: a full
// subscriber loses them and is signalled Lagged. The caller publishes in
// commit order, after the commit is durable.
func (s *Commits) Publish(changes ...Change) {
	if len(changes) == 0 {
		return
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for sub := range s.subs {
		for _, ch := range changes {
			select {
			case sub.c <- ch:
				continue
			default:
			}
			select {
			case sub.lagged <- struct{}{}:
				if s.OnLag != nil {
					s.OnLag(sub.Name)
				}
			default:
			}
			break
		}
	}
}

// LagAll signals Lagged to every subscriber: changes may have been
// missed that were never offered to any of them (a store lost its feed of
// another process's commits for a while), so each recovers from the store.
// OnLag is not told: no subscriber fell behind.
func (s *Commits) LagAll() {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for sub := range s.subs {
		select {
		case sub.lagged <- struct{}{}:
		default:
		}
	}
}

// Run calls change for each change and lagged after a lag, in order, until
// ctx ends; then it closes the subscription.
func (s *Subscription) Run(ctx context.Context, change func(Change), lagged func()) {
	defer s.Close()
	for {
		select {
		case <-ctx.Done():
			return
		case ch := <-s.C:
			change(ch)
		case <-s.Lagged:
			lagged()
		}
	}
}

// OnArchived calls release with each session the stream reports archived,
// until ctx ends: whoever holds something of a session outside the store
// (a sandbox, connections) lets go of it. A change missed after a lag is
// not replayed; such leftovers are found again where they are kept (a
// sandbox backend reaps archived sessions' containers at start).
func OnArchived(ctx context.Context, sub *Subscription, release func(sessionID string)) {
	sub.Run(ctx, func(c Change) {
		if c.Status == StatusArchived {
			release(c.SessionID)
		}
	}, func() {})
}
