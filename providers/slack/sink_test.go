package slack

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakeslack"
	"github.com/switchboardhq/switchboard/providers/output"
)

// thread starts a session for a mention in the fake and returns it with
// the mention.
func (r *rig) thread(channel string) (*core.Session, fakeslack.Message) {
	r.t.Helper()
	m := r.fake.Human(r.team.ID, channel, "U1", "<@"+r.team.BotUserID+"> go", "")
	if code := r.event(fakeslack.Mention(m)); code != 200 {
		r.t.Fatalf("mention: %d", code)
	}
	s, err := r.store.SessionByKey(r.t.Context(), "slack:"+r.team.ID+":"+channel+":"+m.TS)
	if err != nil {
		r.t.Fatal(err)
	}
	return s, m
}

// turn appends a turn holding evs, as the harness would.
func (r *rig) turn(id string, reason core.Reason, pending []string, evs ...core.Event) {
	r.t.Helper()
	w := r.store
	tid := core.NewID(core.PrefixTurn)
	reqs := []core.AppendRequest{{TakeInputs: true, TurnID: tid, Holder: "h", Events: []core.Event{
		core.NewEvent(core.TypeStatusChanged, core.LevelInternal, core.ActorSystem, core.StatusChangedBody{Status: core.StatusRunning}),
		core.NewEvent(core.TypeTurnStarted, core.LevelInternal, core.ActorSystem, struct{}{}),
	}}}
	for _, e := range evs {
		reqs = append(reqs, core.AppendRequest{TurnID: tid, Events: []core.Event{e}})
	}
	reqs = append(reqs, core.AppendRequest{TurnID: tid, Events: []core.Event{
		core.NewEvent(core.TypeTurnCompleted, core.LevelInternal, core.ActorSystem, core.TurnCompletedBody{YieldReason: reason, PendingToolUseIDs: pending}),
		core.NewEvent(core.TypeStatusChanged, core.LevelInternal, core.ActorSystem, core.StatusChangedBody{Status: core.StatusAfter(reason), StopReason: reason}),
	}})
	for _, req := range reqs {
		if _, err := w.Append(r.t.Context(), id, req); err != nil {
			r.t.Fatal(err)
		}
	}
}

