package main_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/fixtures/fakeslack"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// TestCLIAttachTokens: session attach-token create shows the token once
// with the command line for an editor; the token reads and steers its
// own session only; list shows no secret; revoke ends its access with a
// clear error.
func TestCLIAttachTokens(t *testing.T) {
	_, hs := modelserver.Start(t)
	srv := startServer(t, t.TempDir(), modelEnv(hs.URL, modelserver.FormatAnthropic))
	sb := newCLI(t, "SWITCHBOARD_URL="+srv.url, "SWITCHBOARD_TOKEN="+adminToken)
	sb.ok("", "agent", "create", "--name", "helper", "--model", "anthropic/claude-test")
	id := field(t, sb.ok("", "session", "create", "--agent", "helper"), "id")
	other := field(t, sb.ok("", "session", "create", "--agent", "helper"), "id")
	if _, errOut, code := sb.run("", "session", "attach-token", "create", id); code != 2 || !strings.Contains(errOut, "--person is required") {
		t.Fatalf("attach-token create without --person: exit %d, %s", code, errOut)
	}

	out := sb.ok("", "session", "attach-token", "create", id, "--person", "Ada Lovelace")
	token := strings.TrimSuffix(field(t, out, "token"), "  (shown once)")
	tokenID := field(t, out, "id")
	if !strings.HasPrefix(token, "sba_"+id+"_") || field(t, out, "editor") != "SWITCHBOARD_TOKEN="+token+" switchboard acp --url "+srv.url {
		t.Fatalf("attach-token create printed:\n%s", out)
	}
	var list page[struct {
		ID, Person, Token string
		RevokedAt         *string `json:"revoked_at"`
	}]
	sb.okJSON(&list, "session", "attach-token", "list", id, "--json")
	if len(list.Data) != 1 || list.Data[0].ID != tokenID || list.Data[0].Person != "Ada Lovelace" || list.Data[0].Token != "" || list.Data[0].RevokedAt != nil {
		t.Fatalf("attach-token list: %+v", list)
	}

	ada := newCLI(t, "SWITCHBOARD_URL="+srv.url, "SWITCHBOARD_TOKEN="+token)
	if st := ada.ok("", "session", "status", id); !strings.Contains(st, id) {
		t.Fatalf("status with the attach token:\n%s", st)
	}
	ada.ok("", "session", "send", id, "continue from my editor")
	ada.fails("may only read and steer its own session", "session", "status", other)
	ada.fails("may only read and steer its own session", "session", "list")
	srv.waitFor(id, "the message signed by Ada", func(_ sessionState, evs []event) bool {
		for _, e := range evs {
			if e.Type == "user.message" && strings.Contains(string(e.Body), `"by":"Ada Lovelace"`) && strings.Contains(string(e.Body), `"via":"editor"`) {
				return true
			}
		}
		return false
	})

	out = sb.ok("", "session", "attach-token", "revoke", id, tokenID)
	if field(t, out, "revoked_at") == "" {
		t.Fatalf("attach-token revoke printed:\n%s", out)
	}
	ada.fails("attach token "+tokenID+" was revoked", "session", "status", id)
	sb.okJSON(&list, "session", "attach-token", "list", id, "--json")
	if len(list.Data) != 1 || list.Data[0].RevokedAt == nil {
		t.Fatalf("attach-token list after the revoke: %+v", list)
	}
}

