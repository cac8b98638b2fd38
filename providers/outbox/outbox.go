// Package outbox renders sessions' logs onto a platform: the output sink
// every provider shares. A provider supplies a Renderer (what one logged
// event means on its platform); a Sink runs it, one session at a time in
// log order, and records how far it got, so a restart neither loses nor
// repeats what the platform shows.
//
// The position (the last rendered seq, plus the renderer's own state) is
// kept per sink and session in the store (core.SinkStore). A renderer
// whose platform call is not idempotent (a post) saves an intent in its
// state first (Thread.Save) and, when it finds that intent unconfirmed
// after a crash, checks the platform before posting again.
//
// Nothing runs for an idle session. The store wrapper (Wrap) marks a
// session active, durably, before its turn starts and wakes the sink
// after each append; the sink then follows that session until it has
// rendered the turn's end, unmarks it and lets go. At start the sink
// resumes the sessions still marked: those a crash interrupted.
package outbox

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// Store is what a sink needs of the session store.
type Store interface {
	core.SinkStore
	GetSession(ctx context.Context, id string) (*core.Session, error)
	Events(ctx context.Context, sessionID string, after uint64, limit int) ([]core.Event, error)
	Pending(ctx context.Context, sessionID string) ([]core.Event, error)
}

// Renderer is the platform-specific part of a sink.
type Renderer interface {
	// Received acknowledges inputs queued on the session but not yet taken
	// by a turn (a 👀 reaction on receipt). It is a fast path: inputs are
	// rendered again when they enter the log, so it must be idempotent and
	// may fail without consequence.
	Received(ctx context.Context, s *core.Session, inputs []core.Event) error
	// Render renders one logged event; acted reports that it called the
	// platform, so the position is saved at once. An error is retried with
	// backoff unless it is Permanent.
	Render(ctx context.Context, t *Thread, e core.Event) (acted bool, err error)
}

// Thread is what a renderer sees of the session it renders.
type Thread struct {
	Session *core.Session
	// State is the renderer's own, saved with the position.
	State json.RawMessage
	seq   uint64
	save  func(ctx context.Context, p core.SinkPosition) error
}

// Save persists State now, at the position before the event being
// rendered: a renderer records an intent this way before a call it must
// not repeat.
func (t *Thread) Save(ctx context.Context) error {
	return t.save(ctx, core.SinkPosition{Seq: t.seq, State: t.State})
}

type permanentError struct{ err error }

func (p permanentError) Error() string { return p.err.Error() }
func (p permanentError) Unwrap() error { return p.err }

// Permanent marks a render error that retrying cannot fix (the channel is
// gone, the token revoked): the sink logs it and moves on.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanentError{err}
}

// IsPermanent reports whether err was marked Permanent.
func IsPermanent(err error) bool {
	var p permanentError
	return errors.As(err, &p)
}

// Config configures a Sink.
type Config struct {
	// Name is the sink's name and the origin provider of the sessions it
	// renders ("slack").
	Name     string
	Store    Store
	Renderer Renderer
	Logger   *slog.Logger
	// RetryMin and RetryMax bound the backoff between attempts of a render
	// that failed (default 1 s and 1 min).
	RetryMin, RetryMax time.Duration
	// Batch is how many events are read at a time (default 100).
	Batch int
	// Recheck is how often a worker waiting on an open turn looks again
	// without being woken (default 1 min).
	Recheck time.Duration
}