func (r *rig) settled() {
	r.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !r.sink.Settled(r.t.Context()) {
		if time.Now().After(deadline) {
			r.t.Fatal("the sink did not finish")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (r *rig) botPosts(channel, thread string) []fakeslack.Message {
	var out []fakeslack.Message
	for _, m := range r.fake.Thread(channel, thread) {
		if m.User == r.team.BotUserID {
			out = append(out, m)
		}
	}
	return out
}

func answer(text string) core.Event {
	return core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorAgent, core.MessageBody{Text: text})
}

func TestSinkSplitsLongAnswers(t *testing.T) {
	r := newRig(t, fakeslack.Team{ID: "T0LG", Name: "Long"}, true)
	r.startSink()
	s, m := r.thread("C0LG")
	long := strings.Repeat(strings.Repeat("lorem ipsum ", 200)+"\n\n", 40) // ~96,000 characters
	r.turn(s.ID, core.ReasonCompleted, nil, answer(long))
	r.settled()
	posts := r.botPosts("C0LG", m.TS)
	if len(posts) < 3 {
		t.Fatalf("%d posts for a long answer", len(posts))
	}
	words := 0
	for _, p := range posts {
		if utf8.RuneCountInString(p.Text) > messageLimit {
			t.Fatalf("a post of %d characters", utf8.RuneCountInString(p.Text))
		}
		var blocks []struct {
			Text struct{ Text string } `json:"text"`
		}
		if err := json.Unmarshal(p.Blocks, &blocks); err != nil {
			t.Fatal(err)
		}
		for _, b := range blocks {
			if utf8.RuneCountInString(b.Text.Text) > sectionLimit {
				t.Fatalf("a section of %d characters", utf8.RuneCountInString(b.Text.Text))
			}
		}
		words += strings.Count(p.Text, "lorem")
	}
	if words != 200*40 {
		t.Fatalf("%d of %d words posted", words, 200*40)
	}
}

func TestSinkExplainsHowTurnsEnd(t *testing.T) {
	r := newRig(t, fakeslack.Team{ID: "T0EN", Name: "Ends", StatusError: "not_allowed_token_type"}, true)
	r.startSink()
	tests := []struct {
		name    string
		reason  core.Reason
		evs     []core.Event
		pending []string
		want    []string // texts expected among the turn's posts
		status  string
	}{
		{name: "step limit", reason: core.ReasonMaxSteps, want: []string{"limit of steps"}, status: "step limit"},
		{name: "time limit", reason: core.ReasonDeadlineExceeded, want: []string{"ran out of time"}, status: "time limit"},
		{name: "model error", reason: core.ReasonError, evs: []core.Event{core.NewEvent(core.TypeError, core.LevelUser, core.ActorSystem, core.ErrorBody{Message: "model rejected the key"})},
			want: []string{"I ran into an error: model rejected the key"}, status: "Failed"},
		{name: "ask-first tool", reason: core.ReasonRequiresAction, pending: []string{"toolu_1"},
			evs:  []core.Event{core.NewEvent(core.TypeAgentToolUse, core.LevelProgress, core.ActorAgent, core.ToolUseBody{ToolUseID: "toolu_1", Name: "mcp_github_merge", Input: json.RawMessage(`{"pr":7}`)})},
			want: []string{"wants to run `mcp_github_merge`"}, status: "Waiting for a decision"},
		{name: "custom tool", reason: core.ReasonRequiresAction, pending: []string{"toolu_2"},
			evs:  []core.Event{core.NewEvent(core.TypeAgentCustomToolUse, core.LevelProgress, core.ActorAgent, core.ToolUseBody{ToolUseID: "toolu_2", Name: "lookup", Input: json.RawMessage(`{}`)})},
			want: []string{"Waiting for the application"}, status: "Waiting for a decision"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, m := r.thread("C0" + strings.ToUpper(strings.ReplaceAll(tc.name, " ", "")[:4]))
			r.turn(s.ID, tc.reason, tc.pending, tc.evs...)
			r.settled()
			var all []string
			for _, p := range r.botPosts(m.Channel, m.TS) {
				all = append(all, p.Text)
			}
			joined := strings.Join(all, "\n")
			for _, w := range tc.want {
				if !strings.Contains(joined, w) {
					t.Fatalf("posts %q lack %q", all, w)
				}
			}
			if !strings.Contains(joined, tc.status) {
				t.Fatalf("status message %q lacks %q", all, tc.status)
			}
		})
	}
	t.Run("allow button confirms the call", func(t *testing.T) {
		s, m := r.thread("C0ALLOW")
		r.turn(s.ID, core.ReasonRequiresAction, []string{"toolu_9"},
			core.NewEvent(core.TypeAgentToolUse, core.LevelProgress, core.ActorAgent, core.ToolUseBody{ToolUseID: "toolu_9", Name: "deploy", Input: json.RawMessage(`{}`)}))
		r.settled()
		var q fakeslack.Message
		for _, p := range r.botPosts(m.Channel, m.TS) {
			if strings.Contains(p.Text, "Allow this?") {
				q = p
			}
		}
		if q.TS == "" {
			t.Fatal("no confirmation posted")
		}
		v := actionValue{Session: s.ID, ToolUse: "toolu_9"}.String()
		if !strings.Contains(string(q.Blocks), `"action_id":"sb_allow"`) || !strings.Contains(string(q.Blocks), `"action_id":"sb_deny"`) {
			t.Fatalf("confirmation without its buttons: %s", q.Blocks)
		}
		// A guest from another workspace in a shared channel is refused,
		// and told so; nothing is queued.
		guest := fakeslack.BlockAction(r.team, "U0GUEST", q, actionAllow, v)
		guest["user"].(map[string]any)["team_id"] = "T0OTHER"
		if code := r.send("/webhooks/slack/interactivity", "application/x-www-form-urlencoded", fakeslack.InteractionBody(guest)); code != 200 {
			t.Fatalf("guest click: %d", code)
		}
		r.fake.WaitFor(t, 30*time.Second, "the guest told why", func() bool {
			for _, c := range r.fake.Calls("chat.postEphemeral") {
				if c.Str("user") == "U0GUEST" && strings.Contains(c.Str("text"), "Only members of this workspace") {
					return true
				}
			}
			return false
		})
		if pending, _ := r.store.Pending(t.Context(), s.ID); len(pending) != 0 {
			t.Fatalf("a guest's allow queued %+v", pending)
		}
		code := r.send("/webhooks/slack/interactivity", "application/x-www-form-urlencoded",
			fakeslack.InteractionBody(fakeslack.BlockAction(r.team, "U1", q, actionAllow, v)))
		if code != 200 {
			t.Fatalf("click: %d", code)
		}
		pending, _ := r.store.Pending(t.Context(), s.ID)
		var b core.ToolConfirmationBody
		if len(pending) != 1 || pending[0].Type != core.TypeUserToolConfirmation || pending[0].Decode(&b) != nil || b.Result != "allow" || b.ToolUseID != "toolu_9" {
			t.Fatalf("pending %+v", pending)
		}
	})
}

// TestFencedClearsTheStatus: a replica that lost the session's output
// mid-render clears the thread's assistant status it may have set late;
// a thread showing progress as a status message is left to its holder.
func TestFencedClearsTheStatus(t *testing.T) {
	for _, tc := range []struct {
		state string
		calls int
	}{
		{`{"mode":"status"}`, 1},
		{`{"mode":"message","status_ts":"1.000100"}`, 0},
		{``, 0},
	} {
		t.Run(tc.state, func(t *testing.T) {
			r := newRig(t, fakeslack.Team{ID: "T1", Name: "acme"}, true)
			s, m := r.thread("C1")
			before := len(r.fake.Calls("assistant.threads.setStatus"))
			th := &output.Thread{Session: s, State: json.RawMessage(tc.state)}
			if err := r.p.Renderer().(output.Fencer).Fenced(t.Context(), th); err != nil {
				t.Fatal(err)
			}
			calls := r.fake.Calls("assistant.threads.setStatus")[before:]
			if len(calls) != tc.calls {
				t.Fatalf("%d setStatus calls, want %d", len(calls), tc.calls)
			}
			for _, c := range calls {
				if c.Str("channel_id") != "C1" || c.Str("thread_ts") != m.TS || c.Str("status") != "" {
					t.Fatalf("setStatus %v, want the thread's status cleared", c)
				}
			}
		})
	}
}
