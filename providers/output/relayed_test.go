package output

import (
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// TestRelayed: a message sent from an editor renders as a note naming the
// person, at the message's place in the log; other events are left as
// they are.
func TestRelayed(t *testing.T) {
	msg := func(b core.MessageBody) core.Event {
		e := core.NewEvent(core.TypeUserMessage, core.LevelUser, core.ActorHuman, b)
		e.ID, e.Seq, e.TurnID = "evt_1", 7, "turn_1"
		return e
	}
	long := strings.Repeat("é", 400)
	for _, tc := range []struct {
		name string
		in   core.Event
		note string // "" : the event is left as it is
	}{
		{"from an editor", msg(core.MessageBody{Text: "please add tests\nfor the parser", Via: core.ViaEditor, By: "Ada Lovelace", AttachToken: "atk_1"}),
			"Ada Lovelace continued this session from their editor:\n\n> please add tests\n> for the parser"},
		{"long", msg(core.MessageBody{Text: long, Via: core.ViaEditor, By: "Ada"}), "Ada continued this session from their editor:\n\n> " + long[:500] + "…"},
		{"mentions", msg(core.MessageBody{Text: "<!channel> <!here> <@U0ALICE> <!subteam^S1> cc @octo-org/core @bob", Via: core.ViaEditor, By: "@ada <!here>"}),
			"@\u2060ada <\u2060!here> continued this session from their editor:\n\n> <\u2060!channel> <\u2060!here> <\u2060@\u2060U0ALICE> <\u2060!subteam^S1> cc @\u2060octo-org/core @\u2060bob"},
		{"from the api", msg(core.MessageBody{Text: "hello"}), ""},
		{"no person", msg(core.MessageBody{Text: "hello", Via: core.ViaEditor}), ""},
		{"an agent message", core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorAgent, core.MessageBody{Text: "hi", Via: core.ViaEditor, By: "Ada"}), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := relayed(tc.in)
			if tc.note == "" {
				if got.Type != tc.in.Type || string(got.Body) != string(tc.in.Body) {
					t.Fatalf("changed to %+v", got)
				}
				return
			}
			var b core.MessageBody
			if got.Type != core.TypeAgentMessage || got.Level != core.LevelUser || got.Decode(&b) != nil || b.Kind != core.MessageKindNote ||
				b.Text != tc.note || got.Seq != 7 || got.ID != "evt_1" || got.TurnID != "turn_1" {
				t.Fatalf("rendered %+v %q, want the note %q", got, b.Text, tc.note)
			}
		})
	}
}
