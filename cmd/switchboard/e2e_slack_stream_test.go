package main_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/fixtures/fakeslack"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// streamEnv configures the app as a Slack agent, every delta logged and
// appended as soon as it comes.
var streamEnv = map[string]string{"SLACK_AGENT": "true", "SLACK_STREAM_MS": "0", "SWITCHBOARD_TEXT_DELTA_MS": "20"}

const streamedAnswer = "Mondays break because the cron job runs at midnight."

// streamedText is what the bot's streamed messages in a thread hold.
func streamedText(w *slackWorld, channel, thread string) string {
	var b strings.Builder
	for _, m := range w.fake.Thread(channel, thread) {
		if m.User == w.team.BotUserID && m.Stream != nil {
			b.WriteString(m.Text)
		}
	}
	return b.String()
}

// holdChunks scripts the answer so that each streamed word waits until
// the thread shows the words before it (up to word upto): the text reaches
// Slack while the model still writes.
func holdChunks(t *testing.T, w *slackWorld, channel string, thread *string, upto int) modelserver.Step {
	words := strings.SplitAfter(streamedAnswer, " ")
	var sent time.Time // when the last word held went out
	return modelserver.Step{Text: streamedAnswer, BeforeChunk: func(i int) {
		defer func() { sent = time.Now() }()
		if i == 0 || i > upto {
			return
		}
		want := strings.TrimSpace(strings.Join(words[:i], ""))
		if !w.fake.Until(patience, func() bool { return strings.Contains(streamedText(w, channel, *thread), want) }) {
			t.Errorf("the thread never showed %q while the answer streamed; calls: %d appends", want, len(w.fake.Calls("chat.appendStream")))
			return
		}
		// A figure for the record, not a bound.
		t.Logf("word %d in the thread %v after the model wrote it", i, time.Since(sent).Round(time.Millisecond))
	}}
}

// TestSlackStreamedAnswer is acceptance 1: with the agent setting the
// answer streams into the thread as the model writes it, with a task card
// for its tool call, and ends equal to the logged agent.message; across a
// SIGKILL right after an append the thread shows it exactly once; a stream
// Slack refuses is posted instead.
func TestSlackStreamedAnswer(t *testing.T) {
	t.Run("streamed", func(t *testing.T) {
		w := startSlack(t, fakeslack.Team{ID: "T0STA", Name: "Stream"}, streamEnv)
		var thread string
		w.ms.Push(modelserver.Step{ToolCalls: []modelserver.ToolCall{{Name: "say", Input: map[string]any{"text": "looking"}}}},
			holdChunks(t, w, "C0STA", &thread, 3))
		m := w.fake.Human(w.team.ID, "C0STA", "U0ALICE", "<@"+w.team.BotUserID+"> what breaks on Mondays?", "")
		thread = m.TS
		if code, _ := w.event(fakeslack.Mention(m)); code != 200 {
			t.Fatalf("mention: %d", code)
		}
		id := w.session(w.team.ID, "C0STA", m.TS)
		_, evs := w.srv.waitIdle(id)
		w.fake.WaitFor(t, patience, "the stream stopped", func() bool { return len(w.fake.Calls("chat.stopStream")) > 0 })

		logged := ""
		for _, e := range evs {
			var b struct{ Text string }
			if e.Type == "agent.message" && e.Level == "user" && json.Unmarshal(e.Body, &b) == nil {
				logged = b.Text
			}
		}
		if logged != streamedAnswer || count(evs, "agent.message_delta") < 3 {
			t.Fatalf("logged answer %q with %d deltas", logged, count(evs, "agent.message_delta"))
		}
		var stream *fakeslack.Message
		for _, msg := range w.fake.Thread("C0STA", m.TS) {
			if msg.Stream != nil {
				stream = &msg
			}
		}
		if stream == nil || stream.Stream.Open {
			t.Fatalf("no stopped stream in the thread: %+v", stream)
		}
		// The say tool's text is the turn's first message: the stream
		// holds it, then the answer.
		if want := "looking\n\n" + streamedAnswer; stream.Text != want {
			t.Fatalf("streamed %q, want the logged messages %q", stream.Text, want)
		}
		if !strings.HasSuffix(stream.Text, logged) {
			t.Fatalf("the stream ends %q, not with the logged answer", stream.Text)
		}
		if starts := w.fake.Calls("chat.startStream"); len(starts) != 1 || starts[0].Str("recipient_user_id") != "U0ALICE" ||
			starts[0].Str("recipient_team_id") != w.team.ID {
			t.Fatalf("chat.startStream %+v", starts)
		}
		texts := 0
		for _, c := range w.fake.Calls("chat.appendStream") {
			if c.Str("markdown_text") != "" || strings.Contains(c.Str("chunks"), "markdown_text") {
				texts++
			}
		}
		if texts < 2 {
			t.Fatalf("%d appends carried text", texts)
		}
		if len(stream.Stream.Tasks) == 0 || stream.Stream.Tasks[0].Title != "say" || stream.Stream.Tasks[0].Status != "complete" {
			t.Fatalf("task cards %+v", stream.Stream.Tasks)
		}
		if n := len(w.botReplies(w.team, "C0STA", m.TS, "Mondays break")); n != 1 {
			t.Fatalf("the answer shows %d times in the thread", n)
		}
		// The turn's end is rendered in order: the stream stops, then the
		// agent session goes back to active, the last call of the turn.
		w.fake.WaitFor(t, patience, "the agent session active", func() bool {
			as, _ := w.fake.AgentSession("C0STA", m.TS)
			return as.Status == "active"
		})
		if calls := w.fake.Calls("chat.postMessage"); len(calls) != 0 {
			t.Fatalf("posted %d messages beside the stream", len(calls))
		}
		if as, _ := w.fake.AgentSession("C0STA", m.TS); as.History[0] != "processing" {
			t.Fatalf("agent session %+v", as)
		}
	})
	t.Run("SIGKILL after an append", func(t *testing.T) {
		env := map[string]string{"SWITCHBOARD_TEST_SLACK_PARK": "after_append"}
		for k, v := range streamEnv {
			env[k] = v
		}
		w := startSlack(t, fakeslack.Team{ID: "T0STK", Name: "Kill"}, env)
		var thread string
		// The sink parks after its first append (the second word): the
		// words after it are not waited for.
		w.ms.Push(holdChunks(t, w, "C0STK", &thread, 2))
		m := w.fake.Human(w.team.ID, "C0STK", "U0ALICE", "<@"+w.team.BotUserID+"> what breaks on Mondays?", "")
		thread = m.TS
		if code, _ := w.event(fakeslack.Mention(m)); code != 200 {
			t.Fatalf("mention: %d", code)
		}
		id := w.session(w.team.ID, "C0STK", m.TS)
		w.srv.waitParked("slack after_append")
		w.srv.waitIdle(id)
		w.srv.kill()
		delete(w.env, "SWITCHBOARD_TEST_SLACK_PARK")
		w.srv = w.srv.restart()
		w.srv.waitIdle(id)
		w.fake.WaitFor(t, patience, "the whole answer in the thread", func() bool {
			var parts []string
			for _, msg := range w.fake.Thread("C0STK", m.TS) {
				if msg.User == w.team.BotUserID {
					parts = append(parts, msg.Text)
				}
			}
			return strings.Join(parts, " ") == streamedAnswer
		})
		if n := len(w.fake.Calls("conversations.replies")); n == 0 {
			t.Fatal("the restarted sink did not read the stream back")
		}
		if !w.streamsStopped("C0STK", m.TS) {
			t.Fatal("a stream was left open")
		}
	})
	t.Run("refused", func(t *testing.T) {
		w := startSlack(t, fakeslack.Team{ID: "T0STR", Name: "Refused", StreamError: "not_allowed_token_type"}, streamEnv)
		w.ms.Push(modelserver.Step{Text: streamedAnswer})
		m := w.fake.Human(w.team.ID, "C0STR", "U0ALICE", "<@"+w.team.BotUserID+"> what breaks on Mondays?", "")
		w.event(fakeslack.Mention(m))
		w.waitReply(w.team, "C0STR", m.TS, streamedAnswer)
		if n := len(w.botReplies(w.team, "C0STR", m.TS, streamedAnswer)); n != 1 {
			t.Fatalf("posted %d times", n)
		}
	})
}

