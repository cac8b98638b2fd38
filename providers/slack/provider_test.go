package slack

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakeslack"
)

// TestIntakeStoresBeforeAnswering: the 200 comes after the session and
// input are stored and the runtime is woken, and before any Slack call.
func TestIntakeStoresBeforeAnswering(t *testing.T) {
	r := newRig(t, fakeslack.Team{ID: "T0IN", Name: "In"}, true)
	before := len(r.fake.Calls(""))
	m := r.fake.Human("T0IN", "C0IN", "U1", "<@"+r.team.BotUserID+"> hello", "")
	if code := r.event(fakeslack.Mention(m)); code != 200 {
		t.Fatalf("status %d", code)
	}
	if n := len(r.fake.Calls("")); n != before {
		t.Fatalf("%d slack calls before the answer", n-before)
	}
	s, err := r.store.SessionByKey(t.Context(), "slack:T0IN:C0IN:"+m.TS)
	if err != nil {
		t.Fatal(err)
	}
	pending, _ := r.store.Pending(t.Context(), s.ID)
	if len(pending) != 1 || s.Origin.TenantID != "T0IN" || s.Tenant != "slack:T0IN" || !strings.HasPrefix(s.Origin.URL, "https://t0in.slack.com/archives/C0IN/p") || s.Agent.ID != r.agent.ID {
		t.Fatalf("session %+v, pending %d", s, len(pending))
	}
	var body inputBody
	if err := pending[0].Decode(&body); err != nil || body.Slack == nil || body.Slack.TS != m.TS || body.Text != "<@U1>: hello" {
		t.Fatalf("input %s", pending[0].Body)
	}
	if w := r.rt.Woken(); len(w) != 1 || w[0] != s.ID {
		t.Fatalf("woken %v", w)
	}
}

func TestIntakeWithoutAnAgentTellsTheThread(t *testing.T) {
	r := newRig(t, fakeslack.Team{ID: "T0NA", Name: "NoAgent"}, false)
	m := r.fake.Human("T0NA", "C0NA", "U1", "<@"+r.team.BotUserID+"> hello", "")
	if code := r.event(fakeslack.Mention(m)); code != 200 {
		t.Fatalf("status %d", code)
	}
	if _, err := r.store.SessionByKey(t.Context(), "slack:T0NA:C0NA:"+m.TS); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("a session without an agent: %v", err)
	}
	r.fake.WaitFor(t, 5*time.Second, "the note", func() bool { return len(r.fake.Thread("C0NA", m.TS)) == 2 })
	if got := r.fake.Thread("C0NA", m.TS)[1].Text; !strings.Contains(got, "no agent is configured") {
		t.Fatalf("note %q", got)
	}
}

func TestIntakeIgnoresOtherTeamsInSingleWorkspaceMode(t *testing.T) {
	r := newRig(t, fakeslack.Team{ID: "T0ME", Name: "Me"}, true)
	other := fakeslack.Team{ID: "T0OTHER", BotUserID: "U0X", AppID: "A0"}
	m := fakeslack.Message{Team: "T0OTHER", Channel: "C1", TS: "1.000100", User: "U1", Text: "<@U0X> hi"}
	code := r.send("/webhooks/slack", "application/json", fakeslack.Event{Team: other, Inner: fakeslack.Mention(m)}.JSON())
	if code != 200 {
		t.Fatalf("status %d", code)
	}
	if _, err := r.store.SessionByKey(t.Context(), "slack:T0OTHER:C1:1.000100"); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("another team's event started a session: %v", err)
	}
}

func TestIntakeRejectsMalformedBodies(t *testing.T) {
	r := newRig(t, fakeslack.Team{ID: "T0MB", Name: "Malformed"}, true)
	for _, body := range []string{`{"type":"event_callback",`, `{"type":"event_callback","team_id":"T0MB"}`} {
		if code := r.send("/webhooks/slack", "application/json", []byte(body)); code != 400 {
			t.Fatalf("%s: %d", body, code)
		}
	}
	big := []byte(`{"type":"url_verification","challenge":"` + strings.Repeat("x", 2<<20) + `"}`)
	if code := r.send("/webhooks/slack", "application/json", big); code != 413 {
		t.Fatalf("oversized: %d", code)
	}
	if code := r.send("/webhooks/slack/interactivity", "application/x-www-form-urlencoded", []byte("payload=%7B")); code != 400 {
		t.Fatalf("bad interactivity payload: %d", code)
	}
}

// TestButtonOfAnotherWorkspaceIsIgnored: a button value naming a session
// of another tenant queues nothing.
func TestButtonOfAnotherWorkspaceIsIgnored(t *testing.T) {
	r := newRig(t, fakeslack.Team{ID: "T0BT", Name: "Buttons"}, true)
	res, err := r.store.CreateSession(t.Context(), core.NewSession{Session: core.Session{Agent: core.AgentRef{ID: r.agent.ID, Version: 1},
		Origin: &core.Origin{Provider: Name, Key: "slack:T0ELSE:C1:1.1", TenantID: "T0ELSE"}}})
	if err != nil {
		t.Fatal(err)
	}
	msg := fakeslack.Message{Channel: "C1", TS: "2.000200", ThreadTS: "1.1", Text: "Working", Blocks: json.RawMessage(`[]`)}
	payload := fakeslack.BlockAction(r.team, "U1", msg, actionStop, actionValue{Session: res.Session.ID}.String())
	if code := r.send("/webhooks/slack/interactivity", "application/x-www-form-urlencoded", fakeslack.InteractionBody(payload)); code != 200 {
		t.Fatalf("status %d", code)
	}
	if pending, _ := r.store.Pending(t.Context(), res.Session.ID); len(pending) != 0 || len(r.rt.Stopped()) != 0 {
		t.Fatalf("queued %d, interrupted %v", len(pending), r.rt.Stopped())
	}
}

// TestIntakeUsesTheBoundAgent: an installation bound to an agent starts
// its new sessions on it instead of the agent named default.
func TestIntakeUsesTheBoundAgent(t *testing.T) {
	r := newRig(t, fakeslack.Team{ID: "T0BA", Name: "Bound"}, true)
	other, err := r.store.CreateAgent(t.Context(), &core.Agent{Name: "reviewer", Model: "anthropic/x"})
	if err != nil {
		t.Fatal(err)
	}
	in, _ := r.store.FindInstallation(t.Context(), Name, "T0BA")
	if _, err := r.store.UpdateInstallation(t.Context(), in.ID, func(in *core.Installation) error { in.Agent = other.ID; return nil }); err != nil {
		t.Fatal(err)
	}
	m := r.fake.Human("T0BA", "C0BA", "U1", "<@"+r.team.BotUserID+"> review", "")
	if code := r.event(fakeslack.Mention(m)); code != 200 {
		t.Fatalf("status %d", code)
	}
	s, err := r.store.SessionByKey(t.Context(), "slack:T0BA:C0BA:"+m.TS)
	if err != nil || s.Agent.ID != other.ID {
		t.Fatalf("session %+v, %v", s, err)
	}
}
