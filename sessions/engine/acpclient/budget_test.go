package acpclient_test

import (
	"context"
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/acpagent"
)

// perMillion prices every model at $1 per million tokens of any kind.
type perMillion struct{}

func (perMillion) Cost(model string, u core.Usage) (float64, bool) {
	return float64(u.Total()) / 1e6, model != ""
}

// TestMeteredUsageCounts: what the proxy metered during a turn is the
// turn's usage and cost (the agent's own report is not counted again).
func TestMeteredUsageCounts(t *testing.T) {
	reported := acp.Usage{InputTokens: 1, OutputTokens: 1, TotalTokens: 2}
	e := newEnv(t, acpagent.Script{Turns: []acpagent.Turn{{Steps: []acpagent.Step{
		{Permission: &acpagent.Tool{ID: "call_1", Title: "Editing main.go", Kind: "edit"}},
	}, Usage: &reported}}}, func(r *core.AgentRuntime) { r.ModelCredential = "vcr_01m8h5jpyh02n2czzf7ahrsnqv" })
	e.agent.Model = "anthropic/claude-test"
	e.h.Prices = perMillion{}
	e.say("edit it")
	wait := e.start(context.Background())
	s := e.waitFor("the agent waiting", func(s *core.Session) bool { return s.PendingAction != nil && len(s.PendingAction.ToolUseIDs) == 1 })
	e.h.Metered(e.session, "claude-test", core.Usage{InputTokens: 700, OutputTokens: 50, CacheReadInputTokens: 250})
	e.h.Metered(e.session, "claude-test", core.Usage{InputTokens: 100, OutputTokens: 20})
	e.send(core.TypeUserToolConfirmation, core.ToolConfirmationBody{ToolUseID: s.PendingAction.ToolUseIDs[0], Result: "allow"})
	if out := wait(); out.Reason != core.ReasonCompleted || out.Usage.InputTokens != 800 {
		t.Fatalf("outcome %+v", out)
	}
	done := body[core.TurnCompletedBody](t, last(e.events(), core.TypeTurnCompleted))
	want := core.Usage{InputTokens: 800, OutputTokens: 70, CacheReadInputTokens: 250}
	if done.Usage != want || done.CostUSD == nil || *done.CostUSD != 0.00112 {
		t.Fatalf("turn completed %+v (cost %v), want usage %+v costing 0.00112", done, done.CostUSD, want)
	}
	// Between turns, usage counts nowhere.
	e.h.Metered(e.session, "claude-test", core.Usage{InputTokens: 5})
	if s := e.sessionNow(); s.Usage != want {
		t.Fatalf("session usage %+v", s.Usage)
	}
}

// TestMaxTokensStopsTheTurn: metered usage past the turn's max_tokens
// cancels the prompt; the turn ends budget_exceeded.
func TestMaxTokensStopsTheTurn(t *testing.T) {
	e := newEnv(t, acpagent.Script{Turns: []acpagent.Turn{{Steps: []acpagent.Step{toolStep("Thinking hard"), {WaitCancel: true}}}}})
	e.limits.MaxTokens = 1000
	e.say("think")
	wait := e.start(context.Background())
	e.waitFor("the turn running", func(*core.Session) bool {
		return len(e.asked("session/prompt")) == 1 && hasType(e.events(), core.TypeAgentToolResult)
	})
	e.h.Metered(e.session, "m", core.Usage{InputTokens: 900, OutputTokens: 200})
	if out := wait(); out.Reason != core.ReasonBudgetExceeded {
		t.Fatalf("outcome %+v", out)
	}
	if len(e.asked("session/cancel")) != 1 {
		t.Fatalf("journal %v", e.journal())
	}
	if s := e.sessionNow(); s.Status != core.StatusIdle || s.Usage.Total() != 1100 {
		t.Fatalf("session %+v", s)
	}
}

