package acpclient_test

import (
	"context"
	"strings"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/acpagent"
	"github.com/switchboardhq/switchboard/sessions/engine/harness"
)

// TestTurnLogsUpdates: a prompt's updates land in the log in the event
// vocabulary as they arrive: text coalesced per run (progress beside a
// tool call, the last run the answer), thoughts as progress, tool calls
// with their results, plans; the stop reason ends the turn.
func TestTurnLogsUpdates(t *testing.T) {
	e := newEnv(t, acpagent.Script{Turns: []acpagent.Turn{{Steps: []acpagent.Step{
		{Think: "The person wants the README."},
		{Say: "Let me look at the project first."},
		{Tool: &acpagent.Tool{ID: "call_1", Title: "Reading README.md", Kind: "read", Output: "# Widgets"}},
		{Plan: []acpagent.PlanEntry{{Content: "Read the README", Status: "completed", Priority: "high"}, {Content: "Summarise it", Status: "in_progress", Priority: "medium"}}},
		{Tool: &acpagent.Tool{ID: "call_2", Title: "Running tests", Kind: "execute", Status: "failed", Output: "exit 1"}},
		{Say: "It is a widgets project. Its tests fail."},
	}, Usage: &acpagentUsage}}})
	e.say("What is this project?")
	out := e.run(context.Background())
	if out.Turns != 1 || out.Reason != core.ReasonCompleted {
		t.Fatalf("outcome %+v", out)
	}
	evs := e.events()
	wantTypes(t, evs,
		core.TypeUserMessage, core.TypeStatusChanged, core.TypeTurnStarted, core.TypeRuntimeStarted,
		"agent.message/progress/thought", "agent.message/progress",
		core.TypeAgentToolUse, core.TypeAgentToolResult, core.TypeAgentPlan,
		core.TypeAgentToolUse, core.TypeAgentToolResult,
		"agent.message/user", core.TypeTurnCompleted, core.TypeStatusChanged)
	if b := body[core.MessageBody](t, evs[5]); b.Text != "Let me look at the project first." {
		t.Fatalf("the chunks of a run make one message: %q", b.Text)
	}
	use, res := body[core.ToolUseBody](t, evs[6]), body[core.ToolResultBody](t, evs[7])
	if use.Name != "Reading README.md" || res.ToolUseID != use.ToolUseID || res.IsError || !strings.Contains(res.Output, "# Widgets") || !strings.Contains(res.Output, "[read]") {
		t.Fatalf("tool call %+v, result %+v", use, res)
	}
	if res := body[core.ToolResultBody](t, evs[10]); !res.IsError || !strings.Contains(res.Output, "exit 1") {
		t.Fatalf("a failed call's result %+v", res)
	}
	plan := body[core.PlanBody](t, evs[8])
	if len(plan.Entries) != 2 || plan.Entries[1] != (core.PlanEntry{Content: "Summarise it", Status: "in_progress", Priority: "medium"}) {
		t.Fatalf("plan %+v", plan)
	}
	if b := body[core.MessageBody](t, evs[11]); b.Text != "It is a widgets project. Its tests fail." {
		t.Fatalf("answer %q", b.Text)
	}
	started := body[core.RuntimeStartedBody](t, evs[3])
	if started.How != core.RuntimeNew || started.AgentSession != "sess-1" || started.AgentName != "scripted-acp" || started.Command[0] != "scripted-acp" {
		t.Fatalf("runtime started %+v", started)
	}
	done := body[core.TurnCompletedBody](t, evs[12])
	if done.YieldReason != core.ReasonCompleted || done.Usage.InputTokens != 1200 || done.Usage.OutputTokens != 80 {
		t.Fatalf("turn completed %+v", done)
	}
	if s := e.sessionNow(); s.Status != core.StatusIdle || s.Usage.InputTokens != 1200 {
		t.Fatalf("session %+v", s)
	}
	// The first prompt of a new ACP session carries the agent's system
	// prompt: ACP has none of its own.
	prompts := e.asked("session/prompt")
	if len(prompts) != 1 || !strings.Contains(prompts[0]["text"].(string), "You are terse.") || !strings.Contains(prompts[0]["text"].(string), "What is this project?") {
		t.Fatalf("prompts %v", prompts)
	}
	if e.sb.holds() != 0 {
		t.Fatal("the turn left the sandbox held")
	}
}

