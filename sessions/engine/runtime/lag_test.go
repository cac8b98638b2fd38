package runtime_test

import (
	"context"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakemodel"
	"github.com/switchboardhq/switchboard/sessions/engine/runtime"
)

// TestLagFindsInterrupt: an interrupt queued for a turn running here
// whose change never reached this runtime (another replica queued it
// while this one's notifications were cut) stops the turn once the
// commit stream tells the runtime it lagged.
func TestLagFindsInterrupt(t *testing.T) {
	for _, kind := range sharedStores {
		t.Run(kind.name, func(t *testing.T) {
			here, other := kind.open(t)
			ctx := context.Background()
			agent, err := here.CreateAgent(ctx, &core.Agent{Name: "a", Model: "anthropic/test"})
			if err != nil {
				t.Fatal(err)
			}
			hung := make(chan struct{})
			model := fakemodel.New(fakemodel.Step{Hang: true, Before: func(core.ModelRequest) { close(hung) }})
			// The runtime's stream carries nothing of the store's: every
			// change is missed, as in a lag.
			commits := core.NewCommits()
			rt := runtime.New(runtime.Config{Store: here, Commits: commits, Model: model, Workers: 2,
				Limits: core.Limits{MaxSteps: 10, TurnSeconds: 600, MaxTokens: 1e6}})
			if err := rt.Start(ctx); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = rt.Stop(context.Background()) })
			res, err := here.CreateSession(ctx, core.NewSession{Session: core.Session{Agent: core.AgentRef{ID: agent.ID, Version: 1}},
				Inputs: []core.Event{core.NewInput(core.TypeUserMessage, []byte(`{"text":"long"}`))}})
			if err != nil {
				t.Fatal(err)
			}
			id := res.Session.ID
			rt.Wake(id)
			select {
			case <-hung:
			case <-time.After(time.Minute):
				t.Fatal("the turn never called the model")
			}
			if _, err := other.QueueInputs(ctx, id, core.QueueRequest{Inputs: []core.Event{core.NewInput(core.TypeUserInterrupt, nil)}}); err != nil {
				t.Fatal(err)
			}
			commits.LagAll()
			deadline := time.Now().Add(time.Minute)
			for {
				s, err := here.GetSession(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				if s.TurnID == "" && s.Status == core.StatusIdle {
					if s.StopReason != core.ReasonCanceled {
						t.Fatalf("turn ended %s, want %s", s.StopReason, core.ReasonCanceled)
					}
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the turn was never interrupted: status %s, turn %q", s.Status, s.TurnID)
				}
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
}
