// Package runtime runs sessions: a persisted wake queue, a bounded pool of
// workers, one turn at a time per session, cooperative interrupts, turn
// recovery after a crash and a graceful stop.
//
// An idle session costs nothing here: the runtime holds state only for the
// sessions it is running or about to run.
package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/toolset"
	"github.com/switchboardhq/switchboard/sessions/engine/harness"
)

// Store is what the runtime needs of the session store.
type Store interface {
	harness.Log
	core.WakeQueue
	core.LeaseStore
	GetAgentVersion(ctx context.Context, id string, version int) (*core.Agent, error)
	Sweep(ctx context.Context, before time.Time) (int, error)
}

// Toolset builds the registry of tools a session's model is offered.
type Toolset func(ctx context.Context, s *core.Session, a *core.Agent) (*toolset.Registry, error)

// Config wires a runtime.
type Config struct {
	Store Store
	// Commits is the store's commit stream: queued inputs wake their
	// session, a queued interrupt or an archive stops its turn. Without it
	// only the wake queue (and Wake) bring sessions to run.
	Commits core.CommitStream
	// Harness is the built-in loop (default harness.Default); Runtimes
	// adds the harness of each other runtime kind an agent may name.
	Harness  harness.Harness
	Runtimes map[string]harness.Harness
	Model    core.Model
	Tools    Toolset // nil: the conversation tools only
	Workers  int     // default 8
	// Limits fill the zero fields of an agent's limits.
	Limits core.Limits
	// ContextWindow gives a model's window in tokens.
	ContextWindow func(model string) int
	// Attachments gives turns what messages' attachments hold, and
	// Images says which models take images (nil: none).
	Attachments     *harness.Attachments
	Images          func(model string) bool
	CompactFraction float64
	// TextEvery is how often a runtime logs a response's text as it
	// streams (harness.Default.TextEvery, and the ACP runtime's); the
	// caller that builds the harnesses applies it.
	TextEvery time.Duration
	// LogCacheEvents bounds the decoded log events kept in memory across
	// cycles (default 200,000; negative disables the cache).
	LogCacheEvents int
	// LogCacheBytes bounds the same cache by the events' approximate
	// size in memory (default 16 MiB), so that it stays bounded however
	// large the events and however many sessions run.
	LogCacheBytes int
	// ContextCacheSessions bounds how many sessions' derived model
	// contexts are kept across cycles (default 256; negative keeps none).
	ContextCacheSessions int
	// MetricsLabel names the installation a session runs under, as
	// the turn's metrics label (its platform knows how); nil labels it by
	// its tenant, "api" for a session without an origin.
	MetricsLabel func(s *core.Session) string
	// Failpoint is handed to the harness (crash tests; nil outside test
	// builds).
	Failpoint func(point string)
	// AfterCycle, when set, is told when the runtime lets go of a session
	// (nothing left to run): resources kept for its turns can start their
	// idle timers.
	AfterCycle func(sessionID string)
	// RetryAfter is how long a session whose cycle failed (the store could
	// not write, the agent is gone…) waits before the next; it doubles per
	// consecutive failure of that session up to MaxRetryAfter (defaults 5 s
	// and 5 min) and resets once a cycle succeeds.
	RetryAfter    time.Duration
	MaxRetryAfter time.Duration
	// Clock is the scheduler's time (default the wall clock).
	Clock  Clock
	Holder string // this process; default a fresh id
	// LeaseTTL is how long a session's lease lasts without renewal
	// (default DefaultLeaseTTL).
	LeaseTTL time.Duration
	// Sandboxes, when set, is told when sessions move between replicas:
	// one that arrives gets a fresh sandbox, one that left has its sandbox
	// here removed. Holder must then name this replica across restarts,
	// or each restart looks like a move.
	Sandboxes Sandboxes
	// KeyRetention is how long dedupe and idempotency keys are kept
	// (default and minimum 7 days); SweepEvery how often older ones go.
	KeyRetention time.Duration
	SweepEvery   time.Duration
	Logger       *slog.Logger
}

