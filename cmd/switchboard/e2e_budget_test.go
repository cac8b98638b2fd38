package main_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/fixtures/fakeslack"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// pausedView is what a paused session shows of its budget.
type pausedView struct {
	Status        string `json:"status"`
	StopReason    string `json:"stop_reason"`
	PendingAction *struct {
		Budget *struct {
			Name  string  `json:"name"`
			Limit float64 `json:"limit"`
			Spent float64 `json:"spent"`
		} `json:"budget"`
	} `json:"pending_action"`
	Limits *struct {
		MaxSessionTokens int64 `json:"max_session_tokens"`
	} `json:"limits"`
}

func (w *slackWorld) paused(id string) pausedView {
	w.t.Helper()
	var v pausedView
	_, raw := w.srv.do("GET", "/v1/sessions/"+id, nil)
	mustJSON(w.t, raw, &v)
	return v
}

// budgetApprovers makes approvers the budget approvers of the one
// installation of provider.
func (s *server) budgetApprovers(provider string, approvers ...string) {
	s.t.Helper()
	ins := listData[struct {
		ID string `json:"id"`
	}](s, "/v1/installations?provider="+provider)
	if len(ins) != 1 {
		s.t.Fatalf("installations %+v", ins)
	}
	if code, raw := s.do("POST", "/v1/installations/"+ins[0].ID, map[string]any{"budget_approvers": approvers}); code != 200 {
		s.t.Fatalf("set approvers: %d %s", code, raw)
	}
}

// sayCall is a model step that runs the say tool, using tokens tokens.
func sayCall(id, text string, tokens int64) modelserver.Step {
	return modelserver.Step{ToolCalls: []modelserver.ToolCall{{ID: id, Name: "say", Input: map[string]string{"text": text}}},
		Usage: modelserver.Usage{Input: tokens - 100, Output: 100}}
}

// toolUses counts the log's agent.tool_use events of a call id.
func toolUses(evs []event, id string) int {
	n := 0
	for _, e := range evs {
		var b struct {
			ToolUseID string `json:"tool_use_id"`
		}
		if e.Type == "agent.tool_use" && json.Unmarshal(e.Body, &b) == nil && b.ToolUseID == id {
			n++
		}
	}
	return n
}

