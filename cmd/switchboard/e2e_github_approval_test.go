package main_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/fixtures/fakegithub"
	"github.com/switchboardhq/switchboard/fixtures/mcpservers"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// startGitHubAsking is a GitHub world whose default agent has an MCP
// server with an ask-first tool, mcp_docs_echo.
func startGitHubAsking(t *testing.T) *githubWorld {
	t.Helper()
	mcpSrv := mcpservers.NewMCPGoHTTP()
	t.Cleanup(mcpSrv.Close)
	w := startGitHub(t, map[string]string{"SWITCHBOARD_SANDBOX": "none"})
	if code, raw := w.srv.do("POST", "/v1/agents/default", map[string]any{
		"mcp_servers": []map[string]any{{"name": "docs", "url": mcpSrv.URL, "tool_policies": map[string]string{"echo": "always_ask"}}},
	}); code != 200 {
		t.Fatalf("give the default agent an ask-first tool: %d %s", code, raw)
	}
	w.fake.SetPermission("alice", "write")
	w.fake.SetPermission("bob", "read")
	return w
}

// run waits for the app's latest check run of a session key to satisfy
// cond, and returns it.
func (w *githubWorld) run(key, what string, cond func(fakegithub.CheckRun) bool) fakegithub.CheckRun {
	w.t.Helper()
	var got fakegithub.CheckRun
	w.fake.WaitFor(w.t, patience, what, func() bool {
		for _, cr := range w.fake.CheckRuns() {
			if strings.HasPrefix(cr.ExternalID, key+"@") {
				got = cr
			}
		}
		return got.ID != 0 && cond(got)
	})
	return got
}

// botSaid waits for the app's comment on an issue or PR that holds text.
func (w *githubWorld) botSaid(number int, what, text string) fakegithub.Comment {
	w.t.Helper()
	var got fakegithub.Comment
	w.fake.WaitFor(w.t, patience, what, func() bool {
		for _, c := range w.botComments("acme/widgets", number) {
			if strings.Contains(c.Body, text) {
				got = c
				return true
			}
		}
		return false
	})
	return got
}

// TestGitHubApprovalOnPR: an ask-first tool call on a pull request makes
// the check run "Waiting for approval", in progress with Allow, Deny and
// Stop, and the call and its arguments in its summary, never "Done"
// while the turn waits. A reader's Allow is refused with a comment
// saying why and answers nothing; a writer's Allow runs the tool and the
// turn ends; the same click delivered again, under its delivery id or
// another, queues nothing.
func TestGitHubApprovalOnPR(t *testing.T) {
	const sha = "0123456789abcdef0123456789abcdef01234567"
	w := startGitHubAsking(t)
	w.ms.Push(call("tu_allow", "mcp_docs_echo", map[string]any{"text": "allowed"}), modelserver.Step{Text: "Echoed it."})
	kind, payload := labeled(11, true, sha, "alice", "sb-agent")
	if code := w.deliver(kind, "", payload, githubSecret); code != 200 {
		t.Fatalf("deliver: %d", code)
	}
	key := "github:acme/widgets#11"
	id := w.session(key)
	w.srv.waitFor(id, "requires_action", func(st sessionState, _ []event) bool {
		return st.Status == "awaiting_input" && st.StopReason != nil && *st.StopReason == "requires_action"
	})
	run := w.run(key, "the run waiting for approval", func(cr fakegithub.CheckRun) bool { return cr.Title == "Waiting for approval" })
	if run.Status != "in_progress" || slices.Contains(run.Statuses, "completed") || !slices.Equal(run.ActionIDs(), []string{"allow", "deny", "stop"}) ||
		!strings.Contains(run.Summary, "`mcp_docs_echo`") || !strings.Contains(run.Summary, `"text":"allowed"`) || strings.Contains(run.Summary, "Done") {
		t.Fatalf("the waiting run %+v", run)
	}
	question := w.botSaid(11, "the question", "Allow this?")

	// A reader clicks Allow: told why, nothing answered.
	if code := w.deliver("check_run", "", w.fake.RequestedActionEvent(run, "bob", "allow"), githubSecret); code != 200 {
		t.Fatalf("bob's click: %d", code)
	}
	w.botSaid(11, "the reader told why", "Sorry @bob, only people with write access")
	if st := w.srv.session(id); st.Status != "awaiting_input" {
		t.Fatalf("after the reader's click %+v", st)
	}
	if n := count(w.srv.events(id), "user.tool_confirmation"); n != 0 {
		t.Fatalf("the reader's click was logged: %d", n)
	}

	// A writer clicks Allow, and the click is delivered again.
	click := w.fake.RequestedActionEvent(run, "alice", "allow")
	if code := w.deliver("check_run", "d-alice-allow", click, githubSecret); code != 200 {
		t.Fatalf("alice's click: %d", code)
	}
	_, evs := w.srv.waitFor(id, "the turn after the answer", func(st sessionState, evs []event) bool {
		return st.Status == "idle" && count(evs, "turn.completed") == 2
	})
	if out, isErr := result(t, evs, "tu_allow"); isErr || !strings.Contains(out, "allowed") {
		t.Fatalf("the allowed call: %q error=%v", out, isErr)
	}
	for _, delivery := range []string{"d-alice-allow", ""} {
		if code := w.deliver("check_run", delivery, click, githubSecret); code != 200 {
			t.Fatalf("the click again: %d", code)
		}
	}
	requests := len(w.ms.Requests())
	w.run(key, "the run done", func(cr fakegithub.CheckRun) bool {
		return cr.Status == "completed" && cr.Conclusion == "success" && cr.Title == "Done"
	})
	w.fake.WaitFor(t, patience, "the answer under the question", func() bool {
		c, _ := w.fake.Comment(question.ID)
		return strings.HasSuffix(c.Body, "✅ Allowed by @alice.")
	})
	// An input is queued before its delivery is answered: whatever the
	// replays queued is pending now, or in the log read after.
	pending := listData[event](w.srv, "/v1/sessions/"+id+"/pending")
	evs = w.srv.events(id)
	if n := count(pending, "user.tool_confirmation") + count(evs, "user.tool_confirmation"); n != 1 {
		t.Fatalf("%d answers queued or logged, want 1: %v %v", n, types(pending), types(evs))
	}
	if n := count(evs, "turn.started"); n != 2 || len(w.ms.Requests()) != requests {
		t.Fatalf("a replayed click ran something: %d turns, %d model requests", n, len(w.ms.Requests()))
	}
	for _, e := range evs {
		if e.Type == "user.tool_confirmation" && !strings.Contains(string(e.Body), "by GitHub user alice") {
			t.Fatalf("the answer does not say who gave it: %s", e.Body)
		}
	}
}

