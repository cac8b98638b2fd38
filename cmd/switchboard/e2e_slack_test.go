package main_test

import (
	"bytes"
	"net/http"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/fixtures/fakeslack"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// TestSlackMention is acceptance 1: a signed app_mention answers 200
// without waiting for the model (its answer is held until both deliveries
// are acked and 👀 is shown); 👀 on receipt, progress while the turn runs
// (the assistant thread status where the workspace allows it, else a
// status message edited in place), then the answer in the same thread as
// mrkdwn. The same mention delivered also as a message event runs one
// turn, and the thread before the mention reaches the model.
func TestSlackMention(t *testing.T) {
	for _, tc := range []struct {
		name        string
		statusError string
	}{
		{"assistant status", ""},
		{"status message", "not_allowed_token_type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := startSlack(t, fakeslack.Team{ID: "T0AC1", Name: "Acme", StatusError: tc.statusError}, nil)
			w.ms.Push(modelserver.Step{Text: "## Plan\n**Ship** it on [Monday](https://example.com/cal)."})
			// The model's answer waits until both deliveries were acked and
			// 👀 shown: the acks cannot have waited for the turn.
			release := holdAnswer(t, w.ms)
			root := w.fake.Human(w.team.ID, "C0GENERAL", "U0ALICE", "we need a plan for the launch", "")
			m := w.fake.Human(w.team.ID, "C0GENERAL", "U0BOB", "<@"+w.team.BotUserID+"> can you help?", root.TS)

			code, took := w.event(fakeslack.Mention(m))
			if code != 200 {
				t.Fatalf("app_mention: %d in %v", code, took)
			}
			code, took = w.event(fakeslack.MessageEvent(m, "channel"))
			if code != 200 {
				t.Fatalf("message: %d in %v", code, took)
			}
			w.fake.WaitFor(t, patience, "👀 on the mention", func() bool { return w.reacted(m.Channel, m.TS, "eyes") })
			release()
			reply := w.waitReply(w.team, m.Channel, root.TS, "Ship")
			if reply.ThreadTS != root.TS {
				t.Fatalf("reply thread_ts %q, want %q", reply.ThreadTS, root.TS)
			}
			if want := "*Plan*\n*Ship* it on <https://example.com/cal|Monday>."; reply.Text != want {
				t.Fatalf("reply not in mrkdwn: %q %s", reply.Text, reply.Blocks)
			}
			switch tc.statusError {
			case "":
				w.fake.WaitFor(t, patience, "the status cleared", func() bool {
					calls := w.fake.Calls("assistant.threads.setStatus")
					return len(calls) >= 2 && calls[len(calls)-1].Str("status") == ""
				})
				calls := w.fake.Calls("assistant.threads.setStatus")
				if calls[0].Str("thread_ts") != root.TS || calls[0].Str("channel_id") != m.Channel || calls[0].Str("status") == "" {
					t.Fatalf("status calls %+v", calls)
				}
				if n := len(w.botReplies(w.team, m.Channel, root.TS, "Working")); n != 0 {
					t.Fatalf("%d status messages where the assistant status works", n)
				}
			default:
				w.fake.WaitFor(t, patience, "the status message edited to Done", func() bool {
					return len(w.botReplies(w.team, m.Channel, root.TS, "Done")) == 1
				})
				status := w.botReplies(w.team, m.Channel, root.TS, "Done")
				if status[0].Edits == 0 || status[0].TS > reply.TS {
					t.Fatalf("status message %+v, reply %s", status[0], reply.TS)
				}
			}
			id := w.session(w.team.ID, "C0GENERAL", root.TS)
			_, evs := w.srv.waitIdle(id)
			checkLog(t, evs)
			if n := count(evs, "turn.started"); n != 1 {
				t.Fatalf("%d turns for one mention delivered twice: %v", n, types(evs))
			}
			if n := len(w.ms.Requests()); n != 1 {
				t.Fatalf("%d model requests", n)
			}
			if !modelSaw(w.ms, "we need a plan for the launch") || !modelSaw(w.ms, "can you help?") {
				t.Fatalf("the model did not see the thread: %+v", w.ms.Requests())
			}
			if n := len(w.botReplies(w.team, m.Channel, root.TS, "Ship")); n != 1 {
				t.Fatalf("the answer was posted %d times", n)
			}
		})
	}
}

