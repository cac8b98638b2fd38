package output_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/providers/output"
)

// TestSinkAnswersWhereTheTurnCameFrom: a Slack session linked to a pull
// request: the turn its Slack message started is rendered by the Slack
// sink at the thread, the turn a comment on the pull request started by
// the GitHub sink at the pull request, each sink skipping the other's.
func TestSinkAnswersWhereTheTurnCameFrom(t *testing.T) {
	const thread, pr = "slack:T1:C1:1.000100", "github:acme/app#7"
	st := openStore(t, t.TempDir())
	ctx := t.Context()
	slack, github := &recorder{}, &recorder{}
	for name, r := range map[string]*recorder{"slack": slack, "github": github} {
		sink := output.New(output.Config{Name: name, Store: st, Renderer: r, RetryMin: time.Millisecond})
		if err := sink.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer sink.Stop(context.Background())
	}
	input := func(text, from string) core.Event {
		e := core.NewInput(core.TypeUserMessage, []byte(`{"text":"`+text+`"}`))
		e.SourceKey = from
		return e
	}
	res, err := st.CreateSession(ctx, core.NewSession{Session: core.Session{Agent: core.AgentRef{ID: "agt_x", Version: 1},
		Origin: &core.Origin{Provider: "slack", Key: thread}}, ExternalKey: thread, Inputs: []core.Event{input("fix the bug", thread)}})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Session.ID
	if _, err := st.AddLink(ctx, id, core.LinkBody{Key: pr, By: core.LinkedByAgent}); err != nil { // seq 1
		t.Fatal(err)
	}
	turn(t, st, id) // seqs 2-7: its input is the thread's
	if _, err := st.QueueInputs(ctx, id, core.QueueRequest{Inputs: []core.Event{input("fix the nit", pr)}}); err != nil {
		t.Fatal(err)
	}
	turn(t, st, id) // seqs 8-13: its input is the pull request's
	wantSlack := []string{"1:session.link_added", "2:user.message", "3:session.status_changed", "4:turn.started", "5:agent.message", "6:turn.completed", "7:session.status_changed"}
	wantGitHub := []string{"8:user.message", "9:session.status_changed", "10:turn.started", "11:agent.message", "12:turn.completed", "13:session.status_changed"}
	waitUntil(t, "both turns rendered", func() bool { return len(slack.got()) == len(wantSlack) && len(github.got()) == len(wantGitHub) })
	if got := slack.got(); !slices.Equal(got, wantSlack) {
		t.Fatalf("Slack rendered %v", got)
	}
	if got := github.got(); !slices.Equal(got, wantGitHub) {
		t.Fatalf("GitHub rendered %v", got)
	}
	github.mu.Lock()
	keys := slices.Clone(github.keys)
	github.mu.Unlock()
	for _, k := range keys {
		if k[len(k)-len(pr):] != pr {
			t.Fatalf("GitHub rendered at %v, want %s", keys, pr)
		}
	}
	for _, sink := range []string{"slack", "github"} {
		waitUntil(t, sink+" lets go", func() bool {
			active, err := st.ActiveSinkSessions(ctx, sink)
			return err == nil && len(active) == 0
		})
		if pos, err := st.SinkPosition(ctx, sink, id); err != nil || pos.Seq != 13 {
			t.Fatalf("%s's position %+v (%v)", sink, pos, err)
		}
	}
}
