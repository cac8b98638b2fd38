package main_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/fixtures/fakeslack"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// userTexts are the texts of a log's user.message events.
func userTexts(t *testing.T, evs []event) []string {
	t.Helper()
	var out []string
	for _, e := range evs {
		if e.Type != "user.message" {
			continue
		}
		var b struct {
			Text string `json:"text"`
		}
		mustJSON(t, e.Body, &b)
		out = append(out, b.Text)
	}
	return out
}

// TestSlackMentionWithNul: a Slack mention whose text holds U+0000 (which
// PostgreSQL's text cannot hold) is acked, stored once whatever Slack's
// retries, with its text as sent, and answered; so is a steer holding it.
func TestSlackMentionWithNul(t *testing.T) {
	w := startSlack(t, fakeslack.Team{ID: "T0NUL", Name: "Nul"}, nil)
	w.ms.Push(modelserver.Step{Text: "got it"})
	text := "<@" + w.team.BotUserID + "> run\x00this"
	m := w.fake.Human(w.team.ID, "C0NUL", "U0ALICE", text, "")
	// The mention, Slack's retry of it, and the same message as a message
	// event.
	for i, inner := range []map[string]any{fakeslack.Mention(m), fakeslack.Mention(m), fakeslack.MessageEvent(m, "channel")} {
		if code, took := w.event(inner); code != 200 {
			t.Fatalf("delivery %d: %d in %v", i, code, took)
		}
	}
	id := w.session(w.team.ID, "C0NUL", m.TS)
	w.waitReply(w.team, "C0NUL", m.TS, "got it")
	_, evs := w.srv.waitIdle(id)
	checkLog(t, evs)
	got := userTexts(t, evs)
	if len(got) != 1 || !strings.Contains(got[0], "run\x00this") {
		t.Fatalf("user messages %q, want one holding %q", got, "run\x00this")
	}
	if !modelSaw(w.ms, `run\u0000this`) {
		t.Fatalf("the model did not see the text as sent: %+v", w.ms.Requests())
	}

	w.ms.Push(modelserver.Step{Text: "steered"})
	steer := w.fake.Human(w.team.ID, "C0NUL", "U0ALICE", "and\x00that", m.TS)
	if code, _ := w.event(fakeslack.MessageEvent(steer, "channel")); code != 200 {
		t.Fatalf("steer: %d", code)
	}
	w.waitReply(w.team, "C0NUL", m.TS, "steered")
	_, evs = w.srv.waitIdle(id)
	if got := userTexts(t, evs); len(got) != 2 || !strings.HasSuffix(got[1], ": and\x00that") {
		t.Fatalf("user messages %q, want the steer as sent last", got)
	}
}

// TestAPITextWithNul: through the API, a message holding U+0000 is kept
// as sent, a session's first message as an event too; a tenant, a filter
// or a path holding it (or invalid UTF-8) is a 400 naming it, never a 500,
// on either store.
func TestAPITextWithNul(t *testing.T) {
	ms, hs := modelserver.Start(t)
	ms.Push(modelserver.Step{Text: "one"}, modelserver.Step{Text: "two"})
	s := startServer(t, t.TempDir(), modelEnv(hs.URL, modelserver.FormatAnthropic))

	id := s.createSession("start\x00here")
	_, evs := s.waitIdle(id)
	if got := userTexts(t, evs); len(got) != 1 || got[0] != "start\x00here" {
		t.Fatalf("user messages %q", got)
	}

	// A session whose first message comes as an event.
	code, raw := s.do("POST", "/v1/sessions", map[string]any{"agent": "default"})
	if code != 201 {
		t.Fatalf("create: %d %s", code, raw)
	}
	var created struct {
		ID string `json:"id"`
	}
	mustJSON(t, raw, &created)
	s.send(created.ID, "first\x00event")
	_, evs = s.waitIdle(created.ID)
	if got := userTexts(t, evs); len(got) != 1 || got[0] != "first\x00event" {
		t.Fatalf("user messages %q", got)
	}
	// The text filter finds it on either side of the NUL.
	if list := listData[sessionState](s, "/v1/sessions?q=EVENT"); len(list) != 1 || list[0].ID != created.ID {
		t.Fatalf("q=EVENT listed %+v", list)
	}

	for _, tc := range []struct {
		name, method, path string
		body               any
		names              string
	}{
		{"tenant", "POST", "/v1/sessions", map[string]any{"agent": "default", "tenant": "acme\x00"}, `"tenant"`},
		{"text filter", "GET", "/v1/sessions?q=" + url.QueryEscape("a\x00b"), nil, "query parameter q"},
		{"tenant filter", "GET", "/v1/sessions?tenant=%FF", nil, "query parameter tenant"},
		{"origin key filter", "GET", "/v1/sessions?origin_key=" + url.QueryEscape("slack:\x00"), nil, "query parameter origin_key"},
		{"session id", "GET", "/v1/sessions/ses_%00", nil, "path"},
		{"events of a session id", "GET", "/v1/sessions/ses_%FF/events", nil, "path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, raw := s.do(tc.method, tc.path, tc.body)
			var e struct {
				Error struct{ Type, Message string }
			}
			if code != 400 || json.Unmarshal(raw, &e) != nil || e.Error.Type != "invalid_request" || !strings.Contains(e.Error.Message, tc.names) {
				t.Fatalf("%s %s: %d %s; want a 400 naming %s", tc.method, tc.path, code, raw, tc.names)
			}
		})
	}
}
