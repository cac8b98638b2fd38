package slack

import (
	"strings"
	"testing"
)

// FuzzDecode feeds the intake decoder arbitrary bodies (seeded from
// testdata/fuzz/FuzzDecode: every envelope and inner event the gateway
// handles). Decode must never panic; what it accepts must go through the
// trigger rules without panicking, and every session key the rules
// produce must parse back.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"type":"url_verification","challenge":"c"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		env, err := Decode(body)
		if err != nil {
			return
		}
		if env.Type == "url_verification" && env.Challenge == "" {
			t.Fatal("url_verification accepted without a challenge")
		}
		if env.Type != "event_callback" {
			return
		}
		if env.EventID == "" {
			t.Fatal("event_callback accepted without an event id")
		}
		for _, id := range []identity{{botUserID: "U0BOT", botID: "B0BOT"}, {allowBots: true}, {botUserID: env.botUserID()}} {
			d := decide(env, id)
			switch d.act {
			case actStart, actSteer, actInterrupt:
				team, channel, thread, err := parseKey(d.key)
				if err != nil || team != env.TeamID || channel != d.msg.Channel || thread == "" {
					t.Fatalf("key %q from %s: %v", d.key, body, err)
				}
				if len(d.dedupe) == 0 || !strings.HasPrefix(d.dedupe[0], "slack:event:") {
					t.Fatalf("no event dedupe key: %v", d.dedupe)
				}
				if d.act != actInterrupt && (d.text == "" || d.msg.TS == "") {
					t.Fatalf("input without text or ts: %+v", d)
				}
			}
		}
	})
}