// TestSlackEditorCommand: "@app editor" in a session's thread is answered
// to the asker alone (chat.postEphemeral) with an attach token naming
// them and the command line for their editor; a message sent with that
// token is told in the thread as theirs, and answered there once.
func TestSlackEditorCommand(t *testing.T) {
	w := startSlack(t, fakeslack.Team{ID: "T0ED1", Name: "Acme"}, nil)
	w.fake.AddUser(fakeslack.User{ID: "U0ALICE", TeamID: w.team.ID, Name: "alice", RealName: "Alice Smith"})
	w.ms.Push(modelserver.Step{Text: "Started on it."}, modelserver.Step{Text: "Parser tests added."})
	root := w.fake.Human(w.team.ID, "C0ENG", "U0BOB", "<@"+w.team.BotUserID+"> fix the parser", "")
	if code, _ := w.event(fakeslack.Mention(root)); code != 200 {
		t.Fatalf("mention: %d", code)
	}
	w.waitReply(w.team, root.Channel, root.TS, "Started on it")
	id := w.session(w.team.ID, root.Channel, root.TS)
	w.srv.waitIdle(id)

	// A guest from another workspace (the channel is shared with it) may
	// read the thread, but gets no token for this workspace's session.
	w.fake.AddUser(fakeslack.User{ID: "U0GUEST", TeamID: "T0OTHER", Name: "guest", RealName: "Gus Guest"})
	guestAsk := fakeslack.Mention(w.fake.Human(w.team.ID, "C0ENG", "U0GUEST", "<@"+w.team.BotUserID+"> editor", root.TS))
	guestAsk["user_team"], guestAsk["source_team"] = "T0OTHER", "T0OTHER"
	if code, _ := w.event(guestAsk); code != 200 {
		t.Fatalf("editor mention of a guest: %d", code)
	}
	w.fake.WaitFor(t, patience, "the guest's private answer", func() bool { return len(w.fake.Calls("chat.postEphemeral")) > 0 })
	if calls := w.fake.Calls("chat.postEphemeral"); len(calls) != 1 || calls[0].Str("user") != "U0GUEST" ||
		strings.Contains(calls[0].Str("text"), "sba_") || !strings.Contains(calls[0].Str("text"), "Only members of this workspace") {
		t.Fatalf("the answer to a guest: %+v", calls)
	}
	if tokens := attachTokens(t, w.srv, id); len(tokens) != 0 {
		t.Fatalf("a guest got attach tokens: %v", tokens)
	}

	// Slack sends the mention as an app_mention and as a message, and
	// sends the app_mention again when unsure it was received: one token.
	ask := w.fake.Human(w.team.ID, "C0ENG", "U0ALICE", "<@"+w.team.BotUserID+"> editor", root.TS)
	mention := fakeslack.Event{Team: w.team, EventID: "Ev0EDITOR01", Inner: fakeslack.Mention(ask)}.JSON()
	for i, body := range [][]byte{mention, fakeslack.Event{Team: w.team, Inner: fakeslack.MessageEvent(ask, "channel")}.JSON(), mention} {
		req := fakeslack.SignedRequest(w.srv.url+"/webhooks/slack", slackSecret, time.Now(), "application/json", body)
		if i == 2 {
			req.Header.Set("X-Slack-Retry-Num", "1")
			req.Header.Set("X-Slack-Retry-Reason", "http_timeout")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("editor delivery %d: %d", i, resp.StatusCode)
		}
	}
	if tokens := attachTokens(t, w.srv, id); len(tokens) != 1 {
		t.Fatalf("the editor command delivered three times made tokens %v", tokens)
	}
	w.fake.WaitFor(t, patience, "the private answer", func() bool { return len(w.fake.Calls("chat.postEphemeral")) > 1 })
	calls := w.fake.Calls("chat.postEphemeral")[1:]
	text := calls[0].Str("text")
	token := regexp.MustCompile(`sba_[a-z0-9_]+`).FindString(text)
	if len(calls) != 1 || calls[0].Str("user") != "U0ALICE" || calls[0].Str("thread_ts") != root.TS || token == "" ||
		!strings.Contains(text, "switchboard acp --url "+w.srv.url) || !strings.Contains(text, "alice") {
		t.Fatalf("the editor command's answer: %+v", calls)
	}
	for _, m := range w.fake.Thread(root.Channel, root.TS) {
		if strings.Contains(m.Text, "sba_") {
			t.Fatalf("a token was posted in the thread: %q", m.Text)
		}
	}
	if n := count(w.srv.events(id), "turn.started"); n != 1 {
		t.Fatalf("the editor command ran a turn (%d turns)", n)
	}

	code, raw := doReq(t, "POST", w.srv.url+"/v1/sessions/"+id+"/events", token,
		map[string]any{"events": []any{map[string]any{"type": "user.message", "text": "now add tests for the parser"}}})
	if code != 202 {
		t.Fatalf("a message with the attach token: %d %s", code, raw)
	}
	w.waitReply(w.team, root.Channel, root.TS, "Parser tests added")
	note := w.waitReply(w.team, root.Channel, root.TS, "continued this session from their editor")
	if !strings.Contains(note.Text, "alice") || !strings.Contains(note.Text, "now add tests for the parser") {
		t.Fatalf("the thread was told %q", note.Text)
	}
	if n := len(w.botReplies(w.team, root.Channel, root.TS, "Parser tests added")); n != 1 {
		t.Fatalf("the editor's answer was posted %d times", n)
	}
	if code, raw := doReq(t, "GET", w.srv.url+"/v1/sessions", token, nil); code != 403 {
		t.Fatalf("the attach token listed sessions: %d %s", code, raw)
	}
	// Every delivery was answered before its 200; a second private
	// answer would have been posted long before the reply above.
	if calls := w.fake.Calls("chat.postEphemeral"); len(calls) != 2 {
		t.Fatalf("private answers: %+v; want the guest's and one to alice", calls)
	}
}

// attachTokens lists the ids of a session's attach tokens, revoked ones
// included.
func attachTokens(t *testing.T, srv *server, id string) []string {
	t.Helper()
	code, raw := doReq(t, "GET", srv.url+"/v1/sessions/"+id+"/attach_tokens", adminToken, nil)
	var list page[struct{ ID string }]
	if err := json.Unmarshal(raw, &list); code != 200 || err != nil {
		t.Fatalf("list attach tokens: %d %s %v", code, raw, err)
	}
	ids := make([]string, 0, len(list.Data))
	for _, a := range list.Data {
		ids = append(ids, a.ID)
	}
	return ids
}
