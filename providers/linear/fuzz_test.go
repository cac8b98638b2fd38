package linear

import (
	"strings"
	"testing"
)

// FuzzDecode feeds the intake decoder arbitrary bodies (seeded from
// testdata/fuzz/FuzzDecode: each webhook type the gateway handles, and
// some it ignores). Decode must never panic; what it accepts must hold
// the fields the intake relies on, its session key must parse back, and
// the first prompt and delegate checks must not panic either.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"type":"AgentSessionEvent","action":"created","organizationId":"o","webhookTimestamp":1,"agentSession":{"id":"a"}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := Decode(body)
		if err != nil {
			return
		}
		if p.Type == "" {
			t.Fatal("accepted without a type")
		}
		_, _ = p.delegateRemoved("app-user")
		if p.Type != typeAgentSessionEvent {
			return
		}
		if p.AgentSession == nil || p.AgentSession.ID == "" || p.OrganizationID == "" {
			t.Fatalf("agent session event accepted without its session or organization: %s", body)
		}
		if p.Action == actionPrompted && p.AgentActivity == nil {
			t.Fatal("prompted accepted without an activity")
		}
		k := key(p.OrganizationID, p.AgentSession.ID)
		org, as, err := parseKey(k)
		if strings.Contains(p.OrganizationID, ":") || strings.Contains(p.AgentSession.ID, ":") {
			return // ids Linear never sends (UUIDs); parseKey refuses them
		}
		if err != nil || org != p.OrganizationID || as != p.AgentSession.ID {
			t.Fatalf("key %q does not parse back: %v", k, err)
		}
		if p.Action == actionCreated && firstPrompt(p) == "" {
			t.Fatal("empty first prompt")
		}
	})
}