// DefaultLimits apply when neither the agent nor the configuration says.
var DefaultLimits = core.Limits{MaxSteps: 50, TurnSeconds: 900, MaxTokens: 2_000_000}

// Runtime schedules and runs session cycles.
type Runtime struct {
	cfg   Config
	log   *slog.Logger
	store Store // cfg.Store behind the log cache
	// contexts are the model contexts of the sessions run here.
	contexts *harness.Contexts

	mu      sync.Mutex
	queued  map[string]bool        // in ready, not yet taken by a worker
	running map[string]*activeTurn // taken by a worker
	retries map[string]*retry      // sessions backing off after failed cycles
	ready   []string
	stopped bool

	signal   chan struct{} // wakes idle workers
	schedule chan struct{} // wakes the scheduler
	cancel   context.CancelCauseFunc
	wg       sync.WaitGroup
}

type activeTurn struct {
	cancel context.CancelCauseFunc
	again  bool // woken while running: run another cycle
	// inputs is told of a wake while the session runs: a harness whose
	// turn cannot take inputs mid-step watches it (harness.Cycle.Inputs).
	inputs chan struct{}
}

// New returns a runtime; Start starts it.
func New(cfg Config) *Runtime {
	if cfg.Workers <= 0 {
		cfg.Workers = 8
	}
	cfg.Limits = cfg.Limits.Or(DefaultLimits)
	if cfg.RetryAfter <= 0 {
		cfg.RetryAfter = 5 * time.Second
	}
	if cfg.MaxRetryAfter < cfg.RetryAfter {
		cfg.MaxRetryAfter = max(5*time.Minute, cfg.RetryAfter)
	}
	if cfg.Clock == nil {
		cfg.Clock = core.WallClock{}
	}
	if cfg.KeyRetention < 7*24*time.Hour {
		cfg.KeyRetention = 7 * 24 * time.Hour
	}
	if cfg.SweepEvery <= 0 {
		cfg.SweepEvery = time.Hour
	}
	if cfg.LeaseTTL <= 0 {
		cfg.LeaseTTL = DefaultLeaseTTL
	}
	if cfg.Holder == "" {
		cfg.Holder = core.NewID("run")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Harness == nil {
		cfg.Harness = &harness.Default{}
	}
	if cfg.LogCacheEvents == 0 {
		cfg.LogCacheEvents = 200_000
	}
	if cfg.LogCacheBytes <= 0 {
		cfg.LogCacheBytes = 16 << 20
	}
	if cfg.ContextCacheSessions == 0 {
		cfg.ContextCacheSessions = 256
	}
	return &Runtime{
		cfg:      cfg,
		store:    newLogCache(cfg.Store, cfg.LogCacheEvents, cfg.LogCacheBytes),
		contexts: harness.NewContexts(cfg.ContextCacheSessions),
		log:      cfg.Logger,
		queued:   map[string]bool{},
		running:  map[string]*activeTurn{},
		retries:  map[string]*retry{},
		signal:   make(chan struct{}, cfg.Workers),
		schedule: make(chan struct{}, 1),
	}
}

// Start resumes the turns a previous process left open and starts the
// scheduler and workers. It returns once recovery is scheduled.
func (r *Runtime) Start(ctx context.Context) error {
	open, err := r.cfg.Store.OpenTurns(ctx)
	if err != nil {
		return fmt.Errorf("find open turns: %w", err)
	}
	now := r.cfg.Clock.Now()
	for id, holder := range open {
		r.log.Info("resuming turn left open", "session_id", id, "holder", holder)
		if err := r.cfg.Store.ScheduleWake(ctx, id, now); err != nil {
			return fmt.Errorf("schedule recovery of %s: %w", id, err)
		}
	}
	rctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	r.cancel = cancel
	if r.cfg.Commits != nil {
		sub := r.cfg.Commits.Subscribe("runtime", 4096)
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			sub.Run(rctx, r.committed, func() { r.lagged(rctx) })
		}()
	}
	r.wg.Add(3 + r.cfg.Workers)
	go r.scheduler(rctx)
	go r.sweeper(rctx)
	go r.heartbeat(rctx)
	for range r.cfg.Workers {
		go r.worker(rctx)
	}
	return nil
}

