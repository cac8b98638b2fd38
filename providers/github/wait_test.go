package github

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakegithub"
	"github.com/switchboardhq/switchboard/providers/output"
)

// renderRig drives the renderer over hand-made events of one session on
// issue or pull request 7, keeping the sink's state between them.
type renderRig struct {
	*installRig
	rd  output.Renderer
	th  *output.Thread
	seq uint64
}

func newRenderRig(t *testing.T, pr bool) *renderRig {
	r := newInstallRig(t, nil)
	s := &core.Session{ID: "ses_render", Origin: &core.Origin{Provider: Name, Key: sessionKey("acme", "widgets", 7), TenantID: "900"}}
	rd := r.p.Renderer()
	sink := output.New(output.Config{Name: Name, Store: r.store, Renderer: rd})
	rr := &renderRig{installRig: r, rd: rd, th: sink.Thread(s, core.SinkPosition{})}
	g := &ref{Kind: kindIssueComment, Installation: 900, Owner: "acme", Repo: "widgets", Number: 7, PR: pr, CommentID: r.fake.AddComment("acme/widgets", 7, false, "alice", "@sb-agent go"), Login: "alice"}
	if pr {
		g.HeadSHA = "0123456789abcdef0123456789abcdef01234567"
	}
	body, _ := json.Marshal(inputBody{Text: "go", GitHub: g})
	rr.render(core.NewInput(core.TypeUserMessage, body))
	rr.render(core.NewEvent(core.TypeTurnStarted, core.LevelInternal, core.ActorSystem, struct{}{}))
	return rr
}

// render renders e as the log's next event.
func (rr *renderRig) render(e core.Event) {
	rr.t.Helper()
	rr.seq++
	e.Seq = rr.seq
	if e.ID == "" {
		e.ID = core.NewID(core.PrefixEvent)
	}
	if _, err := rr.rd.Render(rr.t.Context(), rr.th, e); err != nil {
		rr.t.Fatalf("render %s: %v", e.Type, err)
	}
}

func (rr *renderRig) event(typ string, body any) {
	rr.t.Helper()
	rr.render(core.NewEvent(typ, core.LevelInternal, core.ActorSystem, body))
}

// run is the session's one check run.
func (rr *renderRig) run() fakegithub.CheckRun {
	rr.t.Helper()
	runs := rr.fake.CheckRuns()
	if len(runs) != 1 {
		rr.t.Fatalf("check runs %+v, want one", runs)
	}
	return runs[0]
}

// statusComment is the issue's status comment: the app's first, made
// when the turn started.
func (rr *renderRig) statusComment() fakegithub.Comment {
	rr.t.Helper()
	for _, c := range rr.fake.Comments("acme/widgets", 7) {
		if c.User == rr.fake.Slug+"[bot]" {
			return c
		}
	}
	rr.t.Fatal("no status comment")
	return fakegithub.Comment{}
}

func toolUse(id, name, input string) core.ToolUseBody {
	return core.ToolUseBody{ToolUseID: id, Name: name, Input: json.RawMessage(input)}
}