// TestBudgetPauseInSlack: a Slack session capped at 1,000 tokens pauses
// mid-turn once a model call overshoots (its tool call ran), says so in
// the thread, and waits; a budget command from someone who is not a
// budget approver is refused in the thread; raising the cap through the
// API resumes the same turn, whose next model request carries on from the
// last step (the tool call is neither repeated nor lost). A second pause
// is raised from the thread by an approver.
func TestBudgetPauseInSlack(t *testing.T) {
	w := startSlack(t, fakeslack.Team{ID: "T0BDG", Name: "Budget"}, nil)
	if code, raw := w.srv.do("POST", "/v1/agents/default", `{"limits":{"max_session_tokens":1000}}`); code != 200 {
		t.Fatalf("cap the default agent: %d %s", code, raw)
	}
	w.srv.budgetApprovers("slack", "U0BOSS")

	w.ms.Push(sayCall("tu_look", "Looking into it.", 1300))
	m := w.fake.Human(w.team.ID, "C0BDG", "U0ALICE", "<@"+w.team.BotUserID+"> find the flaky test", "")
	if code, _ := w.event(fakeslack.Mention(m)); code != 200 {
		t.Fatalf("mention: %d", code)
	}
	id := w.session(w.team.ID, "C0BDG", m.TS)
	w.waitReply(w.team, "C0BDG", m.TS, "I paused: this session has used 1,300 tokens of its 1,000 tokens budget")
	st, evs := w.srv.waitFor(id, "the pause", func(st sessionState, _ []event) bool { return st.Status == "awaiting_input" })
	p := w.paused(id)
	if p.StopReason != "budget_exceeded" || p.PendingAction == nil || p.PendingAction.Budget == nil ||
		p.PendingAction.Budget.Name != "max_session_tokens" || p.PendingAction.Budget.Limit != 1000 || p.PendingAction.Budget.Spent != 1300 {
		t.Fatalf("paused session %+v (%+v)", p, st)
	}
	if count(evs, "turn.completed") != 0 || toolUses(evs, "tu_look") != 1 {
		t.Fatalf("the pause's log %v", types(evs))
	}
	w.waitReply(w.team, "C0BDG", m.TS, "Looking into it.")

	// Not an approver: refused in the thread, nothing changes.
	eve := w.fake.Human(w.team.ID, "C0BDG", "U0EVE", "<@"+w.team.BotUserID+"> budget 50k tokens", m.TS)
	if code, _ := w.event(fakeslack.Mention(eve)); code != 200 {
		t.Fatalf("budget mention: %d", code)
	}
	w.waitReply(w.team, "C0BDG", m.TS, "Only this installation's budget approvers can change a session's budget")
	if p := w.paused(id); p.Status != "awaiting_input" || p.Limits != nil {
		t.Fatalf("after a refused command %+v", p)
	}

	// A restart (after SIGKILL) does not resume the paused turn: the
	// pause released its lease, so recovery finds no open turn, and the
	// budget still holds.
	n := len(w.ms.Requests())
	w.srv.kill()
	w.srv = w.srv.restart()
	w.srv.waitLog("switchboard serving")
	if out := w.srv.out.String(); strings.Contains(out, "resuming turn left open") {
		t.Fatalf("the restart resumed a paused turn:\n%s", out)
	}
	if p := w.paused(id); p.Status != "awaiting_input" || p.StopReason != "budget_exceeded" {
		t.Fatalf("after the restart %+v", p)
	}

	// Raised through the API: the same turn resumes from its last step.
	w.ms.Push(modelserver.Step{Text: "The flaky test is TestClock.", Usage: modelserver.Usage{Input: 400, Output: 100}})
	if code, raw := w.srv.do("POST", "/v1/sessions/"+id, `{"limits":{"max_session_tokens":5000}}`); code != 200 {
		t.Fatalf("raise: %d %s", code, raw)
	}
	_, evs = w.srv.waitFor(id, "the resumed turn", func(st sessionState, _ []event) bool {
		return st.Status == "idle" && st.StopReason != nil && *st.StopReason == "completed"
	})
	w.waitReply(w.team, "C0BDG", m.TS, "The flaky test is TestClock.")
	reqs := w.ms.Requests()[n:]
	if len(reqs) != 1 {
		t.Fatalf("%d model requests after the raise, want 1", len(reqs))
	}
	if uses, results := blocks(reqs[0], "tool_use"), blocks(reqs[0], "tool_result"); uses != 1 || results != 1 {
		t.Fatalf("the resumed request has %d tool uses and %d results, want the one step once", uses, results)
	}
	if count(evs, "turn.started") != 1 || count(evs, "turn.completed") != 1 || toolUses(evs, "tu_look") != 1 {
		t.Fatalf("the resumed turn's log %v", types(evs))
	}
	var done struct {
		Usage struct {
			InputTokens  int64 `json:"input_tokens"`
			OutputTokens int64 `json:"output_tokens"`
		} `json:"usage"`
	}
	for _, e := range evs {
		if e.Type == "turn.completed" {
			mustJSON(t, e.Body, &done)
		}
	}
	if got := done.Usage.InputTokens + done.Usage.OutputTokens; got != 1800 {
		t.Fatalf("the whole turn counted %d tokens, want 1800 once", got)
	}

	// A second pause, raised in the thread by an approver.
	w.ms.Push(sayCall("tu_tests", "Running the tests.", 3500))
	again := w.fake.Human(w.team.ID, "C0BDG", "U0ALICE", "<@"+w.team.BotUserID+"> now fix it", m.TS)
	if code, _ := w.event(fakeslack.Mention(again)); code != 200 {
		t.Fatalf("second mention: %d", code)
	}
	w.waitReply(w.team, "C0BDG", m.TS, "I paused: this session has used 5,300 tokens of its 5,000 tokens budget")
	w.srv.waitFor(id, "the second pause", func(st sessionState, _ []event) bool { return st.Status == "awaiting_input" })
	w.ms.Push(modelserver.Step{Text: "Fixed: TestClock uses an injected clock now."})
	boss := w.fake.Human(w.team.ID, "C0BDG", "U0BOSS", "<@"+w.team.BotUserID+"> budget 20k tokens", m.TS)
	if code, _ := w.event(fakeslack.Mention(boss)); code != 200 {
		t.Fatalf("approver's budget mention: %d", code)
	}
	w.waitReply(w.team, "C0BDG", m.TS, "This session's budget is now 20,000 tokens. Continuing where I paused.")
	_, evs = w.srv.waitFor(id, "the second resumed turn", func(st sessionState, evs []event) bool {
		return st.Status == "idle" && count(evs, "turn.completed") == 2
	})
	w.waitReply(w.team, "C0BDG", m.TS, "Fixed: TestClock uses an injected clock now.")
	if toolUses(evs, "tu_tests") != 1 || strings.Contains(string(sub(t, evs)), "budget 20k tokens") {
		t.Fatalf("the second turn's log %v", types(evs))
	}
	if p := w.paused(id); p.Limits == nil || p.Limits.MaxSessionTokens != 20000 {
		t.Fatalf("limits after the thread's raise %+v", p.Limits)
	}
}

// blocks counts a request's content blocks of a type.
func blocks(req modelserver.Request, typ string) int {
	n := 0
	for _, m := range req.Messages {
		for _, b := range m.Content {
			if string(b.Type) == typ {
				n++
			}
		}
	}
	return n
}