// committed acts on a change of the commit stream. A change missed (the
// subscription lagged) costs latency only: the wake queue is durable and
// the scheduler reads it.
func (r *Runtime) committed(c core.Change) {
	switch {
	case c.Status == core.StatusArchived:
		r.stop(c.SessionID)
	case c.Interrupts():
		r.Interrupt(c.SessionID)
	case len(c.Queued) > 0, c.Status == core.StatusQueued:
		// Queued inputs, or a paused turn whose budget was raised.
		r.Wake(c.SessionID)
	}
}

// lagged recovers from the store what the changes missed in a lag of the
// commit stream would have done. Wakes wait in the durable wake queue,
// which the scheduler reads; but an interrupt or an archive of a session
// whose turn runs here (queued on another replica while this one's
// notifications were cut) must reach the turn now, so the running
// sessions are read for one, as committed would have acted on it.
func (r *Runtime) lagged(ctx context.Context) {
	r.poke()
	r.mu.Lock()
	ids := make([]string, 0, len(r.running))
	for id := range r.running {
		ids = append(ids, id)
	}
	r.mu.Unlock()
	for _, id := range ids {
		c, err := r.missed(ctx, id)
		if err != nil {
			if ctx.Err() == nil {
				r.log.Warn("read a running session after the commit stream lagged", "session_id", id, "err", err)
			}
			continue
		}
		r.committed(c)
	}
}

// missed is the change that makes committed stop the session's turn when
// the store shows it archived or holding a queued interrupt: as much of
// the session's missed changes as a running turn needs.
func (r *Runtime) missed(ctx context.Context, id string) (core.Change, error) {
	c := core.Change{SessionID: id}
	s, err := r.cfg.Store.GetSession(ctx, id)
	if errors.Is(err, core.ErrNotFound) {
		return c, nil
	}
	if err != nil {
		return c, err
	}
	if s.Status == core.StatusArchived {
		c.Status = s.Status
		return c, nil
	}
	pending, err := r.cfg.Store.Pending(ctx, id)
	if err != nil {
		return c, err
	}
	for _, e := range pending {
		if e.Type == core.TypeUserInterrupt {
			c.Queued = []core.Event{e}
		}
	}
	return c, nil
}

// Wake asks for a cycle of the session now. Inputs are durably queued (with
// their wake) before callers wake, so a lost Wake costs latency, not input.
func (r *Runtime) Wake(sessionID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.enqueueLocked(sessionID)
}

// Interrupt cancels the session's running turn; the harness logs it as
// canceled. The user.interrupt input must be queued first.
func (r *Runtime) Interrupt(sessionID string) {
	r.mu.Lock()
	if a := r.running[sessionID]; a != nil && a.cancel != nil {
		a.cancel(harness.ErrInterrupted)
	}
	r.enqueueLocked(sessionID)
	r.mu.Unlock()
}

// stop cancels the session's running turn without asking for another
// cycle: it was archived, so its log is read-only.
func (r *Runtime) stop(sessionID string) {
	r.mu.Lock()
	if a := r.running[sessionID]; a != nil && a.cancel != nil {
		a.cancel(harness.ErrInterrupted)
	}
	r.mu.Unlock()
}

// Running reports how many sessions are being run now.
func (r *Runtime) Running() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.running)
}