// TestWaitForApprovalOnPR: a turn that ends waiting on an ask-first call
// leaves the check run in progress, titled "Waiting for approval", with
// the call and its arguments, Allow, Deny and Stop, and never "Done"; a
// question is posted once however often the wait is shown; the answer is
// added under the question, and the next turn shows the run at work with
// Stop alone, under the same run, until it completes.
func TestWaitForApprovalOnPR(t *testing.T) {
	rr := newRenderRig(t, true)
	rr.render(core.NewEvent(core.TypeAgentToolUse, core.LevelProgress, core.ActorAgent, toolUse("tu_1", "mcp_docs_echo", `{"text":"rm -rf build"}`)))
	waits := core.TurnCompletedBody{YieldReason: core.ReasonRequiresAction, PendingToolUseIDs: []string{"tu_1"}}
	rr.event(core.TypeTurnCompleted, waits)
	rr.event(core.TypeStatusChanged, core.StatusChangedBody{Status: core.StatusAwaitingInput, StopReason: core.ReasonRequiresAction})

	run := rr.run()
	if run.Status != "in_progress" || run.Title != "Waiting for approval" || slices.Contains(run.Statuses, "completed") {
		t.Fatalf("the waiting run %+v", run)
	}
	if got := run.ActionIDs(); !slices.Equal(got, []string{allowAction, denyAction, stopAction}) {
		t.Fatalf("the waiting run's actions %v", got)
	}
	for _, want := range []string{"`mcp_docs_echo`", `{"text":"rm -rf build"}`, "@sb-agent allow", "write access", callMarker("tu_1")} {
		if !strings.Contains(run.Summary, want) {
			t.Errorf("the summary lacks %q: %s", want, run.Summary)
		}
	}
	if strings.Contains(run.Title+run.Summary, "Done") {
		t.Fatalf("the run says Done while the turn waits: %+v", run)
	}
	// An ACP agent's wait logs the same call again: one question still.
	rr.event(core.TypeStatusChanged, core.StatusChangedBody{Status: core.StatusAwaitingInput, StopReason: core.ReasonRequiresAction,
		PendingAction: &core.PendingAction{ToolUseIDs: []string{"tu_1"}}})
	asked := rr.repliesTo(7, "Allow this?")
	if len(asked) != 1 || !strings.Contains(asked[0].Body, "rm -rf build") || !strings.Contains(asked[0].Body, "@sb-agent deny") {
		t.Fatalf("questions %+v, want one", asked)
	}

	answer, _ := json.Marshal(confirmationBody{ToolConfirmationBody: core.ToolConfirmationBody{ToolUseID: "tu_1", Result: "allow", Message: "by GitHub user alice"},
		GitHub: &ref{Login: "alice"}})
	rr.render(core.NewInput(core.TypeUserToolConfirmation, answer))
	if c, _ := rr.fake.Comment(asked[0].ID); !strings.HasSuffix(c.Body, "✅ Allowed by @alice.") {
		t.Fatalf("the question after the answer: %q", c.Body)
	}
	rr.event(core.TypeStatusChanged, core.StatusChangedBody{Status: core.StatusRunning})
	rr.event(core.TypeTurnStarted, struct{}{})
	run = rr.run()
	if run.Status != "in_progress" || run.Title != "Working" || !slices.Equal(run.ActionIDs(), []string{stopAction}) {
		t.Fatalf("the run of the turn after the answer %+v", run)
	}
	rr.event(core.TypeAgentToolResult, core.ToolResultBody{ToolUseID: "tu_1", Output: "rm -rf build"})
	rr.event(core.TypeTurnCompleted, core.TurnCompletedBody{YieldReason: core.ReasonCompleted})
	if run = rr.run(); run.Status != "completed" || run.Conclusion != "success" || run.Title != "Done" {
		t.Fatalf("the finished run %+v", run)
	}
}

// TestWaitOnIssue: without a check run, the status comment says the
// turn waits and the question is posted; a custom tool's call waits for
// the application, and no one is asked about it.
func TestWaitOnIssue(t *testing.T) {
	tests := []struct {
		name     string
		calls    []core.Event
		pending  []string
		status   string
		question bool
	}{
		{"an ask-first call", []core.Event{core.NewEvent(core.TypeAgentToolUse, core.LevelProgress, core.ActorAgent, toolUse("tu_1", "deploy", `{"env":"prod"}`))},
			[]string{"tu_1"}, "⏸ Waiting for approval: `deploy`.", true},
		{"a custom tool's call", []core.Event{core.NewEvent(core.TypeAgentCustomToolUse, core.LevelProgress, core.ActorAgent, toolUse("tu_c", "lookup_order", `{"id":7}`))},
			[]string{"tu_c"}, "⏸ The agent waits for the application to return the result of `lookup_order`.", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rr := newRenderRig(t, false)
			for _, e := range tt.calls {
				rr.render(e)
			}
			rr.event(core.TypeTurnCompleted, core.TurnCompletedBody{YieldReason: core.ReasonRequiresAction, PendingToolUseIDs: tt.pending})
			if c := rr.statusComment(); c.Body != tt.status {
				t.Fatalf("status comment %q, want %q", c.Body, tt.status)
			}
			if n := len(rr.repliesTo(7, "Allow this?")); (n == 1) != tt.question || n > 1 {
				t.Fatalf("%d questions", n)
			}
			if len(rr.fake.CheckRuns()) != 0 {
				t.Fatal("a check run on an issue")
			}
			// Stopped while it waited: no turn is open to end, the status
			// says so.
			rr.event(core.TypeStatusChanged, core.StatusChangedBody{Status: core.StatusIdle, StopReason: core.ReasonCanceled})
			if c := rr.statusComment(); c.Body != "⏹ Stopped (canceled)." {
				t.Fatalf("status comment after the stop %q", c.Body)
			}
		})
	}
}

