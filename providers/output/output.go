// Package output renders sessions' logs onto a platform: the output sink
// every provider shares. A provider supplies a Renderer (what one logged
// event means on its platform); a Sink runs it, one session at a time in
// log order, and records how far it got, so a restart neither loses nor
// repeats what the platform shows.
//
// The position (the last rendered seq, plus the renderer's own state) is
// kept per sink and session in the store (core.SinkStore). A renderer
// whose platform call is not idempotent (a post) goes through PostOnce:
// an intent saved first, and, when it finds that intent unconfirmed after
// a crash, a look on the platform before posting again.
//
// Nothing runs for an idle session. The sink follows the store's commit
// stream: the store marks a session for its origin's sink in the
// transaction that logs a turn.started, and the sink follows that session
// from any change that logs a turn's events (an archived one as well, for
// a Closer to show it closed) until it
// has rendered the whole log with no turn open, then releases the
// mark (ReleaseSink, refused if something was logged meanwhile) and lets
// go. At start, and after its subscription lagged, the sink resumes the
// sessions still marked.
//
// Replicas sharing a store all hear of every turn, so a worker claims the
// session's output first (core.SinkStore.ClaimSink: a holder, an epoch,
// an expiry by the store's clock) and renders only while it holds the
// claim. It renews the claim while it follows the session and releases it
// when it lets go or the sink stops. Each position it saves carries the
// claim, and the store refuses it once another holder has claimed the
// session, so a worker that stalled past its claim posts nothing more:
// PostOnce saves its intent before posting. A worker refused a claim
// tries again every ClaimRetry, so the output of a replica that died
// mid-post is picked up once its claim expires; the new holder reads the
// intent the dead one saved, and PostOnce looks the post up before
// making it again.
package output

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// Store is what a sink needs of the session store.
type Store interface {
	core.SinkStore
	core.CommitStream
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

// Closer is a Renderer that shows a session closed once it is archived
// (an archive logs no event). A worker calls it whenever it finds the
// session archived, so it must be idempotent.
type Closer interface {
	Closed(ctx context.Context, s *core.Session) error
}

// Fencer is a Renderer whose platform keeps something a turn shows only
// while it runs (a thread's "is working" status). The platform takes no
// fencing token, so a holder stopped in the middle of such a call may
// make it after its claim went to another holder, which may have ended
// the turn and taken it down already. A worker that finds its claim lost
// right after a render that may have called the platform calls Fenced
// with the thread as that render left it, to take down what it may have
// shown. What it takes down must be what a live holder shows again at its
// next step or ends anyway.
type Fencer interface {
	Fenced(ctx context.Context, t *Thread) error
}

// Thread is what a renderer sees of the session it renders.
type Thread struct {
	Session *core.Session
	// Key is the origin key the event being rendered answers at: where
	// its turn's input came from (the session's origin, or one of its
	// links), the origin for an input of the API or a schedule. A sink
	// is handed only the events that answer at a key of its own.
	Key string
	// State is the renderer's own, saved with the position.
	State json.RawMessage
	seq   uint64
	sink  *Sink
	claim core.Claim // the sink's claim on the session's output: saves carry it
}

// AnswerKey is Key, or the session's origin when the thread was made
// without one (a renderer's tests).
func (t *Thread) AnswerKey() string {
	if t.Key != "" {
		return t.Key
	}
	if t.Session.Origin != nil {
		return t.Session.Origin.Key
	}
	return ""
}

// Thread is what the sink hands its renderer for sess, whose position is
// pos: drain uses it, and so can a renderer's tests.
func (s *Sink) Thread(sess *core.Session, pos core.SinkPosition) *Thread {
	return &Thread{Session: sess, State: pos.State, seq: pos.Seq, sink: s}
}

// Save persists State now, at the position before the event being
// rendered: a renderer records an intent this way before a call it must
// not repeat. It fails with core.ErrLeaseLost once another holder has
// claimed the session's output: the renderer must not make the call.
func (t *Thread) Save(ctx context.Context) error {
	return t.sink.cfg.Store.SaveSinkPosition(ctx, t.sink.cfg.Name, t.Session.ID, t.claim, core.SinkPosition{Seq: t.seq, State: t.State})
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
	// Failpoint, when set, is called at the points of PostOnce named by a
	// Post's Point ("before_post", "after_post", …): crash tests park the
	// process there. Nil outside test builds.
	Failpoint func(point string)
	// Now is the clock intents are stamped with (default time.Now).
	Now func() time.Time
	// Holder names this process in the store's claims on sessions' output
	// (default a fresh id); the gateway passes the id its runtime's leases
	// use.
	Holder string
	// ClaimTTL is how long a claim on a session's output lasts without
	// renewal (default 15 s): the output of a replica that died is picked
	// up by another within about this. Claims are renewed every third of
	// it.
	ClaimTTL time.Duration
	// ClaimRetry is how often a worker whose session another holder has
	// claimed tries to claim it again (default a third of ClaimTTL).
	ClaimRetry time.Duration
	// Sweep is how often the sink looks again at every session the store
	// marks for it (default ClaimTTL): the commit stream's changes are
	// hints, and a session whose turn started on another replica
	// unannounced would otherwise wait for the next restart.
	Sweep time.Duration
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
	signal  chan struct{} // cap 1: something happened
	mu      sync.Mutex
	poked   bool // an append or input since the worker last looked
	inputs  bool // inputs were queued: call Received
	retired bool // the worker let go; a new entry is needed
	// targets are where the session's turns answer; only the worker
	// uses them.
	targets turnTargets
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
	if cfg.Failpoint == nil {
		cfg.Failpoint = func(string) {}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Holder == "" {
		cfg.Holder = core.NewID("run")
	}
	if cfg.ClaimTTL <= 0 {
		cfg.ClaimTTL = DefaultClaimTTL
	}
	if cfg.ClaimRetry <= 0 {
		cfg.ClaimRetry = cfg.ClaimTTL / 3
	}
	if cfg.Sweep <= 0 {
		cfg.Sweep = cfg.ClaimTTL
	}
	return &Sink{cfg: cfg, log: cfg.Logger.With("sink", cfg.Name), entries: map[string]*entry{}}
}

// Name is the sink's name.
func (s *Sink) Name() string { return s.cfg.Name }

// Start follows the commit stream, then resumes the sessions left marked
// by a previous process.
func (s *Sink) Start(ctx context.Context) error {
	// Subscribed before listing: a session marked meanwhile is announced,
	// and one both listed and announced shares its entry.
	sub := s.cfg.Store.Subscribe("output:"+s.cfg.Name, 1024)
	s.mu.Lock()
	s.ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	sctx := s.ctx
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		sub.Run(sctx, s.committed, func() {
			if err := s.resume(sctx); err != nil && sctx.Err() == nil {
				s.log.Warn("resume output after a lag", "err", err)
			}
		})
	}()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.sweep(sctx)
	}()
	return s.resume(ctx)
}