// Stop cancels running turns, leaving them open in the log for the next
// process, and waits for the workers until ctx ends.
func (r *Runtime) Stop(ctx context.Context) error {
	// Draining: the sessions this runtime ran last may go elsewhere now.
	if err := r.cfg.Store.Heartbeat(ctx, r.cfg.Holder, r.cfg.LeaseTTL, true); err != nil {
		r.log.Debug("draining heartbeat", "err", err)
	}
	r.mu.Lock()
	r.stopped = true
	for _, a := range r.running {
		if a.cancel != nil {
			a.cancel(harness.ErrShutdown)
		}
	}
	r.mu.Unlock()
	if r.cancel != nil {
		r.cancel(harness.ErrShutdown)
	}
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("runtime stop: %w", ctx.Err())
	}
}

func (r *Runtime) enqueueLocked(id string) {
	if r.stopped {
		return
	}
	if a := r.running[id]; a != nil {
		a.again = true
		select {
		case a.inputs <- struct{}{}:
		default:
		}
		return
	}
	if r.queued[id] {
		return
	}
	// A session backing off runs at its retry time, whatever wakes it
	// before: the scheduler hands it over then.
	if b := r.retries[id]; b != nil && r.cfg.Clock.Now().Before(b.at) {
		return
	}
	r.queued[id] = true
	r.ready = append(r.ready, id)
	select {
	case r.signal <- struct{}{}:
	default:
	}
}

// take pops a session for a worker and marks it running.
func (r *Runtime) take() (string, *activeTurn, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.ready) == 0 || r.stopped {
		return "", nil, false
	}
	id := r.ready[0]
	r.ready = r.ready[1:]
	delete(r.queued, id)
	a := &activeTurn{inputs: make(chan struct{}, 1)}
	r.running[id] = a
	return id, a, true
}

func (r *Runtime) worker(ctx context.Context) {
	defer r.wg.Done()
	for {
		id, a, ok := r.take()
		if !ok {
			select {
			case <-ctx.Done():
				return
			case <-r.signal:
				continue
			}
		}
		r.runGuarded(ctx, id, a)
		// Another wake may be waiting for a worker that is asleep.
		select {
		case r.signal <- struct{}{}:
		default:
		}
	}
}

// runSession runs cycles of one session, under its lease, until nothing
// asks for another.
func (r *Runtime) runSession(ctx context.Context, id string, a *activeTurn) {
	lctx, lost := context.WithCancelCause(ctx)
	defer lost(nil)
	open, prep := r.opening(lctx, id)
	h, ok, err := r.takeLease(lctx, id, lost, open)
	if err != nil || !ok {
		if err != nil && ctx.Err() == nil {
			r.failed(ctx, id, 0, err)
		}
		// Not ours to run now: another runtime holds the session, or ran
		// it last and is alive. Its wake stays for when that lease ends:
		// the scheduler is told to look again, since it may be asleep for
		// longer (a commit woke this runtime, not the scheduler), and
		// NextWake says when the lease runs out. A session kept for
		// another runtime with no live lease is due at once, so it is not
		// asked for again before a third of a lease.
		if err == nil {
			r.mu.Lock()
			b := r.retries[id]
			if b == nil {
				b = &retry{}
				r.retries[id] = b
			}
			if at := r.cfg.Clock.Now().Add(r.cfg.LeaseTTL / 3); at.After(b.at) {
				b.at = at
			}
			r.mu.Unlock()
			r.poke()
		}
		r.mu.Lock()
		delete(r.running, id)
		r.mu.Unlock()
		return
	}
	defer r.release(ctx, h)
	if h.lease.Previous == h.lease.Holder {
		// Ran here last: what was derived under the grant before holds.
		r.contexts.Carry(id, h.lease.Epoch-1, h.lease.Epoch)
	}
	arrived := false
	for {
		cctx, cancel := context.WithCancelCause(lctx)
		r.mu.Lock()
		a.cancel, a.again = cancel, false
		r.mu.Unlock()
		var err error
		if !arrived {
			err = r.arrive(cctx, h.lease)
			arrived = err == nil
		}
		if err == nil {
			prep.opened = h.opened
			err = r.guardedCycle(cctx, id, h.lease.Epoch, a.inputs, prep)
			// Later cycles read the session's agent again and open their
			// own turns.
			prep, h.opened = prepared{}, ""
		}
		if errors.Is(err, context.Canceled) && errors.Is(context.Cause(cctx), harness.ErrInterrupted) && ctx.Err() == nil {
			// An interrupt (or an archive, cancelled alike) cut a store
			// call short: not the store failing. An interrupt asked for
			// another cycle, which reads it; an archived session needs
			// none.
			err = nil
		}
		cancel(nil)
		if errors.Is(err, core.ErrLeaseLost) || context.Cause(lctx) == core.ErrLeaseLost {
			// Another runtime runs the session now; nothing to retry here.
			// The error says whether a write was refused or the renewal
			// found the lease gone.
			why := err
			if !errors.Is(why, core.ErrLeaseLost) {
				why = context.Cause(lctx)
			}
			r.log.Info("session taken over by another runtime", "session_id", id, "err", why)
			// A refused write or renewal means another grant: the sandbox
			// here is an orphan. Renewals that merely failed for a TTL
			// prove nothing, and the session may come back.
			if errors.Is(err, core.ErrLeaseLost) || h.taken.Load() {
				r.left(ctx, id)
			}
			err = nil
			r.mu.Lock()
			a.again = false
			r.mu.Unlock()
		}
		failed := err != nil && ctx.Err() == nil
		if failed {
			r.failed(ctx, id, h.lease.Epoch, err)
		} else if err == nil {
			r.mu.Lock()
			delete(r.retries, id)
			r.mu.Unlock()
		}
		r.mu.Lock()
		if a.again && !r.stopped && !failed {
			r.mu.Unlock()
			continue
		}
		delete(r.running, id)
		r.mu.Unlock()
		if r.cfg.AfterCycle != nil {
			r.cfg.AfterCycle(id)
		}
		return
	}
}