// streamsStopped reports that no streamed message of the thread is still
// open.
func (w *slackWorld) streamsStopped(channel, thread string) bool {
	for _, m := range w.fake.Thread(channel, thread) {
		if m.Stream != nil && m.Stream.Open {
			return false
		}
	}
	return true
}

// TestSlackAgentSessionStopped is acceptance 2: Slack's own stop on the
// thread's agent session (agent_session_stopped) stops the running turn,
// its stream included; the same event replayed queues nothing.
func TestSlackAgentSessionStopped(t *testing.T) {
	w := startSlack(t, fakeslack.Team{ID: "T0ASS", Name: "Stop"}, streamEnv)
	w.ms.Push(modelserver.Step{Hang: true})
	m := w.fake.Human(w.team.ID, "C0ASS", "U0ALICE", "<@"+w.team.BotUserID+"> take forever", "")
	if code, _ := w.event(fakeslack.Mention(m)); code != 200 {
		t.Fatalf("mention: %d", code)
	}
	waitRequests(t, w.ms, 1)
	id := w.session(w.team.ID, "C0ASS", m.TS)
	w.fake.WaitFor(t, patience, "the agent session processing", func() bool {
		as, _ := w.fake.AgentSession("C0ASS", m.TS)
		return as.Status == "processing"
	})
	body := fakeslack.Event{Team: w.team, EventID: "EvSTOPPED01", Inner: w.fake.StopAgentSession("C0ASS", m.TS, "U0ALICE")}.JSON()
	stopped := time.Now()
	if code, _, _ := w.post("/webhooks/slack", "application/json", body, time.Now(), slackSecret); code != 200 {
		t.Fatalf("agent_session_stopped: %d", code)
	}
	st, evs := w.srv.waitIdle(id)
	t.Logf("the turn ended %v after Slack's stop", time.Since(stopped).Round(time.Millisecond)) // a figure, not a bound
	if st.StopReason == nil || *st.StopReason != "canceled" || count(evs, "user.interrupt") != 1 {
		t.Fatalf("session %+v, log %v", st, types(evs))
	}
	// Slack wants the session moved off processing once the work stopped.
	w.fake.WaitFor(t, patience, "the agent session active again", func() bool {
		as, _ := w.fake.AgentSession("C0ASS", m.TS)
		return as.Status == "active"
	})
	// Replayed (Slack retries an event it thinks was not received): nothing
	// is queued, the session stays idle.
	if code, _, _ := w.post("/webhooks/slack", "application/json", body, time.Now(), slackSecret); code != 200 {
		t.Fatalf("replay: %d", code)
	}
	if pending := listData[event](w.srv, "/v1/sessions/"+id+"/pending"); len(pending) != 0 {
		t.Fatalf("the replay queued %d inputs", len(pending))
	}
	if _, evs := w.srv.waitIdle(id); count(evs, "user.interrupt") != 1 {
		t.Fatalf("log after the replay %v", types(evs))
	}
}
