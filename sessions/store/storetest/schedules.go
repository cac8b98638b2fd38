package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// ScheduleStore is a session store that keeps schedules.
type ScheduleStore interface {
	core.Store
	core.ScheduleStore
}

// RunSchedules runs the core.ScheduleStore suite. open must return a
// fresh, empty store for each subtest and close it when the test ends.
func RunSchedules[S ScheduleStore](t *testing.T, open func(t *testing.T) S) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s ScheduleStore)
	}{
		{"crud", testScheduleCRUD},
		{"due_order", testScheduleDue},
		{"fire_session", testFireSession},
		{"fire_new_session", testFireNewSession},
		{"fire_once_racing", testFireRace},
		{"fire_archived_target", testFireArchived},
		{"invalid", testScheduleInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
}

var schedT0 = time.Date(2030, 1, 2, 3, 4, 0, 0, time.UTC)

func timeAt(t time.Time) *core.Time { v := core.NewTime(t); return &v }

func newSchedule(t *testing.T, s ScheduleStore, sc core.Schedule) *core.Schedule {
	t.Helper()
	if sc.CreatedBy == "" {
		sc.CreatedBy = core.CreatedByAdmin
	}
	out, err := s.CreateSchedule(t.Context(), &sc)
	must(t, err)
	return out
}

func testScheduleCRUD(t *testing.T, s ScheduleStore) {
	ctx := t.Context()
	sess := newSession(t, s)
	a := newSchedule(t, s, core.Schedule{Cron: "0 9 * * *", TimeZone: "Europe/Berlin", NextAt: timeAt(schedT0),
		Target: core.ScheduleTarget{SessionID: sess.ID, Input: "morning"}})
	if !core.HasPrefix(a.ID, core.PrefixSchedule) || a.CreatedAt.IsZero() || a.Fires != 0 {
		t.Fatalf("created %+v", a)
	}
	got, err := s.GetSchedule(ctx, a.ID)
	must(t, err)
	sameJSON(t, "get", got, a)
	nextMillisecond() // ids of one millisecond are not ordered
	b := newSchedule(t, s, core.Schedule{At: timeAt(schedT0), NextAt: timeAt(schedT0), CreatedBy: sess.ID,
		Target: core.ScheduleTarget{SessionID: "ses_other", Input: "later"}})
	nextMillisecond()
	c := newSchedule(t, s, core.Schedule{Cron: "@daily", NextAt: timeAt(schedT0), Target: core.ScheduleTarget{Agent: "agt_x", Input: "x"}})

	list, more, err := s.ListSchedules(ctx, core.ScheduleQuery{Limit: 2})
	must(t, err)
	if len(list) != 2 || !more || list[0].ID != a.ID || list[1].ID != b.ID {
		t.Fatalf("first page %v more %v", sortedIDs(list, func(s *core.Schedule) string { return s.ID }), more)
	}
	list, more, err = s.ListSchedules(ctx, core.ScheduleQuery{After: b.ID})
	must(t, err)
	if len(list) != 1 || more || list[0].ID != c.ID {
		t.Fatalf("second page %d more %v", len(list), more)
	}
	// A session's schedules: those that target it and those its model made.
	list, _, err = s.ListSchedules(ctx, core.ScheduleQuery{Session: sess.ID})
	must(t, err)
	if len(list) != 2 || list[0].ID != a.ID || list[1].ID != b.ID {
		t.Fatalf("the session's schedules: %d", len(list))
	}

	paused, err := s.UpdateSchedule(ctx, a.ID, func(sc *core.Schedule) error {
		sc.Paused, sc.NextAt, sc.CreatedBy = true, nil, "someone else"
		return nil
	})
	must(t, err)
	if !paused.Paused || paused.NextAt != nil || paused.CreatedBy != core.CreatedByAdmin || !paused.UpdatedAt.After(a.CreatedAt.Add(-time.Millisecond)) {
		t.Fatalf("paused %+v", paused)
	}
	if due, err := s.DueSchedules(ctx, schedT0, 0); err != nil || len(due) != 2 {
		t.Fatalf("due after a pause: %d (%v)", len(due), err)
	}
	must(t, s.DeleteSchedule(ctx, b.ID))
	_, err = s.GetSchedule(ctx, b.ID)
	wantErr(t, err, core.ErrNotFound)
	wantErr(t, s.DeleteSchedule(ctx, b.ID), core.ErrNotFound)
	_, err = s.UpdateSchedule(ctx, b.ID, func(*core.Schedule) error { return nil })
	wantErr(t, err, core.ErrNotFound)
	if due, err := s.DueSchedules(ctx, schedT0, 0); err != nil || len(due) != 1 || due[0].ID != c.ID {
		t.Fatalf("due after a delete: %d (%v)", len(due), err)
	}
}

func testScheduleDue(t *testing.T, s ScheduleStore) {
	ctx := t.Context()
	if _, ok, err := s.NextScheduleAt(ctx); err != nil || ok {
		t.Fatalf("next of none: %v %v", ok, err)
	}
	target := core.ScheduleTarget{SessionID: "ses_x", Input: "x"}
	late := newSchedule(t, s, core.Schedule{At: timeAt(schedT0.Add(2 * time.Hour)), NextAt: timeAt(schedT0.Add(2 * time.Hour)), Target: target})
	early := newSchedule(t, s, core.Schedule{At: timeAt(schedT0), NextAt: timeAt(schedT0), Target: target})
	mid := newSchedule(t, s, core.Schedule{Cron: "0 * * * *", NextAt: timeAt(schedT0.Add(time.Hour)), Target: target})
	newSchedule(t, s, core.Schedule{Cron: "0 * * * *", Paused: true, Target: target})
	next, ok, err := s.NextScheduleAt(ctx)
	must(t, err)
	if !ok || !next.Equal(schedT0) {
		t.Fatalf("next %v %v", next, ok)
	}
	for _, tt := range []struct {
		now   time.Time
		limit int
		want  []string
	}{
		{schedT0.Add(-time.Millisecond), 0, nil},
		{schedT0, 0, []string{early.ID}},
		{schedT0.Add(90 * time.Minute), 0, []string{early.ID, mid.ID}},
		{schedT0.Add(3 * time.Hour), 0, []string{early.ID, mid.ID, late.ID}},
		{schedT0.Add(3 * time.Hour), 2, []string{early.ID, mid.ID}},
	} {
		due, err := s.DueSchedules(ctx, tt.now, tt.limit)
		must(t, err)
		var got []string
		for _, d := range due {
			got = append(got, d.ID)
		}
		if jsonOf(t, got) != jsonOf(t, tt.want) {
			t.Fatalf("due at %v (limit %d): %v, want %v", tt.now, tt.limit, got, tt.want)
		}
	}
}

// testFireSession: a fire queues the input on its session and moves the
// schedule on in one write; the same due time again fires nothing.
func testFireSession(t *testing.T, s ScheduleStore) {
	ctx := t.Context()
	sess := newSession(t, s)
	sc := newSchedule(t, s, core.Schedule{Cron: "0 * * * *", NextAt: timeAt(schedT0), Target: core.ScheduleTarget{SessionID: sess.ID, Input: "check the deploy"}})
	next := schedT0.Add(time.Hour)
	f, err := s.FireSchedule(ctx, sc.ID, schedT0, &next, nil)
	must(t, err)
	if !f.Fired || f.Created || f.Session == nil || f.Session.ID != sess.ID || f.Schedule.Fires != 1 ||
		!f.Schedule.NextAt.Equal(next) || !f.Schedule.LastFiredAt.Equal(schedT0) || f.Schedule.LastSessionID != sess.ID {
		t.Fatalf("fire %+v schedule %+v", f, f.Schedule)
	}
	pending, err := s.Pending(ctx, sess.ID)
	must(t, err)
	var b core.MessageBody
	if len(pending) != 1 || pending[0].Decode(&b) != nil || b.Text != "check the deploy" || b.ScheduleID != sc.ID {
		t.Fatalf("pending %+v", pending)
	}
	if got := getSession(t, s, sess.ID); got.Status != core.StatusQueued {
		t.Fatalf("fired session %s", got.Status)
	}
	again, err := s.FireSchedule(ctx, sc.ID, schedT0, &next, nil)
	must(t, err)
	if again.Fired {
		t.Fatal("a due time fired twice")
	}
	if pending, _ := s.Pending(ctx, sess.ID); len(pending) != 1 {
		t.Fatalf("%d inputs after a second fire", len(pending))
	}
	// A one-off is done once fired.
	once := newSchedule(t, s, core.Schedule{At: timeAt(schedT0), NextAt: timeAt(schedT0), Target: core.ScheduleTarget{SessionID: sess.ID, Input: "once"}})
	f, err = s.FireSchedule(ctx, once.ID, schedT0, nil, nil)
	must(t, err)
	if !f.Fired || f.Schedule.NextAt != nil {
		t.Fatalf("one-off %+v", f.Schedule)
	}
	if due, _ := s.DueSchedules(ctx, schedT0.Add(24*time.Hour), 0); len(due) != 1 || due[0].ID != sc.ID {
		t.Fatalf("due after the fires: %d", len(due))
	}
}

func testFireNewSession(t *testing.T, s ScheduleStore) {
	ctx := t.Context()
	agent := newAgent(t, s, "nightly")
	sc := newSchedule(t, s, core.Schedule{Cron: "0 2 * * *", NextAt: timeAt(schedT0), Target: core.ScheduleTarget{Agent: agent.ID, Input: "triage"}})
	start := &core.NewSession{Session: core.Session{Agent: core.AgentRef{ID: agent.ID, Version: agent.Version}, Tenant: "ops", Metadata: map[string]string{"k": "v"}}}
	next := schedT0.Add(24 * time.Hour)
	f, err := s.FireSchedule(ctx, sc.ID, schedT0, &next, start)
	must(t, err)
	if !f.Fired || !f.Created || f.Session == nil || f.Session.Tenant != "ops" || f.Session.Status != core.StatusQueued || f.Schedule.LastSessionID != f.Session.ID {
		t.Fatalf("fire %+v", f)
	}
	f2, err := s.FireSchedule(ctx, sc.ID, next, nil, start)
	must(t, err)
	if !f2.Fired || f2.Session.ID == f.Session.ID {
		t.Fatalf("the next fire did not start a session of its own: %+v", f2)
	}
	if got := allSessions(t, s, core.SessionFilter{AgentID: agent.ID}); len(got) != 2 {
		t.Fatalf("%d sessions of the agent, want 2", len(got))
	}
}

// testFireRace: replicas racing on one due time queue one input.
func testFireRace(t *testing.T, s ScheduleStore) {
	ctx := t.Context()
	sess := newSession(t, s)
	sc := newSchedule(t, s, core.Schedule{Cron: "0 * * * *", NextAt: timeAt(schedT0), Target: core.ScheduleTarget{SessionID: sess.ID, Input: "once"}})
	next := schedT0.Add(time.Hour)
	var wg sync.WaitGroup
	var mu sync.Mutex
	fired := 0
	for range 8 {
		wg.Go(func() {
			f, err := s.FireSchedule(ctx, sc.ID, schedT0, &next, nil)
			if err != nil {
				t.Error(err)
				return
			}
			if f.Fired {
				mu.Lock()
				fired++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if pending, _ := s.Pending(ctx, sess.ID); fired != 1 || len(pending) != 1 {
		t.Fatalf("%d fires, %d inputs; want 1 each", fired, len(pending))
	}
}

func testFireArchived(t *testing.T, s ScheduleStore) {
	ctx := t.Context()
	sess := newSession(t, s)
	sc := newSchedule(t, s, core.Schedule{Cron: "0 * * * *", NextAt: timeAt(schedT0), Target: core.ScheduleTarget{SessionID: sess.ID, Input: "x"}})
	_, err := s.Archive(ctx, sess.ID)
	must(t, err)
	next := schedT0.Add(time.Hour)
	f, err := s.FireSchedule(ctx, sc.ID, schedT0, &next, nil)
	must(t, err)
	if f.Fired || !f.Schedule.Paused || f.Schedule.NextAt != nil || f.Schedule.LastError == "" {
		t.Fatalf("fire on an archived session %+v", f.Schedule)
	}
	if got, _ := s.GetSchedule(ctx, sc.ID); !got.Paused || got.LastError == "" {
		t.Fatalf("stored %+v", got)
	}
	_, err = s.FireSchedule(ctx, "sch_missing", schedT0, nil, nil)
	wantErr(t, err, core.ErrNotFound)
}

func testScheduleInvalid(t *testing.T, s ScheduleStore) {
	for _, sc := range []core.Schedule{
		{Target: core.ScheduleTarget{SessionID: "ses_x", Input: "x"}},
		{Cron: "@daily", At: timeAt(schedT0), Target: core.ScheduleTarget{SessionID: "ses_x", Input: "x"}},
		{Cron: "@daily", Target: core.ScheduleTarget{Input: "x"}},
		{Cron: "@daily", Target: core.ScheduleTarget{SessionID: "ses_x", Agent: "agt_x", Input: "x"}},
		{Cron: "@daily", Target: core.ScheduleTarget{SessionID: "ses_x"}},
	} {
		_, err := s.CreateSchedule(t.Context(), &sc)
		wantErr(t, err, core.ErrInvalid)
	}
}
