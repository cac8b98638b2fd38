package main_test

import (
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/fixtures/fakeslack"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// TestSlackReplyExactlyOnceAcrossSIGKILL is acceptance 4: serve is killed
// after the model answered and before the sink recorded the post (once
// before chat.postMessage, once right after it); after the restart the
// reply is in the thread exactly once.
func TestSlackReplyExactlyOnceAcrossSIGKILL(t *testing.T) {
	for _, park := range []string{"before_post", "after_post"} {
		t.Run(park, func(t *testing.T) {
			w := startSlack(t, fakeslack.Team{ID: "T0KIL", Name: "Kill"}, map[string]string{"SWITCHBOARD_TEST_SLACK_PARK": park})
			w.ms.Push(modelserver.Step{Text: "the one and only answer"})
			m := w.fake.Human(w.team.ID, "C0KILL", "U0ALICE", "<@"+w.team.BotUserID+"> answer once", "")
			if code, _ := w.event(fakeslack.Mention(m)); code != 200 {
				t.Fatalf("mention: %d", code)
			}
			id := w.session(w.team.ID, "C0KILL", m.TS)
			w.srv.waitFor(id, "the answer logged", func(_ sessionState, evs []event) bool { return count(evs, "agent.message") == 1 })
			if park == "after_post" {
				w.waitReply(w.team, "C0KILL", m.TS, "the one and only answer")
			}
			w.srv.waitParked("slack " + park)
			if n := len(w.botReplies(w.team, "C0KILL", m.TS, "the one and only answer")); park == "before_post" && n != 0 {
				t.Fatalf("posted before the park point: %d", n)
			}
			w.srv.kill()
			delete(w.env, "SWITCHBOARD_TEST_SLACK_PARK")
			w.srv = w.srv.restart()
			w.waitReply(w.team, "C0KILL", m.TS, "the one and only answer")
			w.srv.waitIdle(id)
			// The sink renders a session's log in order: once it cleared
			// the status at the turn's end, a second post of the answer
			// would have been made.
			w.fake.WaitFor(t, patience, "the turn's status cleared", func() bool {
				calls := w.fake.Calls("assistant.threads.setStatus")
				return len(calls) > 0 && calls[len(calls)-1].Str("status") == ""
			})
			if n := len(w.botReplies(w.team, "C0KILL", m.TS, "the one and only answer")); n != 1 {
				t.Fatalf("the reply was posted %d times", n)
			}
			if park == "after_post" && len(w.fake.Calls("conversations.replies")) == 0 {
				t.Fatal("the restarted sink did not check the thread for its earlier post")
			}
		})
	}
}

// TestSlackRateLimitDelaysThePost is acceptance 5: a 429 with
// Retry-After delays the post; it is never dropped.
func TestSlackRateLimitDelaysThePost(t *testing.T) {
	w := startSlack(t, fakeslack.Team{ID: "T0RL1", Name: "Limits"}, nil)
	w.ms.Push(modelserver.Step{Text: "worth the wait"})
	w.fake.RateLimit("chat.postMessage", 2, 2*time.Second)
	m := w.fake.Human(w.team.ID, "C0RATE", "U0ALICE", "<@"+w.team.BotUserID+"> hi", "")
	if code, _ := w.event(fakeslack.Mention(m)); code != 200 {
		t.Fatalf("mention: %d", code)
	}
	w.waitReply(w.team, "C0RATE", m.TS, "worth the wait")
	calls := w.fake.Calls("chat.postMessage")
	if len(calls) != 3 || calls[0].Status != 429 || calls[1].Status != 429 || calls[2].Status != 200 {
		t.Fatalf("calls %+v", calls)
	}
	for i := 1; i < 3; i++ {
		if gap := calls[i].At.Sub(calls[i-1].At); gap < 2*time.Second {
			t.Fatalf("retry %d came %v after the 429, before its Retry-After", i, gap)
		}
	}
	if n := len(w.botReplies(w.team, "C0RATE", m.TS, "worth the wait")); n != 1 {
		t.Fatalf("posted %d times", n)
	}
}

// TestSlackStopAndAsk is acceptance 7: the :octagonal_sign: reaction on
// the thread's first message and the Stop button on the status message
// interrupt the turn; an ask question's button answer resumes it.
func TestSlackStopAndAsk(t *testing.T) {
	t.Run("stop reaction", func(t *testing.T) {
		w := startSlack(t, fakeslack.Team{ID: "T0SR1", Name: "Stop"}, nil)
		w.ms.Push(modelserver.Step{Hang: true})
		m := w.fake.Human(w.team.ID, "C0STOP", "U0ALICE", "<@"+w.team.BotUserID+"> take forever", "")
		w.event(fakeslack.Mention(m))
		waitRequests(t, w.ms, 1)
		if code, _ := w.event(fakeslack.ReactionAdded("U0ALICE", "octagonal_sign", "C0STOP", m.TS)); code != 200 {
			t.Fatalf("reaction: %d", code)
		}
		id := w.session(w.team.ID, "C0STOP", m.TS)
		st, evs := w.srv.waitIdle(id)
		if st.StopReason == nil || *st.StopReason != "canceled" || count(evs, "user.interrupt") != 1 {
			t.Fatalf("session %+v, log %v", st, types(evs))
		}
		w.waitReply(w.team, "C0STOP", m.TS, "Stopped")
	})
	t.Run("stop button", func(t *testing.T) {
		w := startSlack(t, fakeslack.Team{ID: "T0SB1", Name: "Button", StatusError: "not_allowed_token_type"}, nil)
		w.ms.Push(modelserver.Step{Hang: true})
		m := w.fake.Human(w.team.ID, "C0STOP", "U0ALICE", "<@"+w.team.BotUserID+"> take forever", "")
		w.event(fakeslack.Mention(m))
		status := w.waitReply(w.team, "C0STOP", m.TS, "Working on it")
		if code := w.click(w.team, "U0BOB", status, "sb_stop"); code != 200 {
			t.Fatalf("click: %d", code)
		}
		id := w.session(w.team.ID, "C0STOP", m.TS)
		st, _ := w.srv.waitIdle(id)
		if st.StopReason == nil || *st.StopReason != "canceled" {
			t.Fatalf("session %+v", st)
		}
		w.waitReply(w.team, "C0STOP", m.TS, "Stopped")
	})
	t.Run("ask answered with a button", func(t *testing.T) {
		w := startSlack(t, fakeslack.Team{ID: "T0AS1", Name: "Ask"}, nil)
		w.ms.Push(
			modelserver.Step{ToolCalls: []modelserver.ToolCall{{ID: "toolu_ask", Name: "ask", Input: map[string]string{"question": "Where should I deploy?\n- staging\n- production"}}}},
			modelserver.Step{Text: "deploying to the chosen place"},
		)
		m := w.fake.Human(w.team.ID, "C0ASK", "U0ALICE", "<@"+w.team.BotUserID+"> deploy it", "")
		w.event(fakeslack.Mention(m))
		q := w.waitReply(w.team, "C0ASK", m.TS, "Where should I deploy?")
		id := w.session(w.team.ID, "C0ASK", m.TS)
		st, _ := w.srv.waitFor(id, "awaiting input", func(st sessionState, _ []event) bool { return st.Status == "awaiting_input" })
		if st.StopReason == nil || *st.StopReason != "needs_input" {
			t.Fatalf("session %+v", st)
		}
		if code := w.click(w.team, "U0ALICE", q, "sb_answer0"); code != 200 {
			t.Fatalf("click: %d", code)
		}
		w.waitReply(w.team, "C0ASK", m.TS, "deploying to the chosen place")
		if !modelSaw(w.ms, "staging") || len(w.ms.Requests()) != 2 {
			t.Fatalf("the answer did not reach the model: %d requests", len(w.ms.Requests()))
		}
		w.fake.WaitFor(t, patience, "the question's buttons replaced", func() bool {
			m, _ := w.fake.Message("C0ASK", q.TS)
			return m.Edits > 0 && strings.Contains(string(m.Blocks), "answered")
		})
		// A second click (another person, or Slack retrying) queues nothing.
		if code := w.click(w.team, "U0BOB", q, "sb_answer1"); code != 200 {
			t.Fatalf("second click: %d", code)
		}
		_, evs := w.srv.waitIdle(id)
		if count(evs, "user.message") != 2 {
			t.Fatalf("log %v", types(evs))
		}
	})
}