// Sink renders the sessions of one provider.
type Sink struct {
	cfg Config
	log *slog.Logger

	mu      sync.Mutex
	entries map[string]*entry
	ctx     context.Context // nil until Start
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// entry is a session the sink follows now.
type entry struct {
	signal chan struct{} // cap 1: something happened
	mu     sync.Mutex
	// marked: the session is marked active in the store.
	marked bool
	// writers counts turn starts in flight (between mark and append).
	writers int
	poked   bool // an append or input since the worker last looked
	inputs  bool // inputs were queued: call Received
	retired bool // the worker let go; a new entry is needed
}

// New returns a sink; Start starts it.
func New(cfg Config) *Sink {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.RetryMin <= 0 {
		cfg.RetryMin = time.Second
	}
	if cfg.RetryMax < cfg.RetryMin {
		cfg.RetryMax = max(time.Minute, cfg.RetryMin)
	}
	if cfg.Batch <= 0 {
		cfg.Batch = 100
	}
	if cfg.Recheck <= 0 {
		cfg.Recheck = time.Minute
	}
	return &Sink{cfg: cfg, log: cfg.Logger.With("sink", cfg.Name), entries: map[string]*entry{}}
}

// Name is the sink's name.
func (s *Sink) Name() string { return s.cfg.Name }

// Start resumes the sessions left marked active by a previous process.
func (s *Sink) Start(ctx context.Context) error {
	// Started before listing: a session marked meanwhile gets its worker
	// from hold, and one listed twice shares the entry.
	s.mu.Lock()
	s.ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	s.mu.Unlock()
	ids, err := s.cfg.Store.ActiveSinkSessions(ctx, s.cfg.Name)
	if err != nil {
		return err
	}
	for _, id := range ids {
		s.log.Info("resuming output left behind", "session_id", id)
		s.wake(id, true, false, true)
	}
	return nil
}

// Stop stops the workers; what they had not rendered stays marked and is
// resumed at the next start.
func (s *Sink) Stop(ctx context.Context) error {
	s.mu.Lock()
	cancel := s.cancel
	s.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Activate tells the sink that inputs were queued on the session (the
// intake just stored them): it acknowledges them now, ahead of the turn.
func (s *Sink) Activate(sessionID string) { s.wake(sessionID, true, true, false) }

// Following reports how many sessions the sink follows now.
func (s *Sink) Following() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.entries)
}

// lookup returns the live entry of id, creating it (and its worker) when
// create is set and the sink has started; nil otherwise.
func (s *Sink) lookup(id string, create bool) *entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entries[id]
	if e != nil || !create || s.ctx == nil || s.ctx.Err() != nil {
		return e
	}
	e = &entry{signal: make(chan struct{}, 1)}
	s.entries[id] = e
	s.wg.Add(1)
	go s.work(s.ctx, id, e)
	return e
}

// drop forgets a retired entry.
func (s *Sink) drop(id string, e *entry) {
	s.mu.Lock()
	if s.entries[id] == e {
		delete(s.entries, id)
	}
	s.mu.Unlock()
}

// wake pokes the session's worker; with create it starts one when there
// is none. inputs asks for Received; marked records that the store has the
// session marked.
func (s *Sink) wake(id string, create, inputs, marked bool) {
	for {
		e := s.lookup(id, create)
		if e == nil {
			return
		}
		e.mu.Lock()
		if e.retired {
			e.mu.Unlock()
			s.drop(id, e)
			continue
		}
		e.poked = true
		e.inputs = e.inputs || inputs
		e.marked = e.marked || marked
		e.mu.Unlock()
		select {
		case e.signal <- struct{}{}:
		default:
		}
		return
	}
}

// hold marks the session active in the store before a turn starts, and
// keeps the worker from letting go until release, which wakes it.
func (s *Sink) hold(ctx context.Context, id string) (release func(), err error) {
	for {
		e := s.lookup(id, true)
		if e == nil {
			// Not started (or stopping): the mark alone makes the next
			// start render the turn.
			return func() {}, s.cfg.Store.SetSinkActive(ctx, s.cfg.Name, id, true)
		}
		e.mu.Lock()
		if e.retired {
			e.mu.Unlock()
			s.drop(id, e)
			continue
		}
		if !e.marked {
			if err := s.cfg.Store.SetSinkActive(ctx, s.cfg.Name, id, true); err != nil {
				e.mu.Unlock()
				return nil, err
			}
			e.marked = true
		}
		e.writers++
		e.mu.Unlock()
		return func() {
			e.mu.Lock()
			e.writers--
			e.poked = true
			e.mu.Unlock()
			select {
			case e.signal <- struct{}{}:
			default:
			}
		}, nil
	}
}
