package slack

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/slack-go/slack/socketmode"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakeslack"
)

// TestSocketEnvelopes: a Socket Mode envelope is handled as the events URL
// handles its body: a mention starts the thread's session, a Stop click
// interrupts it, a payload that does not decode is let go (acknowledged,
// nothing stored) rather than sent again forever.
func TestSocketEnvelopes(t *testing.T) {
	r := newRig(t, fakeslack.Team{ID: "T0SM", Name: "Socket"}, true)
	m := r.fake.Human("T0SM", "C1", "U1", "<@"+r.team.BotUserID+"> help", "")
	mention := &socketmode.Request{Type: socketmode.RequestTypeEventsAPI, EnvelopeID: "env-1",
		Payload: fakeslack.Event{Team: r.team, Inner: fakeslack.Mention(m)}.JSON()}
	if err := r.p.envelope(t.Context(), mention); err != nil {
		t.Fatal(err)
	}
	s, err := r.store.SessionByKey(t.Context(), sessionKey("T0SM", "C1", m.TS))
	if err != nil {
		t.Fatalf("the mention started no session: %v", err)
	}

	msg := fakeslack.Message{Channel: "C1", TS: "9.000100", ThreadTS: m.TS, Text: "Working", Blocks: json.RawMessage(`[]`)}
	click, _ := json.Marshal(fakeslack.BlockAction(r.team, "U1", msg, actionStop, actionValue{Session: s.ID}.String()))
	if err := r.p.envelope(t.Context(), &socketmode.Request{Type: socketmode.RequestTypeInteractive, EnvelopeID: "env-2", Payload: click}); err != nil {
		t.Fatal(err)
	}
	pending, _ := r.store.Pending(t.Context(), s.ID)
	if !slices.ContainsFunc(pending, func(e core.Event) bool { return e.Type == core.TypeUserInterrupt }) {
		t.Fatalf("the Stop click queued %v, want an interrupt", pending)
	}

	for _, bad := range []*socketmode.Request{
		{Type: socketmode.RequestTypeEventsAPI, EnvelopeID: "env-3", Payload: json.RawMessage(`{"type":"event_callback"}`)},
		{Type: socketmode.RequestTypeInteractive, EnvelopeID: "env-4", Payload: json.RawMessage(`"not an object"`)},
	} {
		if err := r.p.envelope(t.Context(), bad); err != nil {
			t.Errorf("envelope %s: %v, want it let go", bad.EnvelopeID, err)
		}
	}
}
