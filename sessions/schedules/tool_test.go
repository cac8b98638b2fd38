package schedules_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/schedules"
)

func callTool(t *testing.T, tool core.Tool, input any) core.ToolResult {
	t.Helper()
	raw, _ := json.Marshal(input)
	res, err := tool.Call(context.Background(), core.ToolCall{ID: "tu_1", Name: schedules.ToolName, Input: raw})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestTool: the model schedules a follow-up of its own session, lists
// and cancels it; each limit is refused with a tool error that says which.
func TestTool(t *testing.T) {
	s := openStore(t)
	ctx := t.Context()
	clock := &handClock{now: t0}
	p := &pokes{}
	tools, err := (&schedules.SessionTools{Store: s, Runner: p, Clock: clock}).Tools(ctx, &core.Session{ID: "ses_a"}, nil)
	if err != nil || len(tools) != 1 || tools[0].Def().Name != "schedule" {
		t.Fatalf("tools %v, %v", tools, err)
	}
	tool := tools[0]
	res := callTool(t, tool, map[string]any{"in": "1h", "message": "check the deploy"})
	if res.IsError || !strings.Contains(res.Output, "2030-06-01T10:00:00Z") || p.n != 1 {
		t.Fatalf("schedule: %+v", res)
	}
	list, _, _ := s.ListSchedules(ctx, core.ScheduleQuery{Session: "ses_a"})
	if len(list) != 1 || list[0].CreatedBy != "ses_a" || list[0].Target.SessionID != "ses_a" || !list[0].NextAt.Equal(t0.Add(time.Hour)) ||
		list[0].Target.Input != "[Scheduled follow-up] check the deploy" {
		t.Fatalf("stored %+v", list)
	}
	if res := callTool(t, tool, map[string]any{"list": true}); !strings.Contains(res.Output, list[0].ID+" at 2030-06-01T10:00:00Z: check the deploy") {
		t.Fatalf("list: %+v", res)
	}
	// Another session's tool does not see or cancel it.
	other, _ := (&schedules.SessionTools{Store: s, Clock: clock}).Tools(ctx, &core.Session{ID: "ses_b"}, nil)
	if res := callTool(t, other[0], map[string]any{"cancel": list[0].ID}); !res.IsError {
		t.Fatalf("another session canceled it: %+v", res)
	}
	if res := callTool(t, tool, map[string]any{"cancel": list[0].ID}); res.IsError {
		t.Fatalf("cancel: %+v", res)
	}

	for _, tt := range []struct {
		name  string
		input map[string]any
		want  string
	}{
		{"too soon", map[string]any{"in": "30s", "message": "x"}, "at least 1m0s away"},
		{"too late", map[string]any{"in": "800h", "message": "x"}, "at most 30 days"},
		{"past", map[string]any{"at": "2020-01-01T00:00:00Z", "message": "x"}, "too soon"},
		{"no message", map[string]any{"in": "1h"}, `"message" is required`},
		{"no time", map[string]any{"message": "x"}, `give "in"`},
		{"both times", map[string]any{"in": "1h", "at": "2030-06-01T12:00:00Z", "message": "x"}, `give "in"`},
		{"bad duration", map[string]any{"in": "soon", "message": "x"}, "not a duration"},
		{"bad time", map[string]any{"at": "tomorrow", "message": "x"}, "not an RFC 3339 time"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if res := callTool(t, tool, tt.input); !res.IsError || !strings.Contains(res.Output, tt.want) {
				t.Fatalf("%+v, want an error saying %q", res, tt.want)
			}
		})
	}

	// Ten pending at most.
	for i := range schedules.MaxPending {
		if res := callTool(t, tool, map[string]any{"in": fmt.Sprintf("%dh", i+2), "message": "x"}); res.IsError {
			t.Fatalf("follow-up %d: %+v", i, res)
		}
	}
	if res := callTool(t, tool, map[string]any{"in": "20h", "message": "x"}); !res.IsError || !strings.Contains(res.Output, "10 follow-ups pending") {
		t.Fatalf("the eleventh: %+v", res)
	}
}

// TestToolPerDay: at most 24 follow-ups within 24 hours, fired ones
// included.
func TestToolPerDay(t *testing.T) {
	s := openStore(t)
	ctx := t.Context()
	clock := &handClock{now: t0}
	tools, _ := (&schedules.SessionTools{Store: s, Clock: clock}).Tools(ctx, &core.Session{ID: "ses_a"}, nil)
	for i := range schedules.MaxPerDay {
		at := core.NewTime(t0.Add(time.Duration(i+1) * 30 * time.Minute))
		if _, err := s.CreateSchedule(ctx, &core.Schedule{At: &at, CreatedBy: "ses_a", LastFiredAt: &at, Fires: 1,
			Target: core.ScheduleTarget{SessionID: "ses_a", Input: "x"}}); err != nil {
			t.Fatal(err)
		}
	}
	if res := callTool(t, tools[0], map[string]any{"in": "13h", "message": "x"}); !res.IsError || !strings.Contains(res.Output, "24 follow-ups within 24 hours") {
		t.Fatalf("the 25th in a day: %+v", res)
	}
	if res := callTool(t, tools[0], map[string]any{"in": "48h", "message": "x"}); res.IsError {
		t.Fatalf("a follow-up two days later: %+v", res)
	}
}