// failed backs the session off: its wake moves to the retry time (the
// wake QueueInputs wrote is due already and would bring it straight back),
// and the runtime itself holds it until then in case the store cannot
// write even that.
func (r *Runtime) failed(ctx context.Context, id string, epoch uint64, err error) {
	r.mu.Lock()
	b := r.retries[id]
	if b == nil {
		b = &retry{}
		r.retries[id] = b
	}
	b.failures++
	wait := backoff(r.cfg.RetryAfter, r.cfg.MaxRetryAfter, b.failures)
	b.at = r.cfg.Clock.Now().Add(wait)
	at, failures := b.at, b.failures
	r.mu.Unlock()
	r.log.Error("session cycle failed; retrying later", "session_id", id, "failures", failures, "retry_in", wait, "err", err)
	if werr := r.cfg.Store.MoveWake(context.WithoutCancel(ctx), id, at, epoch); werr != nil && !errors.Is(werr, core.ErrArchived) && !errors.Is(werr, core.ErrNotFound) {
		r.log.Debug("move wake to the retry", "session_id", id, "err", werr)
	}
	r.poke()
}

// backingOff reports until when the session waits, if it does.
func (r *Runtime) backingOff(id string, now time.Time) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if b := r.retries[id]; b != nil && now.Before(b.at) {
		return b.at, true
	}
	return time.Time{}, false
}

// harness is the harness of the agent version's runtime kind.
func (r *Runtime) harness(a *core.Agent) (harness.Harness, error) {
	kind := a.Runtime.KindOrDefault()
	if kind == core.RuntimeBuiltin {
		return r.cfg.Harness, nil
	}
	if h := r.cfg.Runtimes[kind]; h != nil {
		return h, nil
	}
	return nil, fmt.Errorf("agent %s v%d: runtime %q is not available on this gateway: %w", a.ID, a.Version, kind, core.ErrInvalid)
}

