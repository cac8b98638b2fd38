package linear

import (
	"slices"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

func TestPlanStatus(t *testing.T) {
	for in, want := range map[string]string{
		"pending": "pending", "in_progress": "inProgress", "inProgress": "inProgress", "completed": "completed",
		"canceled": "canceled", "cancelled": "canceled", "failed": "canceled", "": "pending", "thinking": "pending",
	} {
		if got := planStatus(in); got != want {
			t.Errorf("planStatus(%q) = %q, want %q", in, got, want)
		}
	}
}

func planEv(entries ...core.PlanEntry) core.Event {
	return core.NewEvent(core.TypeAgentPlan, core.LevelProgress, core.ActorAgent, core.PlanBody{Entries: entries})
}

// TestSinkSetsThePlan is acceptance 4's plan: each agent.plan replaces the
// agent session's plan (agentSessionUpdate), every entry with its status
// in Linear's words, in order.
func TestSinkSetsThePlan(t *testing.T) {
	r := newRig(t)
	r.startSink()
	s := r.start("as-plan")
	tw := r.turn(s.ID)
	tw.append(false, planEv(core.PlanEntry{Content: "Read the issue", Status: "in_progress", Priority: "high"},
		core.PlanEntry{Content: "Fix the parser", Status: "pending", Priority: "medium"}))
	tw.append(false, toolUse("tu_1", "read", `{"path":"parse.go"}`), toolResult("tu_1", "package parse"))
	tw.append(false, planEv(core.PlanEntry{Content: "Read the issue", Status: "completed", Priority: "high"},
		core.PlanEntry{Content: "Fix the parser", Status: "completed", Priority: "medium"},
		core.PlanEntry{Content: "Refactor the lexer", Status: "cancelled", Priority: "low"}))
	tw.append(false, answerEv("Fixed."))
	tw.end(core.ReasonCompleted)
	waitUntil(t, "the response", func() bool { return r.sink.Settled(t.Context()) && slices.Contains(r.fake.shown(), "response: Fixed.") })
	r.fake.mu.Lock()
	defer r.fake.mu.Unlock()
	var plans []string
	for _, u := range r.fake.updates {
		if len(u.Plan) > 0 {
			plans = append(plans, string(u.Plan))
		}
	}
	want := []string{
		`[{"content":"Read the issue","status":"inProgress"},{"content":"Fix the parser","status":"pending"}]`,
		`[{"content":"Read the issue","status":"completed"},{"content":"Fix the parser","status":"completed"},{"content":"Refactor the lexer","status":"canceled"}]`,
	}
	if !slices.Equal(plans, want) {
		t.Fatalf("plans sent\n got %q\nwant %q", plans, want)
	}
}

// TestSinkAsksToRaiseABudget is acceptance 6 on Linear: a session budget's
// pause is an elicitation with the note, whose options raise the budget
// that paused the turn; a budget approver's prompt of one of them sets it.
func TestSinkAsksToRaiseABudget(t *testing.T) {
	for _, tc := range []struct {
		name  string
		pause core.BudgetPause
		want  []string
	}{
		{"tokens", core.BudgetPause{Name: core.BudgetTokens, Limit: 200_000, Spent: 201_000}, []string{"budget 400000 tokens", "budget 800000 tokens"}},
		{"cost", core.BudgetPause{Name: core.BudgetCostUSD, Limit: 5, Spent: 5.2}, []string{"budget $10.00", "budget $20.00"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t)
			if _, err := r.store.UpdateInstallation(t.Context(), r.in.ID, func(in *core.Installation) error {
				in.BudgetApprovers = []string{"user-2"}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			r.startSink()
			s := r.start("as-budget-" + tc.name)
			tw := r.turn(s.ID)
			note := "⏸ I paused: this session has used its budget."
			tw.append(false, core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorSystem, core.MessageBody{Text: note, Kind: core.MessageKindBudget}),
				core.NewEvent(core.TypeStatusChanged, core.LevelInternal, core.ActorSystem, core.StatusChangedBody{Status: core.StatusAwaitingInput,
					StopReason: core.ReasonBudgetExceeded, PendingAction: &core.PendingAction{ToolUseIDs: []string{}, Budget: &tc.pause}}))
			waitUntil(t, "the question", func() bool { return len(r.fake.ofKind("elicitation")) == 1 })
			el := r.fake.ofKind("elicitation")[0]
			var opts []string
			for _, o := range el.Select {
				if o.Label != o.Value {
					t.Errorf("option %+v: its label is not what a prompt of it says", o)
				}
				opts = append(opts, o.Value)
			}
			if body, _ := el.Content["body"].(string); body != note || !slices.Equal(opts, tc.want) {
				t.Fatalf("elicitation %q with options %q, want %q", body, opts, tc.want)
			}
			// Choosing the first option sends it as a prompt.
			if code := r.deliver(prompted(s.Metadata[metaAgentSession], tc.want[0], "")); code != 200 {
				t.Fatalf("prompted: %d", code)
			}
			got, err := r.store.GetSession(t.Context(), s.ID)
			if err != nil {
				t.Fatal(err)
			}
			if l := got.Limits; l.MaxSessionTokens != int64(tc.pause.Limit*2) && l.MaxSessionCostUSD != tc.pause.Limit*2 {
				t.Fatalf("limits %+v after %q", l, tc.want[0])
			}
			if err := r.p.Stop(t.Context()); err != nil {
				t.Fatal(err)
			}
			if last := r.fake.shown()[len(r.fake.shown())-1]; !strings.HasPrefix(last, "thought: ") {
				t.Fatalf("the budget command was answered with %q", last)
			}
		})
	}
}
