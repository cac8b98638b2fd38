// Package schedules runs schedules: the Runner fires each due time once
// (the store claims it in the transaction that queues the input), the
// Handler serves /v1/schedules, and the schedule tool lets a session's
// model ask to be woken later.
package schedules

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/crontab"
)

// Store is what schedules need of the session store.
type Store interface {
	core.ScheduleStore
	GetAgent(ctx context.Context, idOrName string) (*core.Agent, error)
	GetSession(ctx context.Context, id string) (*core.Session, error)
	GetInstallation(ctx context.Context, id string) (*core.Installation, error)
}

// Clock is the runner's time; tests drive it by hand.
type Clock interface {
	Now() time.Time
	Timer(d time.Duration) (c <-chan time.Time, stop func())
}

// maxIdle bounds how long the runner sleeps without reading the store:
// schedules another replica made are seen within it.
const maxIdle = time.Minute

// Runner fires due schedules. With several replicas each runs one; the
// store makes each due time fire once.
type Runner struct {
	Store  Store
	Clock  Clock // default the wall clock
	Logger *slog.Logger
	// Openers post a scheduled session's first message on its platform
	// (ScheduleTarget.Post), by provider name.
	Openers map[string]core.ThreadOpener
	poke    chan struct{}
}

// NewRunner returns a runner; Run runs it.
func NewRunner(store Store, clock Clock, log *slog.Logger) *Runner {
	if clock == nil {
		clock = core.WallClock{}
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Runner{Store: store, Clock: clock, Logger: log, poke: make(chan struct{}, 1)}
}

// DeadlineClock is a clock that wakes at an instant rather than after a
// while: one a test moves by hand (the wall clock's timers are the same
// either way). A timer at an instant already past fires at once.
type DeadlineClock interface {
	TimerAt(t time.Time) (c <-chan time.Time, stop func())
}

// timer wakes the runner at t.
func (r *Runner) timer(t time.Time) (<-chan time.Time, func()) {
	if dc, ok := r.Clock.(DeadlineClock); ok {
		return dc.TimerAt(t)
	}
	return r.Clock.Timer(t.Sub(r.Clock.Now()))
}

// Poke makes the runner read the store again now: a schedule was made,
// resumed or moved.
func (r *Runner) Poke() {
	select {
	case r.poke <- struct{}{}:
	default:
	}
}

// Keep is how long a one-off that fired stays listed (the schedule
// tool's daily limit counts the follow-ups of the last day).
const Keep = 7 * 24 * time.Hour

// Run fires due schedules until ctx ends, and once an hour deletes the
// one-offs that fired more than Keep ago.
func (r *Runner) Run(ctx context.Context) {
	var swept time.Time
	for {
		if now := r.Clock.Now(); now.Sub(swept) >= time.Hour {
			if n, err := r.Sweep(ctx, now.Add(-Keep)); err != nil && ctx.Err() == nil {
				r.Logger.Warn("sweep fired one-off schedules", "err", err)
			} else if n > 0 {
				r.Logger.Info("swept fired one-off schedules", "deleted", n)
			}
			swept = now
		}
		// One reading of the clock decides when to look again, so a clock
		// that moves meanwhile cannot push the wake past a due time.
		now := r.Clock.Now()
		wait := maxIdle
		if err := r.FireDue(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			r.Logger.Error("fire schedules", "err", err)
			wait = 5 * time.Second
		} else if at, ok, err := r.Store.NextScheduleAt(ctx); err == nil && ok {
			wait = min(wait, max(at.Sub(now), 0))
		}
		c, stop := r.timer(now.Add(max(wait, time.Millisecond)))
		select {
		case <-ctx.Done():
			stop()
			return
		case <-r.poke:
			stop()
		case <-c:
		}
	}
}

// Sweep deletes the one-off schedules that fired before before.
func (r *Runner) Sweep(ctx context.Context, before time.Time) (int, error) {
	var done []string
	err := core.EachSchedule(ctx, r.Store, core.ScheduleQuery{}, func(sc *core.Schedule) bool {
		if sc.At != nil && sc.NextAt == nil && !sc.Paused && sc.LastFiredAt != nil && sc.LastFiredAt.Before(before) {
			done = append(done, sc.ID)
		}
		return true
	})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, id := range done {
		if err := r.Store.DeleteSchedule(ctx, id); err != nil && !errors.Is(err, core.ErrNotFound) {
			return n, err
		}
		n++
	}
	return n, nil
}

// FireDue fires every schedule due now, once each, however many of its
// times passed while nothing ran: the next due time is the first after
// now.
func (r *Runner) FireDue(ctx context.Context) error {
	for {
		now := r.Clock.Now()
		due, err := r.Store.DueSchedules(ctx, now, 100)
		if err != nil {
			return err
		}
		for _, sc := range due {
			if err := r.fireGuarded(ctx, sc, now); err != nil {
				return fmt.Errorf("schedule %s: %w", sc.ID, err)
			}
		}
		if len(due) < 100 {
			return nil
		}
	}
}

// fireGuarded fires sc. A panic in it (a provider's opener, most likely)
// is a failed firing: logged once with its stack, it pauses the schedule
// with last_error "internal error", as a schedule that cannot fire is
// paused, so that it neither holds up the other due schedules nor fires
// again before someone resumes it.
func (r *Runner) fireGuarded(ctx context.Context, sc *core.Schedule, now time.Time) error {
	err := r.recoveredFire(ctx, sc, now)
	if errors.Is(err, core.ErrPanicked) {
		return r.stop(ctx, sc, err)
	}
	return err
}

func (r *Runner) recoveredFire(ctx context.Context, sc *core.Schedule, now time.Time) (err error) {
	defer core.Recover(r.Logger, &err, "schedule_id", sc.ID)
	return r.fire(ctx, sc, now)
}

func (r *Runner) fire(ctx context.Context, sc *core.Schedule, now time.Time) error {
	due := sc.NextAt.Time
	next, err := Next(sc, now)
	if err != nil {
		return r.stop(ctx, sc, err)
	}
	var start *core.NewSession
	if sc.Target.Agent != "" {
		a, err := r.Store.GetAgent(ctx, sc.Target.Agent)
		if errors.Is(err, core.ErrNotFound) {
			return r.stop(ctx, sc, fmt.Errorf("agent %s is gone", sc.Target.Agent))
		}
		if err != nil {
			return err
		}
		start = &core.NewSession{Session: core.Session{Agent: core.AgentRef{ID: a.ID, Version: a.Version},
			Metadata: sc.Target.Metadata, Tenant: sc.Target.Tenant}}
		if post := sc.Target.Post; post != nil {
			stop, err := r.open(ctx, sc, due, start)
			if stop != nil {
				return r.stop(ctx, sc, stop)
			}
			if err != nil {
				return err
			}
		}
	}
	f, err := r.Store.FireSchedule(ctx, sc.ID, due, next, start)
	if errors.Is(err, core.ErrNotFound) {
		return nil // deleted meanwhile
	}
	if err != nil {
		return err
	}
	switch {
	case f.Fired:
		missed := ""
		if next != nil && due.Before(now.Add(-time.Minute)) {
			missed = "fired late, once, for the times it missed"
		}
		r.Logger.Info("schedule fired", "schedule_id", sc.ID, "due", due, "session_id", f.Session.ID, "created", f.Created, "next", next, "note", missed)
	case f.Schedule.LastError != "" && f.Schedule.Paused:
		r.Logger.Warn("schedule paused: its session cannot take input", "schedule_id", sc.ID, "err", f.Schedule.LastError)
	}
	return nil
}

// openNote begins the message a scheduled session's thread starts with.
const openNote = "⏰ Scheduled: "

// open posts the schedule's message where its new session will answer
// (once per due time, however often it is asked), in a channel the
// installation's policy allows, and gives start that origin. stop says why the schedule cannot fire there at all; err is a
// failure worth trying again.
func (r *Runner) open(ctx context.Context, sc *core.Schedule, due time.Time, start *core.NewSession) (stop, err error) {
	post := sc.Target.Post
	opener := r.Openers[post.Provider]
	if opener == nil {
		return fmt.Errorf("no %s provider is configured to post in", post.Provider), nil
	}
	// The policy may have changed since the schedule was made.
	in, err := r.Store.GetInstallation(ctx, post.Installation)
	switch {
	case errors.Is(err, core.ErrNotFound):
		return fmt.Errorf("post in %s channel %s: %w", post.Provider, post.Channel, err), nil
	case err != nil:
		return nil, err
	}
	if err := in.CheckPostChannel(post.Channel); err != nil {
		return fmt.Errorf("post in %s: %w", post.Provider, err), nil
	}
	origin, tenant, err := opener.OpenThread(ctx, post.Installation, post.Channel, openNote+sc.Target.Input, fmt.Sprintf("schedule:%s:%d", sc.ID, due.UnixNano()))
	switch {
	case errors.Is(err, core.ErrNotFound), errors.Is(err, core.ErrInvalid):
		return fmt.Errorf("post in %s channel %s: %w", post.Provider, post.Channel, err), nil
	case err != nil:
		return nil, fmt.Errorf("post in %s channel %s: %w", post.Provider, post.Channel, err)
	}
	start.Session.Origin, start.ExternalKey, start.Session.Tenant = &origin, origin.Key, tenant
	return nil, nil
}

// stop pauses a schedule that cannot fire, saying why.
func (r *Runner) stop(ctx context.Context, sc *core.Schedule, why error) error {
	r.Logger.Warn("schedule paused: it cannot fire", "schedule_id", sc.ID, "err", why)
	_, err := r.Store.UpdateSchedule(ctx, sc.ID, func(s *core.Schedule) error {
		s.Paused, s.NextAt, s.LastError = true, nil, why.Error()
		return nil
	})
	if errors.Is(err, core.ErrNotFound) {
		return nil
	}
	return err
}

// Next is when sc is due after after: the cron expression's next time,
// or, for a one-off, nil (it fires once).
func Next(sc *core.Schedule, after time.Time) (*time.Time, error) {
	if sc.Cron == "" {
		return nil, nil
	}
	spec, err := crontab.Parse(sc.Cron, sc.TimeZone)
	if err != nil {
		return nil, err
	}
	next := spec.Next(after)
	if next.IsZero() {
		return nil, nil
	}
	return &next, nil
}

// First is when a new or resumed schedule is first due: the one-off's
// time, or the cron expression's first time after now.
func First(sc *core.Schedule, now time.Time) (*core.Time, error) {
	if sc.At != nil {
		at := *sc.At
		return &at, nil
	}
	next, err := Next(sc, now)
	if err != nil || next == nil {
		return nil, err
	}
	t := core.NewTime(*next)
	return &t, nil
}
