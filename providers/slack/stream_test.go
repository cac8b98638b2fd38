package slack

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakeslack"
)

func agentRig(t *testing.T, team fakeslack.Team, adjust func(*Config)) *rig {
	t.Helper()
	r := newRigWith(t, team, true, func(c *Config) {
		c.Agent = true
		adjust(c)
	})
	r.startSink()
	return r
}

func delta(resp, text string) core.Event {
	return core.NewEvent(core.TypeAgentMessageDelta, core.LevelProgress, core.ActorAgent, core.MessageDeltaBody{Response: resp, Text: text})
}

func toolUse(id, name, input string) core.Event {
	return core.NewEvent(core.TypeAgentToolUse, core.LevelProgress, core.ActorAgent, core.ToolUseBody{ToolUseID: id, Name: name, Input: json.RawMessage(input)})
}

func toolResult(id, out string, isErr bool) core.Event {
	return core.NewEvent(core.TypeAgentToolResult, core.LevelProgress, core.ActorAgent, core.ToolResultBody{ToolUseID: id, Output: out, IsError: isErr})
}

func progressText(text string) core.Event {
	return core.NewEvent(core.TypeAgentMessage, core.LevelProgress, core.ActorAgent, core.MessageBody{Text: text})
}

// streams returns the bot's streamed messages in the thread.
func (r *rig) streams(channel, thread string) []fakeslack.Message {
	var out []fakeslack.Message
	for _, m := range r.botPosts(channel, thread) {
		if m.Stream != nil {
			out = append(out, m)
		}
	}
	return out
}

// postedText is the text of the bot's posted (not streamed) replies.
func (r *rig) postedTexts(channel, thread string) []string {
	var out []string
	for _, m := range r.botPosts(channel, thread) {
		if m.Stream == nil {
			out = append(out, m.Text)
		}
	}
	return out
}

func TestStreamedTurn(t *testing.T) {
	r := agentRig(t, fakeslack.Team{ID: "T0ST1", Name: "Stream"}, func(*Config) {})
	s, m := r.thread("C0STR")
	answerText := "Mondays break because the cron job runs at 00:00."
	r.turn(s.ID, core.ReasonCompleted, nil,
		progressText("Let me look."),
		toolUse("toolu_1", "read_file", `{"path":"cron.yaml"}`),
		toolResult("toolu_1", "0 0 * * 1 backup", false),
		delta("resp_2", "Mondays "), delta("resp_2", "break because "), delta("resp_2", "the cron job "),
		answer(answerText))
	r.settled()

	streams := r.streams("C0STR", m.TS)
	if len(streams) != 1 {
		t.Fatalf("%d streamed messages, want 1", len(streams))
	}
	st := streams[0]
	if want := "Let me look.\n\n" + answerText; st.Text != want {
		t.Fatalf("streamed text %q, want %q", st.Text, want)
	}
	if st.Stream.Open {
		t.Fatal("the stream was not stopped")
	}
	start := r.fake.Calls("chat.startStream")
	if len(start) != 1 || start[0].Str("recipient_user_id") != "U1" || start[0].Str("recipient_team_id") != r.team.ID ||
		start[0].Str("task_display_mode") != "timeline" || start[0].Str("thread_ts") != m.TS {
		t.Fatalf("chat.startStream calls %+v", start)
	}
	withText := 0
	for _, c := range r.fake.Calls("chat.appendStream") {
		if c.Str("markdown_text") != "" || strings.Contains(c.Str("chunks"), `"markdown_text"`) {
			withText++
		}
	}
	if withText < 3 {
		t.Fatalf("%d appends carried text, want one per delta and one for the answer's rest", withText)
	}
	if len(st.Stream.Tasks) != 1 || st.Stream.Tasks[0].ID != "toolu_1" || st.Stream.Tasks[0].Status != "complete" || st.Stream.Tasks[0].Output == "" {
		t.Fatalf("tasks %+v", st.Stream.Tasks)
	}
	if posted := r.postedTexts("C0STR", m.TS); len(posted) != 0 {
		t.Fatalf("posted %q beside the stream", posted)
	}
	as, ok := r.fake.AgentSession("C0STR", m.TS)
	if !ok || as.Title != "go" || as.History[0] != "processing" || as.Status != "active" {
		t.Fatalf("agent session %+v", as)
	}
	if n := len(r.fake.Calls("assistant.threads.setStatus")); n != 0 {
		t.Fatalf("%d assistant thread statuses beside the agent session", n)
	}
}

func TestStreamTakesBackAnUnfinishedResponse(t *testing.T) {
	r := agentRig(t, fakeslack.Team{ID: "T0ST2", Name: "Retry"}, func(*Config) {})
	s, m := r.thread("C0RET")
	r.turn(s.ID, core.ReasonCompleted, nil,
		delta("resp_1", "I think the answer "), delta("resp_1", "is 41"),
		// The process died; the response was asked for again.
		delta("resp_2", "The answer "), answer("The answer is 42."))
	r.settled()
	var texts []string
	for _, st := range r.streams("C0RET", m.TS) {
		texts = append(texts, st.Text)
	}
	if strings.Join(texts, "") != "The answer is 42." {
		t.Fatalf("streamed messages %q, want the logged answer alone", texts)
	}
}