// TestGitHubApprovalDeniedByComment: on an issue (no check run) the
// question is a comment and the status comment says the turn waits; a
// comment "@sb-agent deny" from a writer refuses the call, and is the
// answer, never a message the model reads.
func TestGitHubApprovalDeniedByComment(t *testing.T) {
	w := startGitHubAsking(t)
	w.ms.Push(call("tu_deny", "mcp_docs_echo", map[string]any{"text": "denied"}), modelserver.Step{Text: "Understood, I will not."})
	c := w.fake.AddComment("acme/widgets", 12, false, "alice", "@sb-agent echo something")
	if code := w.deliver("issue_comment", "", issueComment(12, false, c, "alice", "@sb-agent echo something"), githubSecret); code != 200 {
		t.Fatalf("deliver: %d", code)
	}
	id := w.session("github:acme/widgets#12")
	w.botSaid(12, "the question", "Allow this?")
	w.botSaid(12, "the status comment waiting", "⏸ Waiting for approval: `mcp_docs_echo`.")

	deny := w.fake.AddComment("acme/widgets", 12, false, "alice", "@sb-agent deny")
	if code := w.deliver("issue_comment", "", issueComment(12, false, deny, "alice", "@sb-agent deny"), githubSecret); code != 200 {
		t.Fatalf("deliver the deny: %d", code)
	}
	_, evs := w.srv.waitFor(id, "the turn after the answer", func(st sessionState, evs []event) bool {
		return st.Status == "idle" && count(evs, "turn.completed") == 2
	})
	if out, isErr := result(t, evs, "tu_deny"); !isErr || strings.Contains(out, `"denied"`) {
		t.Fatalf("the denied call: %q error=%v", out, isErr)
	}
	for _, e := range evs {
		if e.Type == "user.message" && strings.Contains(string(e.Body), "@sb-agent deny") {
			t.Fatalf("the answer was queued as a message: %s", e.Body)
		}
	}
	if modelSaw(w.ms, "@sb-agent deny") {
		t.Fatal("the model read the answer as a message")
	}
	w.botSaid(12, "the answer under the question", "🚫 Denied by @alice.")
	w.botSaid(12, "the status comment done", "✅ Done (completed).")
}

