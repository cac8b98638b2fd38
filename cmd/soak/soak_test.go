package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/fixtures/fakegithub"
	"github.com/switchboardhq/switchboard/fixtures/fakelinear"
	"github.com/switchboardhq/switchboard/fixtures/fakeslack"
	"github.com/switchboardhq/switchboard/sessions/store/postgres/pgtest"
)

// TestSoakShort runs the chaos soak for a minute, SIGKILLs included. It is
// slow: -short leaves it out; scripts/soak runs the long one.
func TestSoakShort(t *testing.T) {
	if testing.Short() {
		t.Skip("the one-minute chaos soak is left out under -short")
	}
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"-duration", "60s", "-seed", "15", "-dir", t.TempDir()}, &out, &errOut)
	t.Logf("soak:\n%s", out.String())
	if code != 0 {
		t.Fatalf("soak exited %d:\n%s\n%s", code, out.String(), tail(errOut.String(), 4000))
	}
	if !strings.Contains(out.String(), "lost                  0\n") || !strings.Contains(out.String(), "doubled               0\n") {
		t.Fatalf("soak figures:\n%s", out.String())
	}
}

// TestSoakReplicasShort runs the chaos soak for a minute on two replicas
// sharing a PostgreSQL store: traffic goes to either, steering crosses
// them, and either is SIGKILLed. -short leaves it out; scripts/soak
// -replicas 2 runs the long one.
func TestSoakReplicasShort(t *testing.T) {
	if testing.Short() {
		t.Skip("the one-minute chaos soak on two replicas is left out under -short")
	}
	dsn := pgtest.DSN(t)
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"-duration", "60s", "-seed", "16", "-dir", t.TempDir(), "-replicas", "2", "-postgres", dsn}, &out, &errOut)
	t.Logf("soak:\n%s", out.String())
	if code != 0 {
		t.Fatalf("soak exited %d:\n%s\n%s", code, out.String(), tail(errOut.String(), 4000))
	}
	if !strings.Contains(out.String(), "lost                  0\n") || !strings.Contains(out.String(), "doubled               0\n") {
		t.Fatalf("soak figures:\n%s", out.String())
	}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

// TestCheckFindsViolations: the checks see a lost and a doubled input, an
// open turn, an answer posted twice or not at all, and deliveries out of
// order or missing.
func TestCheckFindsViolations(t *testing.T) {
	tb := &fixtureTB{TB: t, log: slog.Default()}
	t.Cleanup(tb.close)
	w := &world{tb: tb, slack: fakeslack.Start(t), github: fakegithub.Start(t), linear: fakelinear.New(t)}
	w.slack.AddTeam(fakeslack.Team{ID: "T0SOAK"})
	w.team, _ = w.slack.Team("T0SOAK")
	rc, err := newReceiver(hookSecret(), 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rc.srv.Close)
	w.rc = rc

	root := w.slack.Human(w.team.ID, slackChannel, "U0ALICE", "hi", "")
	// The bot's answer #1 is in the thread twice; #2 never made it.
	w.slack.Human(w.team.ID, slackChannel, w.team.BotUserID, answerText(1), root.TS)
	w.slack.Human(w.team.ID, slackChannel, w.team.BotUserID, answerText(1), root.TS)
	msg := func(seq uint64, typ, level, text string) eventView {
		b, _ := json.Marshal(map[string]string{"text": text})
		return eventView{Seq: seq, Type: typ, Level: level, Body: b}
	}
	slackSession := sessionView{ID: "ses_slack", Status: "idle"}
	slackSession.Origin = &struct {
		Provider string `json:"provider"`
		Key      string `json:"key"`
	}{"slack", "slack:T0SOAK:" + slackChannel + ":" + root.TS}
	s := &snapshot{
		sessions: []sessionView{slackSession, {ID: "ses_api", Status: "running"}},
		events: map[string][]eventView{
			"ses_slack": {msg(1, "user.message", "user", "look [in:slack-1]"), msg(2, "turn.started", "progress", ""),
				msg(3, "agent.message", "user", answerText(1)), msg(4, "agent.message", "user", answerText(2)), msg(5, "turn.completed", "progress", "")},
			"ses_api": {msg(1, "user.message", "user", "[in:api-3]"), msg(2, "turn.started", "progress", ""), msg(3, "user.message", "user", "[in:api-3]")},
		},
		pending: map[string]int{},
	}
	rc.got = map[string][]uint64{"ses_slack": {1, 3, 2, 4, 5}, "ses_api": {1, 2}}
	l := &ledger{accepted: map[string]string{"[in:slack-1]": "slack", "[in:api-2]": "api", "[in:api-3]": "api"}, slackRoots: []string{root.TS}}

	f := w.check(l, s)
	all := strings.Join(f.Violations, "\n")
	for _, want := range []string{
		"input [in:api-2] was acknowledged and is in no session",
		"input [in:api-3] is logged 2 times",
		"session ses_api: 1 turns started, 0 ended, status running",
		`answer "Soak answer #1." of ses_slack is on slack 2 times`,
		`answer "Soak answer #2." of ses_slack is not on slack`,
		"session ses_slack: seq 3 delivered before seq 2",
		"session ses_api: 2 of 3 events delivered",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no violation %q in:\n%s", want, all)
		}
	}
	if f.Lost != 3 || f.Doubled != 2 {
		t.Errorf("lost %d, doubled %d; want 3 and 2:\n%s", f.Lost, f.Doubled, all)
	}
}