var acpagentUsage = acp.Usage{InputTokens: 1200, OutputTokens: 80, TotalTokens: 1280}

// TestProcessLivesAcrossTurns: the second turn of a warm sandbox prompts
// the same process and ACP session, with only the new message.
func TestProcessLivesAcrossTurns(t *testing.T) {
	e := newEnv(t, acpagent.Script{Turns: []acpagent.Turn{
		{Steps: []acpagent.Step{{Say: "first"}}},
		{Steps: []acpagent.Step{{Say: "second"}}},
	}})
	e.say("one")
	e.run(context.Background())
	e.say("two")
	e.run(context.Background())
	if e.sb.starts != 1 || len(e.asked("initialize")) != 1 || len(e.asked("session/new")) != 1 {
		t.Fatalf("%d starts, journal %v", e.sb.starts, e.journal())
	}
	prompts := e.asked("session/prompt")
	if len(prompts) != 2 || prompts[1]["session"] != "sess-1" || strings.Contains(prompts[1]["text"].(string), "one") || !strings.Contains(prompts[1]["text"].(string), "two") {
		t.Fatalf("prompts %v", prompts)
	}
}

// TestPermissionParkedThenAllowed: a permission request that asks waits
// in the turn, shown as requires_action with the call pending; the
// person's Allow reaches the agent, which goes on in the same turn.
func TestPermissionParkedThenAllowed(t *testing.T) {
	e := newEnv(t, acpagent.Script{Turns: []acpagent.Turn{{Steps: []acpagent.Step{
		{Say: "I need to edit the config."},
		{Permission: &acpagent.Tool{ID: "call_2", Title: "Modifying config.json", Kind: "edit"}},
	}}}})
	e.say("Fix the config")
	wait := e.start(context.Background())
	s := e.waitFor("wait for a person", func(s *core.Session) bool {
		return s.Status == core.StatusAwaitingInput && s.PendingAction != nil && len(s.PendingAction.ToolUseIDs) == 1
	})
	if s.StopReason != core.ReasonRequiresAction || s.TurnID == "" {
		t.Fatalf("waiting session %+v", s)
	}
	id := s.PendingAction.ToolUseIDs[0]
	evs := e.events()
	if use := body[core.ToolUseBody](t, last(evs, core.TypeAgentToolUse)); use.ToolUseID != id || use.Name != "Modifying config.json" {
		t.Fatalf("the call waited on is %s, logged %+v", id, use)
	}
	e.send(core.TypeUserToolConfirmation, core.ToolConfirmationBody{ToolUseID: id, Result: "allow"})
	out := wait()
	if out.Turns != 1 || out.Reason != core.ReasonCompleted {
		t.Fatalf("outcome %+v", out)
	}
	if p := e.asked("permission"); len(p) != 1 || p[0]["outcome"] != "allow" {
		t.Fatalf("the agent got %v", p)
	}
	evs = e.events()
	if b := body[core.MessageBody](t, last(evs, core.TypeAgentMessage)); b.Text != "permission: allow" || last(evs, core.TypeAgentMessage).Level != core.LevelUser {
		t.Fatalf("answer %+v", b)
	}
	if s := e.sessionNow(); s.Status != core.StatusIdle || s.PendingAction != nil {
		t.Fatalf("session %+v", s)
	}
}

// TestPermissionPolicy: kinds the agent's policy allows or denies are
// answered at once, without a person.
func TestPermissionPolicy(t *testing.T) {
	e := newEnv(t, acpagent.Script{Turns: []acpagent.Turn{{Steps: []acpagent.Step{
		{Permission: &acpagent.Tool{ID: "r", Title: "Read a file", Kind: "read"}},
		{Permission: &acpagent.Tool{ID: "f", Title: "Fetch a page", Kind: "fetch"}},
		{Permission: &acpagent.Tool{ID: "x", Title: "Run make", Kind: "execute"}},
	}}}}, func(r *core.AgentRuntime) {
		r.Permissions = map[string]string{"fetch": "deny", "execute": "always_allow"}
	})
	e.say("go")
	if out := e.run(context.Background()); out.Reason != core.ReasonCompleted {
		t.Fatalf("outcome %+v", out)
	}
	var got []string
	for _, p := range e.asked("permission") {
		got = append(got, p["tool"].(string)+"="+p["outcome"].(string))
	}
	if strings.Join(got, " ") != "r=allow f=reject x=allow" {
		t.Fatalf("outcomes %v", got)
	}
}