func TestStreamRefusedPosts(t *testing.T) {
	tests := []struct {
		name string
		evs  []core.Event
	}{
		{name: "refused at the first delta", evs: []core.Event{delta("resp_1", "All "), answer("All good.")}},
		{name: "refused at the answer", evs: []core.Event{answer("All good.")}},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := agentRig(t, fakeslack.Team{ID: fmt.Sprintf("T0SR%d", i), Name: "Refused", StreamError: "not_allowed_token_type"}, func(*Config) {})
			s, m := r.thread("C0REF")
			r.turn(s.ID, core.ReasonCompleted, nil, tc.evs...)
			r.settled()
			if n := len(r.streams("C0REF", m.TS)); n != 0 {
				t.Fatalf("%d streamed messages", n)
			}
			if posted := r.postedTexts("C0REF", m.TS); len(posted) != 1 || posted[0] != "All good." {
				t.Fatalf("posted %q, want the answer once", posted)
			}
		})
	}
}

func TestStreamContinuesInANewMessage(t *testing.T) {
	r := agentRig(t, fakeslack.Team{ID: "T0ST4", Name: "Long"}, func(c *Config) { c.StreamLimit = 40 })
	s, m := r.thread("C0LNG")
	long := strings.Repeat("word ", 30) + "end."
	r.turn(s.ID, core.ReasonCompleted, nil, delta("resp_1", long[:70]), answer(long))
	r.settled()
	streams := r.streams("C0LNG", m.TS)
	if len(streams) < 4 {
		t.Fatalf("%d streamed messages for %d bytes at 40 a message", len(streams), len(long))
	}
	var all strings.Builder
	for _, st := range streams {
		if len(st.Text) > 40 || st.Stream.Open {
			t.Fatalf("message %q: %d bytes, open %v", st.Text, len(st.Text), st.Stream.Open)
		}
		all.WriteString(st.Text)
	}
	if all.String() != long {
		t.Fatalf("messages say %q, want %q", all.String(), long)
	}
}

func TestStreamStoppedBySlackPostsTheRest(t *testing.T) {
	r := agentRig(t, fakeslack.Team{ID: "T0ST5", Name: "Stopped"}, func(*Config) {})
	s, m := r.thread("C0STP")
	// The first delta starts the stream; Slack ended it before the second.
	r.fake.Fail("chat.appendStream", "message_not_in_streaming_state")
	r.turn(s.ID, core.ReasonCompleted, nil, delta("resp_1", "First half, "), delta("resp_1", "second half"), answer("First half, second half."))
	r.settled()
	streams := r.streams("C0STP", m.TS)
	if len(streams) != 1 || streams[0].Text != "First half," {
		t.Fatalf("streams %+v", streams)
	}
	if texts := r.postedTexts("C0STP", m.TS); len(texts) != 1 || texts[0] != "second half." {
		t.Fatalf("posted %q, want the rest of the answer once", texts)
	}
}

func TestStreamedPlan(t *testing.T) {
	plan := func(statuses ...string) core.Event {
		entries := []core.PlanEntry{{Content: "read the cron table"}, {Content: "find the Monday job"}}
		for i := range entries {
			entries[i].Status, entries[i].Priority = statuses[i], "medium"
		}
		return core.NewEvent(core.TypeAgentPlan, core.LevelProgress, core.ActorAgent, core.PlanBody{Entries: entries})
	}
	tests := []struct {
		name string
		evs  []core.Event
	}{
		{name: "an ACP agent's plan", evs: []core.Event{plan("in_progress", "pending"), plan("completed", "completed"), answer("Found it.")}},
		{name: "the plan tool", evs: []core.Event{toolUse("tu_p", "plan", `{}`), plan("in_progress", "pending"), toolResult("tu_p", "plan shown", false),
			toolUse("tu_p2", "plan", `{}`), plan("completed", "completed"), toolResult("tu_p2", "plan shown", false), answer("Found it.")}},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := agentRig(t, fakeslack.Team{ID: fmt.Sprintf("T0SP%d", i), Name: "Plan"}, func(*Config) {})
			s, m := r.thread("C0PLN")
			r.turn(s.ID, core.ReasonCompleted, nil, tc.evs...)
			r.settled()
			streams := r.streams("C0PLN", m.TS)
			if len(streams) != 1 || streams[0].Stream.DisplayMode != "plan" || streams[0].Text != "Found it." {
				t.Fatalf("streams %+v", streams)
			}
			st := streams[0].Stream
			if st.PlanTitle != "Plan: 2 of 2 done" || len(st.Tasks) != 2 || st.Tasks[0].Status != "complete" || st.Tasks[1].Title != "find the Monday job" {
				t.Fatalf("plan %q, tasks %+v", st.PlanTitle, st.Tasks)
			}
		})
	}
}

