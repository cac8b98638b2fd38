package postgres

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"

	"github.com/switchboardhq/switchboard/sessions/store/storetest"
)

func TestScheduleConformance(t *testing.T) { storetest.RunSchedules(t, fresh) }

// TestScheduleFireAcrossReplicas: two replicas firing the same due times
// of a schedule of an agent at once start one session per due time.
func TestScheduleFireAcrossReplicas(t *testing.T) {
	stores := replicas(t)
	ctx := t.Context()
	agent, err := stores[0].CreateAgent(ctx, &core.Agent{Name: "nightly", Model: "anthropic/x"})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2030, 1, 1, 2, 30, 0, 0, time.UTC)
	next := core.NewTime(t0)
	sc, err := stores[0].CreateSchedule(ctx, &core.Schedule{Cron: "30 2 * * *", NextAt: &next, CreatedBy: core.CreatedByAdmin,
		Target: core.ScheduleTarget{Agent: agent.ID, Input: "triage"}})
	if err != nil {
		t.Fatal(err)
	}
	start := &core.NewSession{Session: core.Session{Agent: core.AgentRef{ID: agent.ID, Version: 1}}}
	for day := range 3 {
		due := t0.AddDate(0, 0, day)
		after := due.AddDate(0, 0, 1)
		var wg sync.WaitGroup
		var fired atomic.Int32
		for i := range 6 {
			wg.Go(func() {
				f, err := stores[i%2].FireSchedule(ctx, sc.ID, due, &after, start)
				if err != nil {
					t.Error(err)
					return
				}
				if f.Fired {
					fired.Add(1)
				}
			})
		}
		wg.Wait()
		if fired.Load() != 1 {
			t.Fatalf("day %d: %d fires, want 1", day, fired.Load())
		}
	}
	list, err := stores[1].ListSessions(ctx, core.SessionFilter{AgentID: agent.ID})
	if err != nil || len(list.Sessions) != 3 {
		t.Fatalf("%d sessions for 3 due times (%v)", len(list.Sessions), err)
	}
}