// TestBudgetPausesAndResumes: a session budget reached by metered usage
// cancels the prompt at once and pauses the turn, as the built-in loop
// does (the note, the pending budget); raising it resumes the same turn
// with a prompt that says so, its usage counted once.
func TestBudgetPausesAndResumes(t *testing.T) {
	e := newEnv(t, acpagent.Script{Turns: []acpagent.Turn{
		{Match: "budget has been raised", Steps: []acpagent.Step{{Say: "Carried on and done."}}},
		{Steps: []acpagent.Step{toolStep("Reading everything"), {WaitCancel: true}}},
	}})
	e.limits.MaxSessionTokens = 1000
	e.say("read everything")
	wait := e.start(context.Background())
	e.waitFor("the turn running", func(*core.Session) bool { return hasType(e.events(), core.TypeAgentToolResult) })
	e.h.Metered(e.session, "m", core.Usage{InputTokens: 1200})
	if out := wait(); !out.Paused {
		t.Fatalf("outcome %+v", out)
	}
	s := e.sessionNow()
	if s.Status != core.StatusAwaitingInput || s.StopReason != core.ReasonBudgetExceeded || !s.BudgetPaused() || s.PendingAction.Budget.Spent != 1200 {
		t.Fatalf("paused session %+v (pending %+v)", s, s.PendingAction)
	}
	note := body[core.MessageBody](t, last(e.events(), core.TypeAgentMessage))
	if note.Kind != core.MessageKindBudget || !strings.Contains(note.Text, "1,000 tokens") {
		t.Fatalf("budget note %+v", note)
	}
	if _, err := e.store.SetSessionLimits(context.Background(), e.session, core.Limits{MaxSessionTokens: 5000}, core.ActorHuman); err != nil {
		t.Fatal(err)
	}
	e.limits.MaxSessionTokens = 5000
	if out := e.run(context.Background()); out.Reason != core.ReasonCompleted {
		t.Fatalf("outcome after the raise %+v", out)
	}
	prompts := e.asked("session/prompt")
	if len(prompts) != 2 || !strings.Contains(prompts[1]["text"].(string), "budget has been raised") || strings.Contains(prompts[1]["text"].(string), "read everything") {
		t.Fatalf("prompts %v", prompts)
	}
	evs := e.events()
	if n := countType(evs, core.TypeTurnStarted); n != 1 {
		t.Fatalf("%d turns started, want the one resumed", n)
	}
	if done := body[core.TurnCompletedBody](t, last(evs, core.TypeTurnCompleted)); done.Usage.InputTokens != 1200 || done.YieldReason != core.ReasonCompleted {
		t.Fatalf("turn completed %+v", done)
	}
	if s := e.sessionNow(); s.Usage.InputTokens != 1200 {
		t.Fatalf("the session counted %+v", s.Usage)
	}
}

func toolStep(title string) acpagent.Step {
	return acpagent.Step{Tool: &acpagent.Tool{ID: "c_" + strings.ReplaceAll(title, " ", "_"), Title: title, Kind: "read", Output: "ok"}}
}

func hasType(evs []core.Event, typ string) bool { return countType(evs, typ) > 0 }

func countType(evs []core.Event, typ string) int {
	n := 0
	for _, e := range evs {
		if e.Type == typ {
			n++
		}
	}
	return n
}

// TestMaxTurnsPausesBeforeThePrompt: an ACP session that has run its
// max_turns pauses the next input's turn before prompting the agent, the
// input taken into it; the raise prompts the input itself.
func TestMaxTurnsPausesBeforeThePrompt(t *testing.T) {
	e := newEnv(t, acpagent.Script{Turns: []acpagent.Turn{
		{Match: "first question", Steps: []acpagent.Step{{Say: "First answer."}}},
		{Match: "second question", Steps: []acpagent.Step{{Say: "Second answer."}}},
	}})
	e.limits.MaxTurns = 1
	e.say("first question")
	if out := e.run(context.Background()); out.Reason != core.ReasonCompleted {
		t.Fatalf("first outcome %+v", out)
	}
	e.say("second question")
	if out := e.run(context.Background()); !out.Paused {
		t.Fatalf("outcome at the cap %+v", out)
	}
	s := e.sessionNow()
	if s.Status != core.StatusAwaitingInput || s.StopReason != core.ReasonMaxTurns || !s.BudgetPaused() || s.PendingAction.Budget.Name != core.BudgetTurns {
		t.Fatalf("paused session %+v (pending %+v)", s, s.PendingAction)
	}
	if n := len(e.asked("session/prompt")); n != 1 {
		t.Fatalf("%d prompts at the cap, want 1", n)
	}
	if _, err := e.store.SetSessionLimits(context.Background(), e.session, core.Limits{MaxTurns: 2}, core.ActorHuman); err != nil {
		t.Fatal(err)
	}
	e.limits.MaxTurns = 2
	if out := e.run(context.Background()); out.Reason != core.ReasonCompleted {
		t.Fatalf("outcome after the raise %+v", out)
	}
	prompts := e.asked("session/prompt")
	if len(prompts) != 2 || !strings.Contains(prompts[1]["text"].(string), "second question") || strings.Contains(prompts[1]["text"].(string), "budget has been raised") {
		t.Fatalf("prompts %v", prompts)
	}
	if s := e.sessionNow(); s.Turns != 2 {
		t.Fatalf("the session counts %d turns, want 2", s.Turns)
	}
}