// TestSlackSteering is acceptance 2: a reply in the thread (no mention)
// reaches the running session as steering; after the turn, a reply starts
// the next turn in the same session.
func TestSlackSteering(t *testing.T) {
	w := startSlack(t, fakeslack.Team{ID: "T0ST1", Name: "Steer"}, nil)
	w.ms.Push(modelserver.Step{Text: "looking at X"}, modelserver.Step{Text: "X and Y are done"}, modelserver.Step{Text: "Z is done too"})
	release := holdAnswer(t, w.ms) // the first answer waits for the steer
	m := w.fake.Human(w.team.ID, "C0DEV", "U0ALICE", "<@"+w.team.BotUserID+"> do X", "")
	if code, _ := w.event(fakeslack.Mention(m)); code != 200 {
		t.Fatalf("mention: %d", code)
	}
	waitRequests(t, w.ms, 1)
	steer := w.fake.Human(w.team.ID, "C0DEV", "U0ALICE", "also do Y please", m.TS)
	if code, _ := w.event(fakeslack.MessageEvent(steer, "channel")); code != 200 {
		t.Fatalf("steer: %d", code)
	}
	release()
	id := w.session(w.team.ID, "C0DEV", m.TS)
	w.waitReply(w.team, "C0DEV", m.TS, "X and Y are done")
	_, evs := w.srv.waitIdle(id)
	if count(evs, "turn.started") != 1 || count(evs, "user.message") != 2 {
		t.Fatalf("steering did not join the running turn: %v", types(evs))
	}
	reqs := w.ms.Requests()
	if len(reqs) != 2 || !modelSaw(w.ms, "also do Y please") {
		t.Fatalf("model requests %d; steering seen %v", len(reqs), modelSaw(w.ms, "also do Y please"))
	}
	w.fake.WaitFor(t, patience, "👀 on the steering message", func() bool { return w.reacted("C0DEV", steer.TS, "eyes") })

	next := w.fake.Human(w.team.ID, "C0DEV", "U0BOB", "and Z?", m.TS)
	if code, _ := w.event(fakeslack.MessageEvent(next, "channel")); code != 200 {
		t.Fatalf("next: %d", code)
	}
	w.waitReply(w.team, "C0DEV", m.TS, "Z is done too")
	_, evs = w.srv.waitIdle(id)
	if count(evs, "turn.started") != 2 || len(w.sessionsFor("slack:"+w.team.ID+":C0DEV:"+m.TS)) != 1 {
		t.Fatalf("the reply did not start the next turn of the same session: %v", types(evs))
	}
	// A reply in a thread the agent is not in starts nothing.
	other := w.fake.Human(w.team.ID, "C0DEV", "U0BOB", "unrelated", "")
	lone := w.fake.Human(w.team.ID, "C0DEV", "U0ALICE", "a reply", other.TS)
	if code, _ := w.event(fakeslack.MessageEvent(lone, "channel")); code != 200 {
		t.Fatalf("lone reply: %d", code)
	}
	if list := w.sessionsFor("slack:" + w.team.ID + ":C0DEV:" + other.TS); len(list) != 0 {
		t.Fatalf("a reply in a thread without a session started one")
	}
}

