package schedules_test

import (
	"context"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/panictest"
	"github.com/switchboardhq/switchboard/sessions/schedules"
)

// panicOpener panics when asked to post.
type panicOpener struct{}

func (panicOpener) OpenThread(context.Context, string, string, string, string) (core.Origin, string, error) {
	panic("opener bug")
}

// TestPanicFailsItsFiringOnly: a schedule whose firing panics is paused
// with last_error "internal error", the panic logged once with its stack;
// the other schedule due at the same time fires.
func TestPanicFailsItsFiringOnly(t *testing.T) {
	s := openStore(t)
	ctx := t.Context()
	a, err := s.CreateAgent(ctx, &core.Agent{Name: "standup", Model: "anthropic/x"})
	if err != nil {
		t.Fatal(err)
	}
	at := core.NewTime(t0)
	in := slackInstallation(t, s) // the channel policy is checked before the post
	posts, err := s.CreateSchedule(ctx, &core.Schedule{Cron: "0 9 * * *", NextAt: &at, CreatedBy: core.CreatedByAdmin,
		Target: core.ScheduleTarget{Agent: a.ID, Input: "standup", Post: &core.SchedulePost{Provider: "slack", Installation: in.ID, Channel: "C0OPS"}}})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := s.CreateSchedule(ctx, &core.Schedule{Cron: "0 9 * * *", NextAt: &at, CreatedBy: core.CreatedByAdmin,
		Target: core.ScheduleTarget{Agent: a.ID, Input: "report"}})
	if err != nil {
		t.Fatal(err)
	}
	logged := panictest.New()
	r := schedules.NewRunner(s, &handClock{now: t0.Add(time.Second)}, logged.Logger())
	r.Openers = map[string]core.ThreadOpener{"slack": panicOpener{}}
	if err := r.FireDue(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetSchedule(ctx, posts.ID); !got.Paused || got.LastError != "internal error" || got.Fires != 0 {
		t.Fatalf("the schedule whose firing panicked: %+v", got)
	}
	if got, _ := s.GetSchedule(ctx, plain.ID); got.Paused || got.Fires != 1 || got.LastSessionID == "" {
		t.Fatalf("the other schedule: %+v", got)
	}
	logged.WantOne(t, "panic_test.go", "schedule_id="+posts.ID)
}
