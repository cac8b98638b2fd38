package main_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/fixtures/fakeslack"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
	"github.com/switchboardhq/switchboard/sessions/store/postgres/pgtest"
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

// TestSlackSocketModeReplicas: two replicas on one database each open one
// Socket Mode connection; Slack spreads the envelopes over both. Each
// mention is answered once, whichever replica received it, and an event
// sent again on the other connection appends nothing.
func TestSlackSocketModeReplicas(t *testing.T) {
	r := newPlatforms(t)
	dsn := pgtest.DSN(t)
	app := r.slack.AppToken()
	for i := range r.srv {
		env := r.env(i)
		delete(env, "SLACK_SIGNING_SECRET")
		env["SLACK_APP_TOKEN"] = app
		env["SWITCHBOARD_STORE"] = dsn
		env["SWITCHBOARD_MASTER_KEY"] = replicaMasterKey
		env["SWITCHBOARD_LEASE_SECONDS"] = strconv.Itoa(replicaLeaseSeconds)
		r.srv[i] = startServer(t, t.TempDir(), env)
	}
	r.slack.WaitFor(t, patience, "a connection per replica", func() bool { return r.slack.SocketOpen() == 2 })

	const mentions = 4
	for range mentions {
		r.ms.Push(modelserver.Step{Text: "Answered over a socket."})
	}
	var sent []fakeslack.Message
	var first string
	for i := range mentions {
		m := r.slack.Human(r.team.ID, "C0SOCKR", "U0ALICE", "<@"+r.team.BotUserID+"> question "+strconv.Itoa(i), "")
		env := r.slack.SocketEvent(fakeslack.Event{Team: r.team, Inner: fakeslack.Mention(m)})
		if i == 0 {
			first = env
		}
		sent = append(sent, m)
	}
	// The next envelope goes to the other connection than the first.
	again := r.slack.Redeliver(first)
	r.slack.WaitFor(t, patience, "every envelope acknowledged", func() bool { return r.slack.Acked(again) && len(r.slack.SocketAcks()) >= mentions+1 })
	conns := map[int]bool{}
	for _, a := range r.slack.SocketAcks() {
		conns[a.Conn] = true
	}
	if len(conns) != 2 {
		t.Errorf("acknowledgements came on connections %v, want both replicas'", conns)
	}
	for _, m := range sent {
		if n := r.settledAnswers("C0SOCKR", m.TS, "Answered over a socket."); n != 1 {
			t.Errorf("mention %q answered %d times, want once", m.Text, n)
		}
	}
	id := r.slackOn(0).session(r.team.ID, "C0SOCKR", sent[0].TS)
	if _, evs := r.srv[0].waitIdle(id); count(evs, "user.message") != 1 {
		t.Errorf("the mention sent twice is %d user messages, want 1: %v", count(evs, "user.message"), types(evs))
	}
	if n := len(r.ms.Requests()); n != mentions {
		t.Errorf("%d model requests, want %d", n, mentions)
	}
}