// cycle runs the harness once and clears the session's wake when it is
// done with it.
func (r *Runtime) cycle(ctx context.Context, id string, epoch uint64, inputs <-chan struct{}, prep prepared) error {
	s, err := r.cfg.Store.GetSession(ctx, id)
	if errors.Is(err, core.ErrNotFound) {
		return r.cfg.Store.ClearWake(ctx, id, epoch)
	}
	if err != nil {
		return err
	}
	if s.Status == core.StatusArchived {
		return r.cfg.Store.ClearWake(ctx, id, epoch)
	}
	// Agent versions do not change: the one read to take the lease holds.
	agent := prep.agent
	if agent == nil || agent.ID != s.Agent.ID || agent.Version != s.Agent.Version {
		if agent, err = r.cfg.Store.GetAgentVersion(ctx, s.Agent.ID, s.Agent.Version); err != nil {
			return fmt.Errorf("agent %s v%d: %w", s.Agent.ID, s.Agent.Version, err)
		}
	}
	h, err := r.harness(agent)
	if err != nil {
		return err
	}
	var tools *toolset.Registry
	if r.cfg.Tools != nil {
		tools, err = r.cfg.Tools(ctx, s, agent)
	} else {
		tools, err = toolset.New(harness.Conversation()...)
	}
	if err != nil {
		return fmt.Errorf("tools: %w", err)
	}
	c := &harness.Cycle{
		SessionID:       id,
		Agent:           agent,
		Holder:          r.cfg.Holder,
		Epoch:           epoch,
		Log:             r.store,
		Model:           r.cfg.Model,
		Tools:           tools,
		Limits:          s.LimitsOver(agent.Limits.Or(r.cfg.Limits)),
		Installation:    r.metricsLabel(s),
		Attachments:     r.cfg.Attachments,
		CompactFraction: r.cfg.CompactFraction,
		Logger:          r.log,
		Failpoint:       r.cfg.Failpoint,
		Inputs:          inputs,
		Contexts:        r.contexts,
		Session:         s,
		Opened:          prep.opened,
	}
	if r.cfg.ContextWindow != nil {
		c.ContextWindow = r.cfg.ContextWindow(agent.Model)
	}
	if r.cfg.Images != nil {
		c.Images = r.cfg.Images(agent.Model)
	}
	out, err := h.Run(ctx, c)
	if errors.Is(err, core.ErrArchived) {
		// Archived mid-turn: the log is read-only now, nothing to resume.
		return r.cfg.Store.ClearWake(ctx, id, epoch)
	}
	if err != nil {
		return err
	}
	if context.Cause(ctx) == harness.ErrShutdown {
		return nil
	}
	if out.Turns > 0 {
		r.log.Debug("cycle done", "session_id", id, "turns", out.Turns, "reason", out.Reason)
	}
	// An interrupt cancels the turn, not the cycle's end. Any other cause
	// (the lease lost or in doubt) must leave the wake as it is, for the
	// runtime that runs the session next: the cancelled context fails it.
	if errors.Is(context.Cause(ctx), harness.ErrInterrupted) {
		ctx = context.WithoutCancel(ctx)
	}
	if out.Paused {
		// Its queued inputs wait for the raise, which wakes it again.
		return r.cfg.Store.ClearWake(ctx, id, epoch)
	}
	return r.settle(ctx, id, epoch)
}

// settle ends a cycle that ran: with nothing queued the wake is spent;
// inputs still queued, the last ones perhaps queued while the cycle
// ended, keep the wake QueueInputs wrote (for a restart before they run)
// and get another cycle now through the again flag.
func (r *Runtime) settle(ctx context.Context, id string, epoch uint64) error {
	queued, err := r.cfg.Store.ClearWakeUnlessQueued(ctx, id, epoch)
	if err != nil || !queued {
		return err
	}
	r.mu.Lock()
	r.running[id].again = true
	r.mu.Unlock()
	return nil
}

// metricsLabel is the metrics label of the installation s runs under.
func (r *Runtime) metricsLabel(s *core.Session) string {
	switch {
	case r.cfg.MetricsLabel != nil:
		return r.cfg.MetricsLabel(s)
	case s.Provider() == core.ProviderAPI:
		return core.ProviderAPI
	case s.Tenant == "":
		return s.Provider()
	}
	return s.Tenant
}