// TestSlackDeliveryChecks is acceptance 3: Slack's retry of an event
// appends nothing; a bad signature or a six-minute-old timestamp is a 401
// that stores nothing; the bot's own message triggers nothing.
func TestSlackDeliveryChecks(t *testing.T) {
	w := startSlack(t, fakeslack.Team{ID: "T0DC1", Name: "Checks"}, nil)
	w.ms.Push(modelserver.Step{Text: "one answer"})
	m := w.fake.Human(w.team.ID, "C0OPS", "U0ALICE", "<@"+w.team.BotUserID+"> status?", "")
	body := fakeslack.Event{Team: w.team, Inner: fakeslack.Mention(m)}.JSON()
	for i, at := range []time.Time{time.Now(), time.Now()} {
		req := fakeslack.SignedRequest(w.srv.url+"/webhooks/slack", slackSecret, at, "application/json", body)
		if i > 0 {
			req.Header.Set("X-Slack-Retry-Num", "1")
			req.Header.Set("X-Slack-Retry-Reason", "http_timeout")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("delivery %d: %d", i, resp.StatusCode)
		}
	}
	id := w.session(w.team.ID, "C0OPS", m.TS)
	w.waitReply(w.team, "C0OPS", m.TS, "one answer")
	_, evs := w.srv.waitIdle(id)
	if count(evs, "user.message") != 1 || count(evs, "turn.started") != 1 {
		t.Fatalf("a retried event was appended again: %v", types(evs))
	}

	refused := w.fake.Human(w.team.ID, "C0OPS", "U0EVE", "<@"+w.team.BotUserID+"> let me in", "")
	refusedBody := fakeslack.Event{Team: w.team, Inner: fakeslack.Mention(refused)}.JSON()
	for _, tc := range []struct {
		name   string
		at     time.Time
		secret string
	}{
		{"bad signature", time.Now(), "not-the-signing-secret"},
		{"six minutes old", time.Now().Add(-6 * time.Minute), slackSecret},
		{"six minutes ahead", time.Now().Add(6 * time.Minute), slackSecret},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, _ := w.post("/webhooks/slack", "application/json", refusedBody, tc.at, tc.secret)
			if code != 401 {
				t.Fatalf("status %d, want 401", code)
			}
		})
	}
	t.Run("unsigned", func(t *testing.T) {
		resp, err := http.Post(w.srv.url+"/webhooks/slack", "application/json", bytes.NewReader(refusedBody))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Fatalf("status %d", resp.StatusCode)
		}
	})
	if list := w.sessionsFor("slack:" + w.team.ID + ":C0OPS:" + refused.TS); len(list) != 0 {
		t.Fatal("a refused delivery stored a session")
	}

	t.Run("the bot's own message", func(t *testing.T) {
		own := w.fake.Human(w.team.ID, "C0OPS", w.team.BotUserID, "<@"+w.team.BotUserID+"> talking to myself", "")
		own.BotID = w.team.BotID
		for _, inner := range []map[string]any{fakeslack.MessageEvent(own, "channel"), fakeslack.Mention(own)} {
			if code, _ := w.event(inner); code != 200 {
				t.Fatalf("own message: %d", code)
			}
		}
		if list := w.sessionsFor("slack:" + w.team.ID + ":C0OPS:" + own.TS); len(list) != 0 {
			t.Fatal("the bot's own message started a session")
		}
	})
	t.Run("url verification", func(t *testing.T) {
		code, _, _ := w.post("/webhooks/slack", "application/json", []byte(`{"token":"x","challenge":"3eZbrw1aBm2rZgRNFdxV","type":"url_verification"}`), time.Now(), slackSecret)
		if code != 200 {
			t.Fatalf("url_verification: %d", code)
		}
	})
	if n := len(w.ms.Requests()); n != 1 {
		t.Fatalf("%d model requests, want 1", n)
	}
}

// TestSlackDirectMessages: a DM to the bot starts a session per DM
// thread, answered in that thread; a reply in the thread continues it.
func TestSlackDirectMessages(t *testing.T) {
	w := startSlack(t, fakeslack.Team{ID: "T0DM1", Name: "DMs"}, nil)
	w.ms.Push(modelserver.Step{Text: "hello in private"}, modelserver.Step{Text: "still here"})
	dm := w.fake.Human(w.team.ID, "D0ALICE", "U0ALICE", "are you there?", "")
	if code, _ := w.event(fakeslack.MessageEvent(dm, "im")); code != 200 {
		t.Fatalf("dm: %d", code)
	}
	w.waitReply(w.team, "D0ALICE", dm.TS, "hello in private")
	id := w.session(w.team.ID, "D0ALICE", dm.TS)
	w.srv.waitIdle(id)
	more := w.fake.Human(w.team.ID, "D0ALICE", "U0ALICE", "one more thing", dm.TS)
	if code, _ := w.event(fakeslack.MessageEvent(more, "im")); code != 200 {
		t.Fatalf("dm reply: %d", code)
	}
	w.waitReply(w.team, "D0ALICE", dm.TS, "still here")
	_, evs := w.srv.waitIdle(id)
	if count(evs, "turn.started") != 2 {
		t.Fatalf("log %v", types(evs))
	}
}
