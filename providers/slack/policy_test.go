package slack

import (
	"errors"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakeslack"
)

// TestIntakeAccessPolicy: with an access policy on the installation, a
// mention outside its channels or from someone outside its users starts
// nothing; the person is told once, in a message only they see.
func TestIntakeAccessPolicy(t *testing.T) {
	r := newRig(t, fakeslack.Team{ID: "T0PO", Name: "Policy"}, true)
	in, err := r.store.FindInstallation(t.Context(), Name, "T0PO")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.store.UpdateInstallation(t.Context(), in.ID, func(in *core.Installation) error {
		in.Policy = core.AccessPolicy{Channels: []string{"C0OK"}, Users: []string{"U1"}}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	started := func(m fakeslack.Message) bool {
		t.Helper()
		_, err := r.store.SessionByKey(t.Context(), "slack:T0PO:"+m.Channel+":"+m.TS)
		if err != nil && !errors.Is(err, core.ErrNotFound) {
			t.Fatal(err)
		}
		return err == nil
	}
	mention := func(channel, user string) fakeslack.Message {
		t.Helper()
		m := r.fake.Human("T0PO", channel, user, "<@"+r.team.BotUserID+"> hello", "")
		if code := r.event(fakeslack.Mention(m)); code != 200 {
			t.Fatalf("status %d", code)
		}
		return m
	}
	for _, tc := range []struct {
		channel, user string
		starts        bool
	}{
		{"C0NO", "U1", false}, // a channel outside the policy
		{"C0OK", "U2", false}, // a user outside it
		{"C0OK", "U1", true},
		{"C0NO", "U2", false}, // told once already
	} {
		if got := started(mention(tc.channel, tc.user)); got != tc.starts {
			t.Fatalf("mention in %s by %s: started %v, want %v", tc.channel, tc.user, got, tc.starts)
		}
	}
	// The refusals are told after the answer, in the background: stopping
	// the provider waits for them.
	if err := r.p.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := len(r.fake.Calls("chat.postEphemeral")); n != 2 {
		t.Fatalf("%d refusals told, want one per refused person (2)", n)
	}
}