func TestPlanChecklistWithoutStreaming(t *testing.T) {
	r := newRig(t, fakeslack.Team{ID: "T0ST7", Name: "Checklist", StatusError: "not_allowed_token_type"}, true)
	r.startSink()
	s, m := r.thread("C0CHK")
	plan := core.NewEvent(core.TypeAgentPlan, core.LevelProgress, core.ActorAgent, core.PlanBody{Entries: []core.PlanEntry{
		{Content: "read the cron table", Status: "completed"}, {Content: "fix the job", Status: "in_progress"}}})
	r.turn(s.ID, core.ReasonCompleted, nil, plan, answer("done"))
	r.settled()
	var edits []string
	for _, c := range r.fake.Calls("chat.update") {
		edits = append(edits, c.Str("text")+c.Str("blocks"))
	}
	joined := strings.Join(edits, "\n")
	if !strings.Contains(joined, "✅ read the cron table") || !strings.Contains(joined, "▶️ fix the job") {
		t.Fatalf("the status message never showed the checklist: %q", joined)
	}
	if n := len(r.streams("C0CHK", m.TS)); n != 0 {
		t.Fatalf("%d streams without the agent setting", n)
	}
}

func TestArchivedSessionClosesTheAgentSession(t *testing.T) {
	r := agentRig(t, fakeslack.Team{ID: "T0ST8", Name: "Close"}, func(*Config) {})
	s, m := r.thread("C0CLS")
	r.turn(s.ID, core.ReasonCompleted, nil, answer("ok"))
	r.settled()
	if _, err := r.store.Archive(t.Context(), s.ID); err != nil {
		t.Fatal(err)
	}
	r.fake.WaitFor(t, 30*time.Second, "the agent session closed", func() bool {
		as, _ := r.fake.AgentSession("C0CLS", m.TS)
		return as.Status == "closed"
	})
}

func TestAgentSettingAsksForTheAgentScope(t *testing.T) {
	r := newRigWith(t, fakeslack.Team{ID: "T0ST9", Name: "Scopes"}, false, func(c *Config) { c.Agent = true })
	if !slices.Contains(r.p.cfg.Scopes, AgentScope) || slices.Contains(DefaultScopes, AgentScope) {
		t.Fatalf("install scopes %v with the agent setting", r.p.cfg.Scopes)
	}
}

func TestBudgetPauseEndsTheStream(t *testing.T) {
	r := agentRig(t, fakeslack.Team{ID: "T0STB", Name: "Budget"}, func(*Config) {})
	s, m := r.thread("C0BUD")
	pause := core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorSystem,
		core.MessageBody{Text: "⏸ Paused: this session's token budget is spent.", Kind: core.MessageKindBudget})
	paused := core.NewEvent(core.TypeStatusChanged, core.LevelInternal, core.ActorSystem, core.StatusChangedBody{Status: core.StatusAwaitingInput,
		StopReason: core.ReasonBudgetExceeded, PendingAction: &core.PendingAction{ToolUseIDs: []string{}, Budget: &core.BudgetPause{Name: "tokens"}}})
	resumed := core.NewEvent(core.TypeStatusChanged, core.LevelInternal, core.ActorSystem, core.StatusChangedBody{Status: core.StatusRunning})
	r.turn(s.ID, core.ReasonCompleted, nil, progressText("First part."), pause, paused, resumed, answer("Second part."))
	r.settled()
	var texts []string
	for _, st := range r.streams("C0BUD", m.TS) {
		if st.Stream.Open {
			t.Fatalf("stream %q left open", st.Text)
		}
		texts = append(texts, st.Text)
	}
	if !slices.Equal(texts, []string{"First part.", "Second part."}) {
		t.Fatalf("streams %q, want one before the pause and one after", texts)
	}
	if posted := r.postedTexts("C0BUD", m.TS); len(posted) != 1 || !strings.Contains(posted[0], "Paused") {
		t.Fatalf("posted %q, want the budget's note", posted)
	}
	as, _ := r.fake.AgentSession("C0BUD", m.TS)
	if want := []string{"processing", "suspended", "processing", "active"}; !slices.Equal(as.History, want) {
		t.Fatalf("agent session statuses %v, want %v", as.History, want)
	}
}

func TestStreamFullToTheByte(t *testing.T) {
	r := agentRig(t, fakeslack.Team{ID: "T0STF", Name: "Full"}, func(c *Config) { c.StreamLimit = 10 })
	s, m := r.thread("C0FUL")
	r.turn(s.ID, core.ReasonCompleted, nil, progressText("0123456789"), answer("abc"))
	r.settled()
	var texts []string
	for _, st := range r.streams("C0FUL", m.TS) {
		texts = append(texts, st.Text)
	}
	if strings.Join(texts, "") != "0123456789\n\nabc" || texts[0] != "0123456789" {
		t.Fatalf("streams %q", texts)
	}
	for _, c := range r.fake.Calls("chat.appendStream") {
		if c.Error != "" {
			t.Fatalf("append refused: %s %v", c.Error, c.Args)
		}
	}
}