// TestParkLimit: a request nobody answers within the park limit is
// cancelled and the turn ends requires_action, the sandbox released; the
// Allow given afterwards starts a turn whose prompt says so.
func TestParkLimit(t *testing.T) {
	e := newEnv(t, acpagent.Script{Turns: []acpagent.Turn{
		{Match: "Fix", Steps: []acpagent.Step{{Permission: &acpagent.Tool{ID: "call_2", Title: "Modifying config.json", Kind: "edit"}}}},
		{Match: "has now allowed", Steps: []acpagent.Step{{Say: "Config updated."}}},
	}})
	e.h.ParkLimit = 50 * time.Millisecond
	e.say("Fix the config")
	out := e.run(context.Background())
	if out.Reason != core.ReasonRequiresAction {
		t.Fatalf("outcome %+v", out)
	}
	s := e.sessionNow()
	if s.Status != core.StatusAwaitingInput || s.TurnID != "" || s.PendingAction == nil || len(s.PendingAction.ToolUseIDs) != 1 {
		t.Fatalf("session %+v", s)
	}
	// The cancel may reach the agent before the request's answer does.
	if p := e.asked("permission"); len(p) != 1 || (p[0]["outcome"] != "cancelled" && p[0]["outcome"] != "error") || len(e.asked("session/cancel")) != 1 {
		t.Fatalf("the agent got %v (journal %v)", p, e.journal())
	}
	if e.sb.holds() != 0 {
		t.Fatal("an expired wait still holds the sandbox")
	}
	e.send(core.TypeUserToolConfirmation, core.ToolConfirmationBody{ToolUseID: s.PendingAction.ToolUseIDs[0], Result: "allow"})
	if out := e.run(context.Background()); out.Reason != core.ReasonCompleted {
		t.Fatalf("outcome after the answer %+v", out)
	}
	prompts := e.asked("session/prompt")
	if len(prompts) != 2 || !strings.Contains(prompts[1]["text"].(string), `permission for "Modifying config.json"`) {
		t.Fatalf("prompts %v", prompts)
	}
}

// TestStopCancelsThePrompt: an interrupt is a session/cancel; the agent
// ends its prompt and the turn ends canceled.
func TestStopCancelsThePrompt(t *testing.T) {
	e := newEnv(t, acpagent.Script{Turns: []acpagent.Turn{{Steps: []acpagent.Step{{Say: "Working on it"}, {WaitCancel: true}}}}})
	e.say("Do a long thing")
	ctx, cancel := context.WithCancelCause(context.Background())
	wait := e.start(ctx)
	e.waitFor("run", func(s *core.Session) bool { return len(e.asked("session/prompt")) == 1 })
	e.send(core.TypeUserInterrupt, struct{}{})
	cancel(harness.ErrInterrupted)
	out := wait()
	if out.Reason != core.ReasonCanceled {
		t.Fatalf("outcome %+v", out)
	}
	if len(e.asked("session/cancel")) != 1 {
		t.Fatalf("journal %v", e.journal())
	}
	evs := e.events()
	if b := body[core.TurnCompletedBody](t, last(evs, core.TypeTurnCompleted)); b.YieldReason != core.ReasonCanceled {
		t.Fatalf("turn completed %+v", b)
	}
	if p, _ := e.store.Pending(context.Background(), e.session); len(p) != 0 {
		t.Fatalf("the interrupt was not taken: %d pending", len(p))
	}
}

