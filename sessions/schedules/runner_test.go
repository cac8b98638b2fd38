package schedules_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/schedules"
	"github.com/switchboardhq/switchboard/sessions/store/bolt"
)

// handClock is moved by the test; its timers never fire by themselves.
type handClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *handClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *handClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

func (c *handClock) Timer(time.Duration) (<-chan time.Time, func()) { return nil, func() {} }

func openStore(t *testing.T) *bolt.Store {
	t.Helper()
	s, err := bolt.Open(filepath.Join(t.TempDir(), "db"), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

var t0 = time.Date(2030, 6, 1, 9, 0, 0, 0, time.UTC)

func pendingTexts(t *testing.T, s *bolt.Store, id string) []string {
	t.Helper()
	p, err := s.Pending(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range p {
		var b core.MessageBody
		_ = e.Decode(&b)
		out = append(out, b.Text)
	}
	return out
}

// TestRunnerFiresOnce: each due time fires once; a gap of several due
// times (the gateway was down) fires once, and the next due time is the
// first after now.
func TestRunnerFiresOnce(t *testing.T) {
	s := openStore(t)
	ctx := t.Context()
	a, err := s.CreateAgent(ctx, &core.Agent{Name: "a", Model: "anthropic/x"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.CreateSession(ctx, core.NewSession{Session: core.Session{Agent: core.AgentRef{ID: a.ID, Version: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Session.ID
	clock := &handClock{now: t0.Add(-time.Second)}
	sc := &core.Schedule{Cron: "0 * * * *", Target: core.ScheduleTarget{SessionID: id, Input: "tick"}, CreatedBy: core.CreatedByAdmin}
	if sc.NextAt, err = schedules.First(sc, clock.Now()); err != nil {
		t.Fatal(err)
	}
	sc, err = s.CreateSchedule(ctx, sc)
	if err != nil {
		t.Fatal(err)
	}
	r := schedules.NewRunner(s, clock, nil)
	step := func(at time.Time, wantTicks int, wantNext time.Time) {
		t.Helper()
		clock.set(at)
		if err := r.FireDue(ctx); err != nil {
			t.Fatal(err)
		}
		if err := r.FireDue(ctx); err != nil { // a second look fires nothing more
			t.Fatal(err)
		}
		if got := len(pendingTexts(t, s, id)); got != wantTicks {
			t.Fatalf("at %v: %d inputs, want %d", at, got, wantTicks)
		}
		got, err := s.GetSchedule(ctx, sc.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !got.NextAt.Equal(wantNext) {
			t.Fatalf("at %v: next %v, want %v", at, got.NextAt, wantNext)
		}
	}
	step(t0.Add(-time.Second), 0, t0)
	step(t0, 1, t0.Add(time.Hour))
	step(t0.Add(30*time.Minute), 1, t0.Add(time.Hour))
	// Five hours pass with nothing running: one fire for them all.
	step(t0.Add(5*time.Hour+30*time.Minute), 2, t0.Add(6*time.Hour))
	got, _ := s.GetSchedule(ctx, sc.ID)
	if got.Fires != 2 || !got.LastFiredAt.Equal(t0.Add(time.Hour)) {
		t.Fatalf("fires %d, last %v", got.Fires, got.LastFiredAt)
	}
}

// TestRunnerNewSessions: a schedule of an agent starts a session of its
// latest version at each fire; once the agent is gone it pauses, saying
// why.
func TestRunnerNewSessions(t *testing.T) {
	s := openStore(t)
	ctx := t.Context()
	a, err := s.CreateAgent(ctx, &core.Agent{Name: "nightly", Model: "anthropic/x"})
	if err != nil {
		t.Fatal(err)
	}
	clock := &handClock{now: t0}
	at := core.NewTime(t0)
	sc, err := s.CreateSchedule(ctx, &core.Schedule{Cron: "0 9 * * *", NextAt: &at, CreatedBy: core.CreatedByAdmin,
		Target: core.ScheduleTarget{Agent: a.ID, Input: "triage the inbox", Tenant: "ops"}})
	if err != nil {
		t.Fatal(err)
	}
	r := schedules.NewRunner(s, clock, nil)
	if err := r.FireDue(ctx); err != nil {
		t.Fatal(err)
	}
	got, _ := s.GetSchedule(ctx, sc.ID)
	first, err := s.GetSession(ctx, got.LastSessionID)
	if err != nil || first.Agent.ID != a.ID || first.Tenant != "ops" || first.Status != core.StatusQueued {
		t.Fatalf("the fire's session %+v (%v)", first, err)
	}
	if texts := pendingTexts(t, s, first.ID); len(texts) != 1 || texts[0] != "triage the inbox" {
		t.Fatalf("its input %v", texts)
	}
	if _, err := s.UpdateAgent(ctx, a.ID, 0, func(a *core.Agent) error { a.System = "v2"; return nil }); err != nil {
		t.Fatal(err)
	}
	clock.set(t0.Add(24 * time.Hour))
	if err := r.FireDue(ctx); err != nil {
		t.Fatal(err)
	}
	got, _ = s.GetSchedule(ctx, sc.ID)
	second, _ := s.GetSession(ctx, got.LastSessionID)
	if second.ID == first.ID || second.Agent.Version != 2 {
		t.Fatalf("the second fire's session %+v", second)
	}
	// A deleted agent: the schedule pauses with why.
	stale, err := s.CreateSchedule(ctx, &core.Schedule{At: &at, NextAt: &at, CreatedBy: core.CreatedByAdmin,
		Target: core.ScheduleTarget{Agent: "agt_gone", Input: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.FireDue(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetSchedule(ctx, stale.ID); !got.Paused || got.NextAt != nil || got.LastError == "" {
		t.Fatalf("a schedule of a gone agent %+v", got)
	}
}

// opener is a hand-written core.ThreadOpener: it records its keys, fails
// with err while set, and opens a thread named after the key.
type opener struct {
	keys []string
	err  error
}

func (o *opener) OpenThread(_ context.Context, installationID, channel, text, key string) (core.Origin, string, error) {
	o.keys = append(o.keys, key)
	if o.err != nil {
		return core.Origin{}, "", o.err
	}
	return core.Origin{Provider: "slack", Key: "slack:T1:" + channel + ":" + fmt.Sprint(len(o.keys)), TenantID: "T1"}, "slack:T1", nil
}

// slackInstallation saves a Slack installation whose policy allows
// C0OPS and C0DEV only.
func slackInstallation(t *testing.T, s *bolt.Store) *core.Installation {
	t.Helper()
	in, err := s.SaveInstallation(t.Context(), &core.Installation{Provider: "slack", ExternalID: "T1",
		Policy: core.AccessPolicy{Channels: []string{"C0OPS", "C0DEV"}}}, []byte("sealed"), nil)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// TestRunnerPostPolicy: a posting schedule whose channel the
// installation's policy no longer allows (it changed after the schedule
// was made) posts nothing when due: it pauses, naming the policy; a
// channel the policy allows posts.
func TestRunnerPostPolicy(t *testing.T) {
	s := openStore(t)
	ctx := t.Context()
	a, err := s.CreateAgent(ctx, &core.Agent{Name: "standup", Model: "anthropic/x"})
	if err != nil {
		t.Fatal(err)
	}
	in := slackInstallation(t, s)
	at := core.NewTime(t0)
	schedule := func(channel string) *core.Schedule {
		t.Helper()
		sc, err := s.CreateSchedule(ctx, &core.Schedule{Cron: "0 9 * * *", NextAt: &at, CreatedBy: core.CreatedByAdmin,
			Target: core.ScheduleTarget{Agent: a.ID, Input: "standup", Post: &core.SchedulePost{Provider: "slack", Installation: in.ID, Channel: channel}}})
		if err != nil {
			t.Fatal(err)
		}
		return sc
	}
	allowed, dropped := schedule("C0OPS"), schedule("C0DEV")
	if _, err := s.UpdateInstallation(ctx, in.ID, func(in *core.Installation) error {
		in.Policy.Channels = []string{"C0OPS"}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	o := &opener{}
	r := schedules.NewRunner(s, &handClock{now: t0}, nil)
	r.Openers = map[string]core.ThreadOpener{"slack": o}
	if err := r.FireDue(ctx); err != nil {
		t.Fatal(err)
	}
	got, _ := s.GetSchedule(ctx, dropped.ID)
	if !got.Paused || got.Fires != 0 || !strings.Contains(got.LastError, "channel policy") || !strings.Contains(got.LastError, "C0DEV") {
		t.Fatalf("a schedule posting outside the policy %+v", got)
	}
	if got, _ := s.GetSchedule(ctx, allowed.ID); got.Fires != 1 {
		t.Fatalf("a schedule posting within the policy %+v", got)
	}
	if len(o.keys) != 1 || !strings.HasPrefix(o.keys[0], "schedule:"+allowed.ID+":") {
		t.Fatalf("posts %v, want the allowed schedule's only", o.keys)
	}
}

// TestRunnerPosts: a schedule that posts opens its thread before it fires
// and the new session takes it as its origin; a failure worth retrying
// fires nothing and the next look tries again; a refusal pauses it.
func TestRunnerPosts(t *testing.T) {
	s := openStore(t)
	ctx := t.Context()
	a, err := s.CreateAgent(ctx, &core.Agent{Name: "standup", Model: "anthropic/x"})
	if err != nil {
		t.Fatal(err)
	}
	clock := &handClock{now: t0}
	at := core.NewTime(t0)
	in := slackInstallation(t, s)
	sc, err := s.CreateSchedule(ctx, &core.Schedule{Cron: "0 9 * * *", NextAt: &at, CreatedBy: core.CreatedByAdmin,
		Target: core.ScheduleTarget{Agent: a.ID, Input: "standup", Post: &core.SchedulePost{Provider: "slack", Installation: in.ID, Channel: "C0OPS"}}})
	if err != nil {
		t.Fatal(err)
	}
	o := &opener{err: errors.New("slack is down")}
	r := schedules.NewRunner(s, clock, nil)
	r.Openers = map[string]core.ThreadOpener{"slack": o}
	if err := r.FireDue(ctx); err == nil {
		t.Fatal("a failed post fired")
	}
	if got, _ := s.GetSchedule(ctx, sc.ID); got.Fires != 0 || got.Paused {
		t.Fatalf("after a failed post %+v", got)
	}
	o.err = nil
	if err := r.FireDue(ctx); err != nil {
		t.Fatal(err)
	}
	got, _ := s.GetSchedule(ctx, sc.ID)
	sess, err := s.GetSession(ctx, got.LastSessionID)
	want := fmt.Sprintf("schedule:%s:%d", sc.ID, t0.UnixNano())
	if err != nil || sess.Origin == nil || sess.Origin.Key != "slack:T1:C0OPS:2" || sess.Tenant != "slack:T1" || len(o.keys) != 2 || o.keys[0] != want || o.keys[1] != want {
		t.Fatalf("session %+v (%v), keys %v", sess, err, o.keys)
	}
	if byKey, err := s.SessionByKey(ctx, "slack:T1:C0OPS:2"); err != nil || byKey.ID != sess.ID {
		t.Fatalf("the thread's key does not route to the session: %v", err)
	}
	o.err = fmt.Errorf("channel_not_found: %w", core.ErrInvalid)
	clock.set(t0.Add(24 * time.Hour))
	if err := r.FireDue(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetSchedule(ctx, sc.ID); !got.Paused || !strings.Contains(got.LastError, "channel_not_found") {
		t.Fatalf("after a refused post %+v", got)
	}
}

// TestRunnerSweep: one-offs that fired before the cutoff go; later ones,
// paused ones, pending ones and cron schedules stay.
func TestRunnerSweep(t *testing.T) {
	s := openStore(t)
	ctx := t.Context()
	old, recent := core.NewTime(t0.Add(-10*24*time.Hour)), core.NewTime(t0.Add(-time.Hour))
	target := core.ScheduleTarget{SessionID: "ses_a", Input: "x"}
	mk := func(sc core.Schedule) string {
		t.Helper()
		sc.Target, sc.CreatedBy = target, "ses_a"
		out, err := s.CreateSchedule(ctx, &sc)
		if err != nil {
			t.Fatal(err)
		}
		return out.ID
	}
	gone := mk(core.Schedule{At: &old, LastFiredAt: &old, Fires: 1})
	keep := []string{
		mk(core.Schedule{At: &recent, LastFiredAt: &recent, Fires: 1}),
		mk(core.Schedule{At: &old, LastFiredAt: &old, Fires: 1, Paused: true}),
		mk(core.Schedule{At: &recent, NextAt: &recent}),
		mk(core.Schedule{Cron: "@daily", LastFiredAt: &old, NextAt: &recent}),
	}
	n, err := schedules.NewRunner(s, &handClock{now: t0}, nil).Sweep(ctx, t0.Add(-schedules.Keep))
	if err != nil || n != 1 {
		t.Fatalf("swept %d (%v), want 1", n, err)
	}
	if _, err := s.GetSchedule(ctx, gone); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("the old one-off: %v", err)
	}
	for _, id := range keep {
		if _, err := s.GetSchedule(ctx, id); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
	}
}
