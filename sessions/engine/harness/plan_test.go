package harness_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakemodel"
)

func TestPlanToolLogsThePlan(t *testing.T) {
	tests := []struct {
		name    string
		input   string
		want    []core.PlanEntry // nil: refused
		wantErr string
	}{
		{name: "a plan", input: `{"entries":[{"content":" read the cron table ","status":"completed","priority":"high"},{"content":"fix the job","status":"in_progress"}]}`,
			want: []core.PlanEntry{{Content: "read the cron table", Status: "completed", Priority: "high"}, {Content: "fix the job", Status: "in_progress", Priority: "medium"}}},
		{name: "no entries", input: `{"entries":[]}`, wantErr: "want 1 to 50 steps"},
		{name: "an unknown status", input: `{"entries":[{"content":"x","status":"done"}]}`, wantErr: `status "done"`},
		{name: "an empty step", input: `{"entries":[{"content":"  ","status":"pending"}]}`, wantErr: "content"},
		{name: "not an object", input: `["x"]`, wantErr: "input must be"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t,
				fakemodel.Step{Calls: []core.Block{fakemodel.ToolUse("tu_1", "plan", tc.input)}},
				fakemodel.Step{Text: "done"},
			)
			e.say("go")
			e.run(t, context.Background())
			var res core.ToolResultBody
			if err := e.log.last(core.TypeAgentToolResult).Decode(&res); err != nil {
				t.Fatal(err)
			}
			hasPlan := slices.Contains(e.log.types(), core.TypeAgentPlan)
			if tc.want == nil {
				if hasPlan || !res.IsError || !strings.Contains(res.Output, tc.wantErr) {
					t.Fatalf("plan logged %v, result %+v; want the error %q and no plan", hasPlan, res, tc.wantErr)
				}
				return
			}
			var p core.PlanBody
			if err := e.log.last(core.TypeAgentPlan).Decode(&p); err != nil || !slices.Equal(p.Entries, tc.want) {
				t.Fatalf("plan %+v (%v), want %+v", p.Entries, err, tc.want)
			}
			if ev := e.log.last(core.TypeAgentPlan); ev.Level != core.LevelProgress || res.IsError {
				t.Fatalf("plan at level %s, result %+v", ev.Level, res)
			}
		})
	}
}