// TestCancelIgnoredKills: an agent that does not end its prompt within
// the grace period after a cancel is killed, and the log says so.
func TestCancelIgnoredKills(t *testing.T) {
	e := newEnv(t, acpagent.Script{Turns: []acpagent.Turn{{Steps: []acpagent.Step{{IgnoreCancel: true}}}}})
	e.h.CancelGrace = 50 * time.Millisecond
	e.say("Do a long thing")
	ctx, cancel := context.WithCancelCause(context.Background())
	wait := e.start(ctx)
	e.waitFor("run", func(s *core.Session) bool { return len(e.asked("session/prompt")) == 1 })
	cancel(harness.ErrInterrupted)
	if out := wait(); out.Reason != core.ReasonCanceled {
		t.Fatalf("outcome %+v", out)
	}
	evs := e.events()
	if b := body[core.ErrorBody](t, last(evs, core.TypeError)); !strings.Contains(b.Message, "did not end its turn") || !strings.Contains(b.Message, "killed") {
		t.Fatalf("error %+v", b)
	}
	select {
	case <-e.sb.procs[0].Done():
	default:
		t.Fatal("the agent process lives on")
	}
}

// TestDeadline: turn_seconds bounds an ACP turn as any other.
func TestDeadline(t *testing.T) {
	e := newEnv(t, acpagent.Script{Turns: []acpagent.Turn{{Steps: []acpagent.Step{{WaitCancel: true}}}}})
	e.limits.TurnSeconds = 1
	e.say("Do a long thing")
	if out := e.run(context.Background()); out.Reason != core.ReasonDeadlineExceeded {
		t.Fatalf("outcome %+v", out)
	}
}

// TestPermissionForGood: an answer given for good (always) answers the
// later requests of the same kind in the session without asking, in
// this turn and in later ones, whatever process runs them; other kinds
// still ask.
func TestPermissionForGood(t *testing.T) {
	e := newEnv(t, acpagent.Script{Turns: []acpagent.Turn{
		{Match: "first", Steps: []acpagent.Step{
			{Permission: &acpagent.Tool{ID: "x1", Title: "Run make", Kind: "execute"}},
			{Permission: &acpagent.Tool{ID: "x2", Title: "Run make test", Kind: "execute"}},
		}},
		{Match: "second", Steps: []acpagent.Step{
			{Permission: &acpagent.Tool{ID: "x3", Title: "Run make lint", Kind: "execute"}},
			{Permission: &acpagent.Tool{ID: "e1", Title: "Edit main.go", Kind: "edit"}},
		}},
	}})
	e.say("first")
	wait := e.start(context.Background())
	s := e.waitFor("the first request waiting", func(s *core.Session) bool { return s.PendingAction != nil && len(s.PendingAction.ToolUseIDs) == 1 })
	e.send(core.TypeUserToolConfirmation, core.ToolConfirmationBody{ToolUseID: s.PendingAction.ToolUseIDs[0], Result: "allow", Always: true})
	if out := wait(); out.Reason != core.ReasonCompleted {
		t.Fatalf("outcome %+v", out)
	}
	e.sb.hibernate()
	e.say("second")
	wait = e.start(context.Background())
	s = e.waitFor("the edit waiting", func(s *core.Session) bool { return s.PendingAction != nil && len(s.PendingAction.ToolUseIDs) == 1 })
	e.send(core.TypeUserToolConfirmation, core.ToolConfirmationBody{ToolUseID: s.PendingAction.ToolUseIDs[0], Result: "deny"})
	if out := wait(); out.Reason != core.ReasonCompleted {
		t.Fatalf("outcome %+v", out)
	}
	var got []string
	for _, p := range e.asked("permission") {
		got = append(got, p["tool"].(string)+"="+p["outcome"].(string))
	}
	if strings.Join(got, " ") != "x1=allow x2=allow x3=allow e1=reject" {
		t.Fatalf("outcomes %v", got)
	}
	if n := countType(e.events(), core.TypeUserToolConfirmation); n != 2 {
		t.Fatalf("%d confirmations asked for, want 2 (the first execute and the edit)", n)
	}
}