// TestPlanChecklist: the latest plan shows as a task list in the run's
// summary, under what the run says, replacing the one before.
func TestPlanChecklist(t *testing.T) {
	rr := newRenderRig(t, true)
	plan := func(entries ...core.PlanEntry) { rr.event(core.TypeAgentPlan, core.PlanBody{Entries: entries}) }
	plan(core.PlanEntry{Content: "Read the failing test", Status: "in_progress"}, core.PlanEntry{Content: "Fix the clock", Status: "pending"})
	plan(core.PlanEntry{Content: "Read the failing test", Status: "completed"}, core.PlanEntry{Content: "Fix the clock", Status: "in_progress"},
		core.PlanEntry{Content: "Run the suite", Status: "pending"})
	run := rr.run()
	want := "The agent is working on it.\n\n**Plan**\n- [x] Read the failing test\n- [ ] **Fix the clock** (in progress)\n- [ ] Run the suite"
	if run.Title != "Working" || run.Summary != want {
		t.Fatalf("run %q: %q, want %q", run.Title, run.Summary, want)
	}
	rr.render(core.NewEvent(core.TypeAgentToolUse, core.LevelProgress, core.ActorAgent, toolUse("tu_1", "bash", `{}`)))
	if run = rr.run(); !strings.HasPrefix(run.Summary, "Running `bash`") || !strings.HasSuffix(run.Summary, "- [ ] Run the suite") {
		t.Fatalf("the plan is gone after a tool call: %q", run.Summary)
	}
}

// TestChecklist: the task list of a plan.
func TestChecklist(t *testing.T) {
	tests := []struct {
		name    string
		entries []core.PlanEntry
		want    string
	}{
		{"none", nil, ""},
		{"each status", []core.PlanEntry{{Content: "a", Status: "completed"}, {Content: "b\nc", Status: "in_progress"}, {Content: "d", Status: "pending"}},
			"**Plan**\n- [x] a\n- [ ] **b c** (in progress)\n- [ ] d"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := checklist(tt.entries); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
	long := make([]core.PlanEntry, maxPlanEntries+5)
	if got := checklist(long); !strings.HasSuffix(got, "- … 5 more") || strings.Count(got, "- [ ]") != maxPlanEntries {
		t.Fatalf("a long plan: %q", got)
	}
}

// TestBudgetPauseRendered: a session budget that pauses the turn keeps
// the run in progress, titled "Paused: session budget", with the note
// and Stop; the note is posted; the turn running again after the raise
// shows the run at work. On an issue the status comment says so.
// A turn paused at max_turns is shown the same way, titled "Paused: turn
// limit".
func TestBudgetPauseRendered(t *testing.T) {
	for _, tt := range []struct {
		budget, note, title string
		over                core.BudgetPause
	}{
		{core.BudgetTokens, "⏸ I paused: this session has used 1,300 tokens of its 1,000 tokens budget.", "Paused: session budget",
			core.BudgetPause{Name: core.BudgetTokens, Limit: 1000, Spent: 1300}},
		{core.BudgetTurns, "⏸ I paused: this session has run its limit of 2 turns (max_turns).", "Paused: turn limit",
			core.BudgetPause{Name: core.BudgetTurns, Limit: 2, Spent: 2}},
	} {
		for _, pr := range []bool{true, false} {
			budgetPauseRendered(t, pr, tt.budget, tt.note, tt.title, tt.over)
		}
	}
}

func budgetPauseRendered(t *testing.T, pr bool, budget, note, title string, over core.BudgetPause) {
	t.Helper()
	rr := newRenderRig(t, pr)
	rr.render(core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorSystem, core.MessageBody{Text: note, Kind: core.MessageKindBudget, Budget: budget}))
	rr.event(core.TypeStatusChanged, core.StatusChangedBody{Status: core.StatusAwaitingInput, StopReason: over.Reason(),
		PendingAction: &core.PendingAction{ToolUseIDs: []string{}, Budget: &over}})
	if n := len(rr.repliesTo(7, note)); n != 1 {
		t.Fatalf("pr=%v: the note posted %d times", pr, n)
	}
	if pr {
		run := rr.run()
		if run.Status != "in_progress" || run.Title != title || run.Summary != note || !slices.Equal(run.ActionIDs(), []string{stopAction}) {
			t.Fatalf("the paused run %+v", run)
		}
	} else if c := rr.statusComment(); c.Body != "⏸ "+title+"." {
		t.Fatalf("the paused status comment %q", c.Body)
	}
	rr.event(core.TypeStatusChanged, core.StatusChangedBody{Status: core.StatusRunning})
	if pr {
		if run := rr.run(); run.Status != "in_progress" || run.Title != "Working" {
			t.Fatalf("the resumed run %+v", run)
		}
	} else if c := rr.statusComment(); c.Body != workingStatus {
		t.Fatalf("the resumed status comment %q", c.Body)
	}
}