// TestMaxTurnsHoldsAcrossAnotherRaise: a raise of another limit requeues
// the turn paused at max_turns, which pauses again without prompting the
// agent.
func TestMaxTurnsHoldsAcrossAnotherRaise(t *testing.T) {
	e := newEnv(t, acpagent.Script{Turns: []acpagent.Turn{
		{Match: "first question", Steps: []acpagent.Step{{Say: "First answer."}}},
		{Match: "second question", Steps: []acpagent.Step{{Say: "Second answer."}}},
	}})
	e.limits.MaxTurns = 1
	e.say("first question")
	if out := e.run(context.Background()); out.Reason != core.ReasonCompleted {
		t.Fatalf("first outcome %+v", out)
	}
	e.say("second question")
	if out := e.run(context.Background()); !out.Paused {
		t.Fatalf("outcome at the cap %+v", out)
	}
	if _, err := e.store.SetSessionLimits(context.Background(), e.session, core.Limits{MaxSessionTokens: 5000}, core.ActorHuman); err != nil {
		t.Fatal(err)
	}
	e.limits.MaxSessionTokens = 5000
	if out := e.run(context.Background()); !out.Paused {
		t.Fatalf("outcome after raising max_session_tokens %+v", out)
	}
	s := e.sessionNow()
	if s.Status != core.StatusAwaitingInput || s.StopReason != core.ReasonMaxTurns || !s.BudgetPaused() || s.PendingAction.Budget.Name != core.BudgetTurns {
		t.Fatalf("session after the other raise %+v (pending %+v)", s, s.PendingAction)
	}
	if n := len(e.asked("session/prompt")); n != 1 {
		t.Fatalf("%d prompts after the other raise, want 1", n)
	}
	if s.Turns != 1 {
		t.Fatalf("the session counts %d turns, want 1", s.Turns)
	}
}

// TestBudgetHoldsAcrossAnotherRaise: a raise of max_turns requeues the
// turn a session budget paused, which pauses again without prompting the
// agent while the budget still does not fit.
func TestBudgetHoldsAcrossAnotherRaise(t *testing.T) {
	e := newEnv(t, acpagent.Script{Turns: []acpagent.Turn{
		{Match: "budget has been raised", Steps: []acpagent.Step{{Say: "Carried on and done."}}},
		{Steps: []acpagent.Step{toolStep("Reading everything"), {WaitCancel: true}}},
	}})
	e.limits.MaxSessionTokens = 1000
	e.say("read everything")
	wait := e.start(context.Background())
	e.waitFor("the turn running", func(*core.Session) bool { return hasType(e.events(), core.TypeAgentToolResult) })
	e.h.Metered(e.session, "m", core.Usage{InputTokens: 1200})
	if out := wait(); !out.Paused {
		t.Fatalf("outcome %+v", out)
	}
	if _, err := e.store.SetSessionLimits(context.Background(), e.session, core.Limits{MaxTurns: 5}, core.ActorHuman); err != nil {
		t.Fatal(err)
	}
	e.limits.MaxTurns = 5
	if out := e.run(context.Background()); !out.Paused {
		t.Fatalf("outcome after raising max_turns %+v", out)
	}
	s := e.sessionNow()
	if s.Status != core.StatusAwaitingInput || s.StopReason != core.ReasonBudgetExceeded || !s.BudgetPaused() ||
		s.PendingAction.Budget.Name != core.BudgetTokens || s.PendingAction.Budget.Spent != 1200 {
		t.Fatalf("session after the other raise %+v (pending %+v)", s, s.PendingAction)
	}
	if n := len(e.asked("session/prompt")); n != 1 {
		t.Fatalf("%d prompts after the other raise, want 1", n)
	}
}
