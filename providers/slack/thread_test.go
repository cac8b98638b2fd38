package slack

import (
	"errors"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakeslack"
)

// TestOpenThread: the message is posted once per key, however often it
// is asked for (a fire tried again after a crash finds it in the
// channel's history), and the origin names its thread; an installation of
// another provider is refused.
func TestOpenThread(t *testing.T) {
	r := newRig(t, fakeslack.Team{ID: "T0OPEN", Name: "Open"}, true)
	ctx := t.Context()
	in, err := r.store.FindInstallation(ctx, Name, r.team.ID)
	if err != nil {
		t.Fatal(err)
	}
	origin, tenant, err := r.p.OpenThread(ctx, in.ID, "C0OPS", "⏰ Scheduled: standup", "schedule:sch_1:100")
	if err != nil {
		t.Fatal(err)
	}
	again, _, err := r.p.OpenThread(ctx, in.ID, "C0OPS", "⏰ Scheduled: standup", "schedule:sch_1:100")
	if err != nil {
		t.Fatal(err)
	}
	msgs := r.fake.Channel("C0OPS")
	if len(msgs) != 1 || !strings.Contains(msgs[0].Text, "standup") || again != origin || tenant != "slack:"+r.team.ID ||
		origin.Key != sessionKey(r.team.ID, "C0OPS", msgs[0].TS) || origin.Provider != Name {
		t.Fatalf("%d messages; origin %+v, again %+v, tenant %q", len(msgs), origin, again, tenant)
	}
	if _, _, err := r.p.OpenThread(ctx, in.ID, "C0OPS", "⏰ Scheduled: standup", "schedule:sch_1:200"); err != nil {
		t.Fatal(err)
	}
	if n := len(r.fake.Channel("C0OPS")); n != 2 {
		t.Fatalf("another due time's post: %d messages, want 2", n)
	}
	other, err := r.store.SaveInstallation(ctx, &core.Installation{Provider: "linear", ExternalID: "org1"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.p.OpenThread(ctx, other.ID, "C0OPS", "x", "k"); !errors.Is(err, core.ErrInvalid) {
		t.Fatalf("a Linear installation: %v", err)
	}
}
