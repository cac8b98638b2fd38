package github

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakegithub"
)

// waiting makes the session of issue number wait for approval of one
// tool call, as the built-in loop leaves it: a turn that called an
// ask-first tool and ended requires_action. It returns the session.
func (r *installRig) waiting(number int, toolUseID string, custom ...string) *core.Session {
	r.t.Helper()
	r.fake.SetPermission("alice", "write")
	if code := r.deliver("issue_comment", mention(900, number, int64(5000+number), "@sb-agent echo hi")); code != 200 {
		r.t.Fatalf("mention: %d", code)
	}
	s, err := r.store.SessionByKey(r.t.Context(), sessionKey("acme", "widgets", number))
	if err != nil {
		r.t.Fatal(err)
	}
	tid := core.NewID(core.PrefixTurn)
	evs := []core.Event{core.NewEvent(core.TypeAgentToolUse, core.LevelProgress, core.ActorAgent,
		core.ToolUseBody{ToolUseID: toolUseID, Name: "mcp_docs_echo", Input: []byte(`{"text":"hi"}`)})}
	pending := []string{toolUseID}
	for _, id := range custom {
		evs = append(evs, core.NewEvent(core.TypeAgentCustomToolUse, core.LevelProgress, core.ActorAgent,
			core.ToolUseBody{ToolUseID: id, Name: "lookup_order", Input: []byte(`{}`)}))
		pending = append([]string{id}, pending...)
	}
	for _, req := range []core.AppendRequest{
		{TakeInputs: true, TurnID: tid, Holder: "h", Events: []core.Event{
			core.NewEvent(core.TypeStatusChanged, core.LevelInternal, core.ActorSystem, core.StatusChangedBody{Status: core.StatusRunning}),
			core.NewEvent(core.TypeTurnStarted, core.LevelInternal, core.ActorSystem, struct{}{})}},
		{TurnID: tid, Events: evs},
		{TurnID: tid, Events: []core.Event{
			core.NewEvent(core.TypeTurnCompleted, core.LevelInternal, core.ActorSystem, core.TurnCompletedBody{YieldReason: core.ReasonRequiresAction, PendingToolUseIDs: pending}),
			core.NewEvent(core.TypeStatusChanged, core.LevelInternal, core.ActorSystem, core.StatusChangedBody{Status: core.StatusAwaitingInput, StopReason: core.ReasonRequiresAction})}},
	} {
		if _, err := r.store.Append(r.t.Context(), s.ID, req); err != nil {
			r.t.Fatal(err)
		}
	}
	return s
}

// queued are the inputs queued on a session.
func (r *installRig) queued(id string) []core.Event {
	r.t.Helper()
	p, err := r.store.Pending(r.t.Context(), id)
	if err != nil {
		r.t.Fatal(err)
	}
	return p
}

// settle waits for the replies sent after the ack.
func (r *installRig) settle() {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := r.p.bg.Wait(ctx); err != nil {
		r.t.Fatal(err)
	}
}

// repliesTo are the app's comments on an issue that hold text.
func (r *installRig) repliesTo(number int, text string) []fakegithub.Comment {
	var out []fakegithub.Comment
	for _, c := range r.fake.Comments("acme/widgets", number) {
		if c.User == r.fake.Slug+"[bot]" && strings.Contains(c.Body, text) {
			out = append(out, c)
		}
	}
	return out
}

// TestAnswerByComment: "@app allow" or "@app deny" from someone with
// write access answers the call the session waits on, as a
// user.tool_confirmation saying who gave it, never as a message; the
// same comment delivered again, or another answer to the same call,
// queues nothing. Someone without write access is refused in place and
// nothing is queued; an answer when nothing waits is told so.
func TestAnswerByComment(t *testing.T) {
	type step struct {
		login, text string
		delivery    string // "" a fresh one
		comment     int64
		queued      int    // inputs queued on the session after the step
		reply       string // a reply the step gets, "" none
	}
	tests := []struct {
		name   string
		custom bool
		steps  []step
		want   string // the answer queued
	}{
		{"a writer allows; the delivery and the comment again add nothing", false, []step{
			{login: "alice", text: "@sb-agent allow", delivery: "d-allow", comment: 71, queued: 1},
			{login: "alice", text: "@sb-agent allow", delivery: "d-allow", comment: 71, queued: 1},
			{login: "alice", text: "@sb-agent allow", comment: 71, queued: 1},
		}, "allow"},
		{"a writer denies; a second answer to the call adds nothing", false, []step{
			{login: "alice", text: "@sb-agent Deny.", comment: 72, queued: 1},
			{login: "alice", text: "@sb-agent allow", comment: 73, queued: 1},
		}, "deny"},
		{"a reader is refused, then a writer answers", false, []step{
			{login: "bob", text: "@sb-agent allow", comment: 74, queued: 0, reply: "only people with write access to this repository can allow or deny"},
			{login: "alice", text: "@sb-agent deny", comment: 75, queued: 1},
		}, "deny"},
		{"a custom tool's call is not a person's to answer", true, []step{
			{login: "alice", text: "@sb-agent allow", comment: 76, queued: 1},
		}, "allow"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newInstallRig(t, nil)
			r.fake.SetPermission("bob", "read")
			number := 20 + i
			var custom []string
			if tt.custom {
				custom = []string{"tu_custom"}
			}
			s := r.waiting(number, "tu_echo", custom...)
			for j, st := range tt.steps {
				p := mention(900, number, st.comment, st.text)
				p["sender"] = map[string]any{"login": st.login}
				delivery := st.delivery
				if delivery == "" {
					delivery = "rig-answer-" + t.Name() + "-" + string(rune('a'+j))
				}
				if code := r.deliverAs("issue_comment", delivery, p); code != 200 {
					t.Fatalf("step %d: %d", j, code)
				}
				r.settle()
				q := r.queued(s.ID)
				if len(q) != st.queued {
					t.Fatalf("step %d: %d inputs queued, want %d: %+v", j, len(q), st.queued, q)
				}
				if st.reply != "" && len(r.repliesTo(number, st.reply)) != 1 {
					t.Fatalf("step %d: no reply saying %q: %+v", j, st.reply, r.fake.Comments("acme/widgets", number))
				}
			}
			q := r.queued(s.ID)
			var b confirmationBody
			if q[0].Type != core.TypeUserToolConfirmation || q[0].Decode(&b) != nil {
				t.Fatalf("queued %+v", q[0])
			}
			if b.ToolUseID != "tu_echo" || b.Result != tt.want || b.Message == "" || !strings.Contains(b.Message, "by GitHub user alice") {
				t.Fatalf("the answer %+v", b)
			}
			if n := len(r.repliesTo(number, "Nothing here is waiting")); n != 0 {
				t.Fatalf("%d replies that nothing waits", n)
			}
		})
	}
}