// TestSteeringWaits: a message sent while the agent works is not lost
// nor slipped into the prompt: the thread is told once that it waits, and
// it is the next turn's prompt.
func TestSteeringWaits(t *testing.T) {
	e := newEnv(t, acpagent.Script{Turns: []acpagent.Turn{
		{Match: "build it", Steps: []acpagent.Step{{Permission: &acpagent.Tool{ID: "x", Title: "Run make", Kind: "execute"}}}},
		{MatchAll: "use clang", Steps: []acpagent.Step{{Say: "Switched to clang."}}},
	}})
	e.say("build it")
	wait := e.start(context.Background())
	s := e.waitFor("the request waiting", func(s *core.Session) bool { return s.PendingAction != nil && len(s.PendingAction.ToolUseIDs) == 1 })
	e.say("also, use clang")
	e.say("and be quick")
	e.waitFor("the note", func(*core.Session) bool { return hasType(e.events(), core.TypeAgentMessage) })
	e.send(core.TypeUserToolConfirmation, core.ToolConfirmationBody{ToolUseID: s.PendingAction.ToolUseIDs[0], Result: "allow"})
	if out := wait(); out.Turns != 2 || out.Reason != core.ReasonCompleted {
		t.Fatalf("outcome %+v (log %v)", out, typesOf(e.events()))
	}
	var notes int
	for _, ev := range e.events() {
		if ev.Type == core.TypeAgentMessage && body[core.MessageBody](t, ev).Kind == core.MessageKindNote {
			notes++
		}
	}
	if notes != 1 {
		t.Fatalf("%d notes, want 1 (log %v)", notes, typesOf(e.events()))
	}
	prompts := e.asked("session/prompt")
	if len(prompts) != 2 || strings.Contains(prompts[0]["text"].(string), "clang") || !strings.Contains(prompts[1]["text"].(string), "also, use clang\nand be quick") {
		t.Fatalf("prompts %v", prompts)
	}
}

// TestDeadlineWhileWaiting: a turn that runs out of time while a person
// decides ends waiting for the answer, not as a failure of time.
func TestDeadlineWhileWaiting(t *testing.T) {
	e := newEnv(t, acpagent.Script{Turns: []acpagent.Turn{{Steps: []acpagent.Step{{Permission: &acpagent.Tool{ID: "x", Title: "Deploy", Kind: "execute"}}}}}})
	// Ample for the request to be waiting when the time runs out.
	e.limits.TurnSeconds = 3
	e.say("deploy")
	if out := e.run(context.Background()); out.Reason != core.ReasonRequiresAction {
		t.Fatalf("outcome %+v", out)
	}
	if s := e.sessionNow(); s.Status != core.StatusAwaitingInput || s.PendingAction == nil || len(s.PendingAction.ToolUseIDs) != 1 {
		t.Fatalf("session %+v", s)
	}
}

// TestSteeringSurvivesARestart: messages a turn took mid-prompt are
// prompted by the next cycle even when the one that took them ended
// before it could (a restart between the two).
func TestSteeringSurvivesARestart(t *testing.T) {
	e := newEnv(t, acpagent.Script{Turns: []acpagent.Turn{{MatchAll: "use clang", Steps: []acpagent.Step{{Say: "Switched to clang."}}}}})
	e.say("build it")
	ctx := context.Background()
	e.leftOpen("turn_1")
	e.say("use clang")
	if _, err := e.store.Append(ctx, e.session, core.AppendRequest{TakeInputs: true, TurnID: "turn_1", Events: []core.Event{
		core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorAgent, core.MessageBody{Text: "Built."}),
		core.NewEvent(core.TypeTurnCompleted, core.LevelInternal, core.ActorSystem, core.TurnCompletedBody{YieldReason: core.ReasonCompleted}),
		core.NewEvent(core.TypeStatusChanged, core.LevelInternal, core.ActorSystem, core.StatusChangedBody{Status: core.StatusIdle, StopReason: core.ReasonCompleted}),
	}}); err != nil {
		t.Fatal(err)
	}
	if out := e.run(ctx); out.Turns != 1 || out.Reason != core.ReasonCompleted {
		t.Fatalf("outcome %+v (log %v)", out, typesOf(e.events()))
	}
	if p := e.asked("session/prompt"); len(p) != 1 || !strings.Contains(p[0]["text"].(string), "use clang") {
		t.Fatalf("prompts %v", p)
	}
	// Nothing more to prompt: the next cycle rests.
	if out := e.run(ctx); out.Turns != 0 {
		t.Fatalf("a cycle with nothing to prompt ran %+v", out)
	}
}
