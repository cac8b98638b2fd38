package webhooks

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/switchboardhq/switchboard/core"
)

// Store is what the webhooks need of the session store.
type Store interface {
	core.DestinationStore
	core.DeliveryQueue
	GetAgent(ctx context.Context, idOrName string) (*core.Agent, error)
	GetSession(ctx context.Context, id string) (*core.Session, error)
}

// Defaults of Config.
const (
	DefaultWorkers     = 16
	DefaultBackoffBase = time.Second
	DefaultBackoffMax  = time.Hour
	DefaultHorizon     = 24 * time.Hour
	// DefaultPauseAfter is longer than the horizon: a dead letter needs no
	// one (later events proceed), a pause needs a person to resume, so it
	// is kept for a receiver that has been failing for days.
	DefaultPauseAfter = 72 * time.Hour
	// DefaultClaimTTL matches the runtime's default session lease.
	DefaultClaimTTL = 15 * time.Second
)

// Config wires a Service.
type Config struct {
	Store Store
	// Commits is the store's commit stream: an append queues its
	// deliveries in its own transaction, and its change wakes the
	// dispatcher. Without it the dispatcher finds them at its next look.
	Commits core.CommitStream
	Sealer  core.Sealer
	// Client sends deliveries (default NewClient with AllowPrivate).
	Client *http.Client
	// AllowPrivate also lets destinations name private IP literals at
	// create time; the Client's guard decides at connect time.
	AllowPrivate bool
	// Workers bounds the deliveries in flight (default 16).
	Workers int
	// Backoff after the nth failure is a uniform draw from
	// [0, min(BackoffMax, BackoffBase·2ⁿ⁻¹)] ("full jitter").
	BackoffBase, BackoffMax time.Duration
	// Horizon is how long after its first attempt a delivery is retried
	// before it is dead-lettered (default 24 h).
	Horizon time.Duration
	// PauseAfter pauses a destination failing without a success for this
	// long (default 72 h; negative: never).
	PauseAfter time.Duration
	// Jitter draws from [0, n) (default math/rand/v2).
	Jitter func(n int64) int64
	// Holder names this process among the replicas sharing the store
	// (default a fresh id); the runtime's holder, when both are wired.
	Holder string
	// ClaimTTL is how long a stream's claim outlives the longest attempt
	// (the Client's timeout) without renewal: a replica that dies holding
	// streams has them taken over after that (default DefaultClaimTTL).
	ClaimTTL time.Duration
	Logger   *slog.Logger
}

// Service creates destinations and delivers their deliveries.
type Service struct {
	cfg  Config
	log  *slog.Logger
	wake chan struct{}

	mu      sync.Mutex
	running int                // streams a worker is delivering
	targets map[string]*target // destination id → url and signer
	rec     *recorder

	cancel context.CancelFunc
	done   chan struct{}
	wg     sync.WaitGroup
}

// target is a destination ready to send to; destinations do not change
// their url or secret, so it is cached until the destination is deleted.
type target struct {
	url  string
	sign *standardwebhooks.Webhook // nil: the destination has no secret
}

// New returns a service; Start starts delivering.
func New(cfg Config) *Service {
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultWorkers
	}
	if cfg.BackoffBase <= 0 {
		cfg.BackoffBase = DefaultBackoffBase
	}
	if cfg.BackoffMax <= 0 {
		cfg.BackoffMax = DefaultBackoffMax
	}
	cfg.BackoffMax = max(cfg.BackoffMax, cfg.BackoffBase)
	if cfg.Horizon <= 0 {
		cfg.Horizon = DefaultHorizon
	}
	if cfg.PauseAfter == 0 {
		cfg.PauseAfter = DefaultPauseAfter
	}
	if cfg.Client == nil {
		cfg.Client = NewClient(ClientOptions{AllowPrivate: cfg.AllowPrivate, MaxConnsPerHost: cfg.Workers})
	}
	if cfg.Jitter == nil {
		cfg.Jitter = rand.Int64N
	}
	if cfg.Holder == "" {
		cfg.Holder = core.NewID("run")
	}
	if cfg.ClaimTTL <= 0 {
		cfg.ClaimTTL = DefaultClaimTTL
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Service{
		cfg:     cfg,
		log:     cfg.Logger,
		wake:    make(chan struct{}, 1),
		targets: map[string]*target{},
		rec:     &recorder{store: cfg.Store},
	}
}

// Notify tells the dispatcher the delivery queue may have new due deliveries
// (an append, a resume, a redelivery). It never blocks.
func (s *Service) Notify() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// forget drops a deleted destination's cached target.
func (s *Service) forget(id string) {
	s.mu.Lock()
	delete(s.targets, id)
	s.mu.Unlock()
}

// Start starts the dispatcher. Deliveries left pending by a previous
// process are due at once or at their retry time.
func (s *Service) Start(ctx context.Context) {
	ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	s.done = make(chan struct{})
	if s.cfg.Commits != nil {
		sub := s.cfg.Commits.Subscribe("webhooks", 1024)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			sub.Run(ctx, func(c core.Change) {
				if len(c.Events) > 0 {
					s.Notify()
				}
			}, s.Notify)
		}()
	}
	go func() {
		defer close(s.done)
		s.dispatch(ctx)
	}()
}

// Stop stops dispatching and cancels the attempts in flight, which are
// not recorded: they stay due and are tried again at the next start. Its
// streams' claims are released, so another replica goes on with them at
// once.
func (s *Service) Stop(ctx context.Context) error {
	if s.cancel == nil {
		return nil
	}
	s.cancel()
	finished := make(chan struct{})
	go func() {
		<-s.done
		s.wg.Wait()
		close(finished)
	}()
	select {
	case <-finished:
		if err := s.cfg.Store.ReleaseDeliveryClaims(ctx, s.cfg.Holder); err != nil {
			// They run out by themselves.
			s.log.Warn("release the delivery streams' claims", "err", err)
		}
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// backoff is the wait after a delivery's nth failure: full jitter over an
// exponential ceiling.
func (s *Service) backoff(n int) time.Duration {
	ceiling := s.cfg.BackoffMax
	if n < 40 {
		if d := s.cfg.BackoffBase << (n - 1); d > 0 && d < ceiling {
			ceiling = d
		}
	}
	return time.Duration(s.cfg.Jitter(int64(ceiling) + 1))
}

// retryAt is when a delivery that just failed (its nth failure, at now) is
// tried again; zero when its horizon has passed and it is dead.
func (s *Service) retryAt(d *core.Delivery, n int, now time.Time) time.Time {
	first := now
	if d.FirstAttemptAt != nil {
		first = d.FirstAttemptAt.Time
	}
	deadline := first.Add(s.cfg.Horizon)
	if !now.Before(deadline) {
		return time.Time{}
	}
	// The last try happens at the horizon itself rather than past it.
	if at := now.Add(s.backoff(n)); at.Before(deadline) {
		return at
	}
	return deadline
}