// sweep resumes, every Sweep, the sessions marked for this sink. A
// session stays marked until its output is rendered, so one whose changes
// were never announced (another replica's turn, its notifications lost)
// is rendered late rather than never, and without waiting for a worker's
// Recheck.
func (s *Sink) sweep(ctx context.Context) {
	t := time.NewTicker(s.cfg.Sweep)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := s.resume(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("look for marked sessions not followed", "err", err)
		}
	}
}

// resume follows every session marked for this sink, and tells the
// worker of each it follows already to look again.
func (s *Sink) resume(ctx context.Context) error {
	ids, err := s.cfg.Store.ActiveSinkSessions(ctx, s.cfg.Name)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if s.lookup(id, false) == nil {
			s.log.Info("resuming output left behind", "session_id", id)
		}
		s.poke(id, poke{follow: true})
	}
	return nil
}

// committed acts on a change of the commit stream for this sink's
// sessions: inputs are acknowledged at once, a turn's events make the sink
// follow the session, and anything else is news for a session it follows.
// Any event of a turn will do, not only its start: a turn taken over from
// a replica that died may be the first this sink hears of, its start's
// notice lost with that replica.
func (s *Sink) committed(c core.Change) {
	if c.Provider != s.cfg.Name && !slices.Contains(c.Sinks, s.cfg.Name) {
		return
	}
	switch {
	case len(c.Queued) > 0:
		s.poke(c.SessionID, poke{follow: true, inputs: true})
	case c.InTurn(), c.Status == core.StatusArchived:
		// An archive is news for an idle session too: a Closer shows it
		// closed.
		s.poke(c.SessionID, poke{follow: true})
	case len(c.Events) > 0 || c.Status != "":
		s.poke(c.SessionID, poke{})
	}
}

// Stop stops the workers and releases their claims, so another replica
// takes their sessions at once; what they had not rendered stays marked
// and is resumed there, or at the next start.
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

// poke says what happened to a session.
type poke struct {
	follow bool // start following the session if the sink does not
	inputs bool // inputs were queued: acknowledge them
}

// poke tells the session's worker something happened, starting one when
// p.follow asks for it.
func (s *Sink) poke(id string, p poke) {
	for {
		e := s.lookup(id, p.follow)
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
		e.inputs = e.inputs || p.inputs
		e.mu.Unlock()
		select {
		case e.signal <- struct{}{}:
		default:
		}
		return
	}
}

// Settled reports whether the sink is done: it follows no session and the
// store marks none for it, so everything logged in a turn is rendered.
func (s *Sink) Settled(ctx context.Context) bool {
	if s.Following() > 0 {
		return false
	}
	ids, err := s.cfg.Store.ActiveSinkSessions(ctx, s.cfg.Name)
	return err == nil && len(ids) == 0
}