// TestGitHubEarlierComments: the comments of an issue before the mention
// that starts its session are in the first model request, marked as the
// earlier conversation.
func TestGitHubEarlierComments(t *testing.T) {
	w := startGitHub(t, map[string]string{"SWITCHBOARD_SANDBOX": "none"})
	w.fake.SetPermission("alice", "write")
	w.fake.AddComment("acme/widgets", 14, false, "carol", "It only breaks when the clock says Monday in UTC.")
	w.fake.AddComment("acme/widgets", 14, false, "bob", "I bisected it to the timezone change.")
	c := w.fake.AddComment("acme/widgets", 14, false, "alice", "@sb-agent can you fix it?")
	w.ms.Push(modelserver.Step{Text: "Looking at the timezone change."})
	if code := w.deliver("issue_comment", "", issueComment(14, false, c, "alice", "@sb-agent can you fix it?"), githubSecret); code != 200 {
		t.Fatalf("deliver: %d", code)
	}
	w.srv.waitIdle(w.session("github:acme/widgets#14"))
	raw := requestsText(w.ms.Requests()[:1])
	at := 0
	for _, want := range []string{"Earlier conversation on this issue, before you were mentioned",
		"@carol: It only breaks when the clock says Monday in UTC.", "@bob: I bisected it to the timezone change.", "can you fix it?"} {
		i := strings.Index(raw[at:], want)
		if i < 0 {
			t.Fatalf("the first model request lacks %q (in order):\n%s", want, raw)
		}
		at += i + len(want)
	}
}

// requestsText is the text of the requests' messages.
func requestsText(reqs []modelserver.Request) string {
	var b strings.Builder
	for _, r := range reqs {
		for _, m := range r.Messages {
			for _, bl := range m.Content {
				b.WriteString(bl.Text + "\n")
			}
		}
	}
	return b.String()
}

// TestGitHubBudgetPause: a session budget that pauses the turn on a pull
// request keeps its check run in progress as "Paused: session budget"
// with Stop, and posts the note; a writer who is no budget approver is
// told so; "@sb-agent budget 20k tokens" from an approver raises it, is
// confirmed, and the turn goes on from where it paused to its end.
func TestGitHubBudgetPause(t *testing.T) {
	const sha = "0123456789abcdef0123456789abcdef01234567"
	w := startGitHub(t, map[string]string{"SWITCHBOARD_SANDBOX": "none"})
	for _, login := range []string{"alice", "eve", "boss"} {
		w.fake.SetPermission(login, "write")
	}
	if code, raw := w.srv.do("POST", "/v1/agents/default", `{"limits":{"max_session_tokens":1000}}`); code != 200 {
		t.Fatalf("cap the default agent: %d %s", code, raw)
	}
	w.ms.Push(sayCall("tu_look", "Looking into it.", 1300), modelserver.Step{Text: "Fixed the clock.", Usage: modelserver.Usage{Input: 400, Output: 100}})
	kind, payload := labeled(13, true, sha, "alice", "sb-agent")
	if code := w.deliver(kind, "", payload, githubSecret); code != 200 {
		t.Fatalf("deliver: %d", code)
	}
	key := "github:acme/widgets#13"
	id := w.session(key)
	w.srv.budgetApprovers("github", "boss")
	w.botSaid(13, "the budget note", "I paused: this session has used 1,300 tokens of its 1,000 tokens budget")
	run := w.run(key, "the paused run", func(cr fakegithub.CheckRun) bool { return cr.Title == "Paused: session budget" })
	if run.Status != "in_progress" || !slices.Equal(run.ActionIDs(), []string{"stop"}) || !strings.Contains(run.Summary, "budget 2000 tokens") {
		t.Fatalf("the paused run %+v", run)
	}
	w.srv.waitFor(id, "the pause", func(st sessionState, _ []event) bool { return st.Status == "awaiting_input" })

	comment := func(login, text string) {
		t.Helper()
		c := w.fake.AddComment("acme/widgets", 13, false, login, text)
		if code := w.deliver("issue_comment", "", issueComment(13, true, c, login, text), githubSecret); code != 200 {
			t.Fatalf("deliver %q: %d", text, code)
		}
	}
	comment("eve", "@sb-agent budget 20k tokens")
	w.botSaid(13, "eve told", "@eve Only this installation's budget approvers can change a session's budget")
	if st := w.srv.session(id); st.Status != "awaiting_input" {
		t.Fatalf("after eve's command %+v", st)
	}

	comment("boss", "@sb-agent budget 20k tokens")
	w.botSaid(13, "the raise confirmed", "@boss This session's budget is now 20,000 tokens. Continuing where I paused.")
	_, evs := w.srv.waitFor(id, "the resumed turn", func(st sessionState, evs []event) bool {
		return st.Status == "idle" && count(evs, "turn.completed") == 1
	})
	if count(evs, "turn.started") != 1 || toolUses(evs, "tu_look") != 1 {
		t.Fatalf("the resumed turn's log %v", types(evs))
	}
	w.botSaid(13, "the answer", "Fixed the clock.")
	w.run(key, "the run done", func(cr fakegithub.CheckRun) bool {
		return cr.Status == "completed" && cr.Conclusion == "success" && slices.Contains(cr.Statuses, "in_progress")
	})
}