// TestAnswerWithNothingWaiting: "@app allow" where no call waits queues
// nothing (neither an answer nor a message) and is told so once, however
// often the comment is delivered.
func TestAnswerWithNothingWaiting(t *testing.T) {
	r := newInstallRig(t, nil)
	r.fake.SetPermission("alice", "write")
	if code := r.deliver("issue_comment", mention(900, 30, 300, "@sb-agent look")); code != 200 {
		t.Fatalf("mention: %d", code)
	}
	s, err := r.store.SessionByKey(t.Context(), sessionKey("acme", "widgets", 30))
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if code := r.deliver("issue_comment", mention(900, 30, 301, "@sb-agent allow")); code != 200 {
			t.Fatalf("answer: %d", code)
		}
		r.settle()
	}
	if q := r.queued(s.ID); len(q) != 1 || q[0].Type != core.TypeUserMessage {
		t.Fatalf("queued %+v, want the first mention only", q)
	}
	if n := len(r.repliesTo(30, "Nothing here is waiting for approval")); n != 1 {
		t.Fatalf("%d replies that nothing waits, want 1", n)
	}
}

// TestAnswerByButton: Allow or Deny on the check run answers the call
// the run showed when it was clicked (named in its summary), from
// someone with write access; a click by someone without is refused with
// a comment saying why; a click replayed, under its delivery id or
// another, queues nothing; a click on a run whose call was answered
// meanwhile answers nothing else.
func TestAnswerByButton(t *testing.T) {
	r := newInstallRig(t, nil)
	r.fake.SetPermission("bob", "read")
	s := r.waiting(40, "tu_echo")
	run := fakegithub.CheckRun{ID: 4040, Name: r.fake.Slug, ExternalID: sessionKey("acme", "widgets", 40) + "@3", Status: "in_progress",
		Title: "Waiting for approval", Summary: "The agent wants to run `mcp_docs_echo`.\n\n" + callMarker("tu_echo")}
	click := func(login, id, delivery string, run fakegithub.CheckRun) {
		t.Helper()
		p := r.fake.RequestedActionEvent(run, login, id)
		p["installation"] = map[string]any{"id": 900}
		if code := r.deliverAs("check_run", delivery, p); code != 200 {
			t.Fatalf("click %s by %s: %d", id, login, code)
		}
		r.settle()
	}

	click("bob", allowAction, "d-bob", run)
	if q := r.queued(s.ID); len(q) != 0 {
		t.Fatalf("a reader's click queued %+v", q)
	}
	if got := r.repliesTo(40, "@bob"); len(got) != 1 || !strings.Contains(got[0].Body, "only people with write access") {
		t.Fatalf("the reader was not told why: %+v", r.fake.Comments("acme/widgets", 40))
	}

	r.fake.SetPermission("alice", "write")
	click("alice", denyAction, "d-deny", run)
	click("alice", denyAction, "d-deny", run)        // the same delivery again
	click("alice", allowAction, "d-deny-later", run) // another click on the same call
	q := r.queued(s.ID)
	var b confirmationBody
	if len(q) != 1 || q[0].Type != core.TypeUserToolConfirmation || q[0].Decode(&b) != nil {
		t.Fatalf("queued %+v, want one answer", q)
	}
	if b.ToolUseID != "tu_echo" || b.Result != denyAction || !strings.Contains(b.Message, "alice") || b.GitHub == nil || b.GitHub.Login != "alice" {
		t.Fatalf("the answer %+v", b)
	}

	stale := run
	stale.Summary = "The agent wants to run `x`.\n\n" + callMarker("tu_answered_before")
	click("alice", allowAction, "d-stale", stale)
	if q := r.queued(s.ID); len(q) != 1 {
		t.Fatalf("a click on a call no longer waiting queued %+v", q)
	}
	if n := len(r.repliesTo(40, "")); n != 1 {
		t.Fatalf("%d replies, want only the reader's refusal", n)
	}
}

// TestParseAnswer: only "allow" or "deny", alone, answers.
func TestParseAnswer(t *testing.T) {
	for said, want := range map[string]string{
		"allow": "allow", "Deny": "deny", " ALLOW. ": "allow", "deny!": "deny",
		"allow it": "", "please deny": "", "": "", "allowed": "",
	} {
		if got := parseAnswer(said); got != want {
			t.Errorf("parseAnswer(%q) = %q, want %q", said, got, want)
		}
	}
	if got := shownCall("text\n\n" + callMarker("toolu_01AbC-9")); got != "toolu_01AbC-9" {
		t.Errorf("shownCall: %q", got)
	}
	if got := shownCall("no marker"); got != "" {
		t.Errorf("shownCall without a marker: %q", got)
	}
}
