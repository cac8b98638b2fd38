package main_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/fixtures/fakeslack"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// TestSlackSocketMode is acceptance 2 of Socket Mode: with an app-level
// token and no signing secret the gateway takes Slack's events over the
// WebSocket it opens. A mention is answered once, its envelope
// acknowledged before the answer (the model is held until the ack); the
// same event in a new envelope appends nothing; after the connection
// drops, the gateway reconnects and the event sent meanwhile is answered.
func TestSlackSocketMode(t *testing.T) {
	ms, hs := modelserver.Start(t)
	fake := fakeslack.Start(t)
	bot := fake.AddTeam(fakeslack.Team{ID: "T0SOCK", Name: "Sockets"})
	env := modelEnv(hs.URL, modelserver.FormatAnthropic)
	env["SLACK_BOT_TOKEN"], env["SLACK_API_URL"], env["SLACK_APP_TOKEN"] = bot, fake.APIURL(), fake.AppToken()
	env["SLACK_PROGRESS_MS"] = "1"
	w := &slackWorld{t: t, ms: ms, fake: fake, env: env, srv: startServer(t, t.TempDir(), env)}
	w.team = w.teamByID("T0SOCK")
	fake.WaitFor(t, patience, "the socket", func() bool { return fake.SocketOpen() == 1 })

	// Without a signing secret nothing is taken at the events URL.
	resp, err := http.Post(w.srv.url+"/webhooks/slack", "application/json", strings.NewReader(`{"type":"url_verification","challenge":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("the events URL answered %d without a signing secret", resp.StatusCode)
	}

	ms.Push(modelserver.Step{Text: "Hello over the socket."})
	release := holdAnswer(t, ms)
	m := fake.Human("T0SOCK", "C0SOCK", "U0ALICE", "<@"+w.team.BotUserID+"> hello?", "")
	ev := fakeslack.Event{Team: w.team, EventID: "Ev0SOCKET01", Inner: fakeslack.Mention(m)}
	first := fake.SocketEvent(ev)
	fake.WaitFor(t, patience, "the envelope's ack", func() bool { return fake.Acked(first) })
	for _, a := range fake.SocketAcks() {
		t.Logf("envelope %s acknowledged %v after it was sent", a.EnvelopeID, a.After)
	}
	release()
	w.waitReply(w.team, "C0SOCK", m.TS, "Hello over the socket.")
	id := w.session("T0SOCK", "C0SOCK", m.TS)

	again := fake.Redeliver(first)
	fake.WaitFor(t, patience, "the redelivery's ack", func() bool { return fake.Acked(again) })
	_, evs := w.srv.waitIdle(id)
	if n := count(evs, "user.message"); n != 1 {
		t.Fatalf("%d user messages after a redelivered envelope, want 1: %v", n, types(evs))
	}

	// The connection drops; a mention sent meanwhile arrives once it is
	// open again.
	fake.DropSockets()
	ms.Push(modelserver.Step{Text: "Back again."})
	m2 := fake.Human("T0SOCK", "C0SOCK", "U0BOB", "<@"+w.team.BotUserID+"> still there?", "")
	fake.SocketEvent(fakeslack.Event{Team: w.team, Inner: fakeslack.Mention(m2)})
	w.waitReply(w.team, "C0SOCK", m2.TS, "Back again.")
	if n := fake.SocketOpened(); n < 2 {
		t.Fatalf("%d connections opened, want a second after the drop", n)
	}
	if n := len(ms.Requests()); n != 2 {
		t.Fatalf("%d model requests, want 2", n)
	}
}
