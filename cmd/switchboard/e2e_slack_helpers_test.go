package main_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/fixtures/fakeslack"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

const slackSecret = "8f742231b10e8888abcd99yyyzzz85a5-test"

// slackWorld is a serve child wired to a fake Slack and the scripted
// model.
type slackWorld struct {
	t    testing.TB
	ms   *modelserver.Server
	fake *fakeslack.Server
	team fakeslack.Team
	srv  *server
	env  map[string]string
}

// startSlack runs serve in single-workspace mode (SLACK_BOT_TOKEN) for
// team; extra overrides the environment.
func startSlack(t *testing.T, team fakeslack.Team, extra map[string]string) *slackWorld {
	t.Helper()
	ms, hs := modelserver.Start(t)
	fake := fakeslack.Start(t)
	bot := fake.AddTeam(team)
	w := &slackWorld{t: t, ms: ms, fake: fake}
	w.team = w.teamByID(team.ID)
	env := modelEnv(hs.URL, modelserver.FormatAnthropic)
	slackSingleEnv(env, fake, bot)
	for k, v := range extra {
		if v == "" {
			delete(env, k)
		} else {
			env[k] = v
		}
	}
	w.env = env
	w.srv = startServer(t, t.TempDir(), env)
	return w
}

// slackSingleEnv sets the variables of single-workspace mode: one
// workspace of the fake, its bot token given.
func slackSingleEnv(env map[string]string, fake *fakeslack.Server, bot string) {
	env["SLACK_SIGNING_SECRET"] = slackSecret
	env["SLACK_BOT_TOKEN"] = bot
	env["SLACK_API_URL"] = fake.APIURL()
	env["SLACK_PROGRESS_MS"] = "1"
}

// teamByID is the team as the fake completed it (bot ids).
func (w *slackWorld) teamByID(id string) fakeslack.Team {
	w.t.Helper()
	tm, ok := w.fake.Team(id)
	if !ok {
		w.t.Fatalf("fake slack has no team %s", id)
	}
	return tm
}

// post sends a signed request to path and returns the status and how
// long the answer took.
func (w *slackWorld) post(path, contentType string, body []byte, at time.Time, secret string) (int, time.Duration, http.Header) {
	w.t.Helper()
	req := fakeslack.SignedRequest(w.srv.url+path, secret, at, contentType, body)
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, time.Since(start), resp.Header
}

// event sends an Events API payload for the world's team, signed now.
func (w *slackWorld) event(inner map[string]any) (int, time.Duration) {
	w.t.Helper()
	code, took, _ := w.post("/webhooks/slack", "application/json", fakeslack.Event{Team: w.team, Inner: inner}.JSON(), time.Now(), slackSecret)
	return code, took
}

// click sends a button click signed now.
func (w *slackWorld) click(team fakeslack.Team, user string, m fakeslack.Message, actionID string) int {
	w.t.Helper()
	value := buttonValue(w.t, m, actionID)
	code, _, _ := w.post("/webhooks/slack/interactivity", "application/x-www-form-urlencoded",
		fakeslack.InteractionBody(fakeslack.BlockAction(team, user, m, actionID, value)), time.Now(), slackSecret)
	return code
}

// buttonValue finds a button's value in a message's blocks.
func buttonValue(t testing.TB, m fakeslack.Message, actionID string) string {
	t.Helper()
	var blocks []struct {
		Elements []struct {
			ActionID string `json:"action_id"`
			Value    string `json:"value"`
		} `json:"elements"`
	}
	if err := json.Unmarshal(m.Blocks, &blocks); err != nil {
		t.Fatalf("blocks of %s: %v (%s)", m.TS, err, m.Blocks)
	}
	for _, b := range blocks {
		for _, e := range b.Elements {
			if e.ActionID == actionID {
				return e.Value
			}
		}
	}
	t.Fatalf("no button %s in %s", actionID, m.Blocks)
	return ""
}

func (w *slackWorld) sessionsFor(key string) []sessionState { return w.srv.sessionsByKey(key) }

// session waits for the one session of a thread.
func (w *slackWorld) session(team, channel, thread string) string {
	return w.srv.sessionByKey("slack:" + team + ":" + channel + ":" + thread)
}

// botReplies are the thread's messages the bot posted whose text holds
// substr.
func (w *slackWorld) botReplies(team fakeslack.Team, channel, thread, substr string) []fakeslack.Message {
	var out []fakeslack.Message
	for _, m := range w.fake.Thread(channel, thread) {
		if m.User == team.BotUserID && strings.Contains(m.Text, substr) {
			out = append(out, m)
		}
	}
	return out
}

// waitReply waits for the bot's reply holding substr in the thread.
func (w *slackWorld) waitReply(team fakeslack.Team, channel, thread, substr string) fakeslack.Message {
	w.t.Helper()
	var got []fakeslack.Message
	w.fake.WaitFor(w.t, patience, "a reply with "+substr, func() bool {
		got = w.botReplies(team, channel, thread, substr)
		return len(got) > 0
	})
	return got[0]
}

// reacted reports whether a message has the reaction.
func (w *slackWorld) reacted(channel, ts, name string) bool {
	m, ok := w.fake.Message(channel, ts)
	if !ok {
		return false
	}
	for _, r := range m.Reacts {
		if r == name {
			return true
		}
	}
	return false
}

// modelSaw reports whether any model request so far carried substr.
func modelSaw(ms *modelserver.Server, substr string) bool {
	for _, r := range ms.Requests() {
		raw, _ := json.Marshal(r.Messages)
		if bytes.Contains(raw, []byte(substr)) {
			return true
		}
	}
	return false
}
