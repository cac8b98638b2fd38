package runtime_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakemodel"
	"github.com/switchboardhq/switchboard/sessions/engine/harness"
	"github.com/switchboardhq/switchboard/sessions/engine/runtime"
	"github.com/switchboardhq/switchboard/sessions/store/bolt"
)

// parkedHarness stands for a runtime whose turn waits on something
// outside the log: it reports each Run and waits for a wake on the
// cycle's Inputs before it takes what is pending.
type parkedHarness struct {
	runs  chan *harness.Cycle
	woken chan struct{}
}

func (p *parkedHarness) Run(ctx context.Context, c *harness.Cycle) (harness.Outcome, error) {
	p.runs <- c
	select {
	case <-c.Inputs:
		p.woken <- struct{}{}
	case <-ctx.Done():
		return harness.Outcome{}, nil
	}
	_, err := c.Log.Append(ctx, c.SessionID, core.AppendRequest{Epoch: c.Epoch, TakeInputs: true})
	return harness.Outcome{}, err
}

// acpStore opens a fresh store with one agent whose runtime is acp.
func acpStore(t *testing.T) (*bolt.Store, *core.Agent) {
	t.Helper()
	st, err := bolt.Open(filepath.Join(t.TempDir(), "db"), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	a, err := st.CreateAgent(context.Background(), &core.Agent{Name: "coder", Runtime: core.AgentRuntime{Kind: core.RuntimeACP, Command: []string{"goose", "acp"}}})
	if err != nil {
		t.Fatal(err)
	}
	return st, a
}

func TestRuntimePicksTheAgentsHarness(t *testing.T) {
	st, acp := acpStore(t)
	ctx := context.Background()
	ph := &parkedHarness{runs: make(chan *harness.Cycle, 4), woken: make(chan struct{}, 4)}
	model := fakemodel.New() // the built-in loop must not run: no step is scripted
	rt := runtime.New(runtime.Config{Store: st, Model: model, Workers: 2, Runtimes: map[string]harness.Harness{core.RuntimeACP: ph}})
	if err := rt.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Stop(ctx) })

	res, err := st.CreateSession(ctx, core.NewSession{Session: core.Session{Agent: core.AgentRef{ID: acp.ID, Version: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Session.ID
	f := &fixture{store: st, rt: rt}
	f.send(t, id, core.TypeUserMessage, "first")
	var c *harness.Cycle
	select {
	case c = <-ph.runs:
	case <-time.After(time.Minute):
		t.Fatal("the acp agent's session never ran on the acp harness")
	}
	if c.Agent.Runtime.Kind != core.RuntimeACP || c.SessionID != id {
		t.Fatalf("cycle for %s with runtime %+v", c.SessionID, c.Agent.Runtime)
	}
	// A message queued while the harness waits reaches it as a wake.
	f.send(t, id, core.TypeUserMessage, "second")
	select {
	case <-ph.woken:
	case <-time.After(time.Minute):
		t.Fatal("a message queued mid-cycle never reached the cycle's Inputs")
	}
	if n := len(model.Requests()); n != 0 {
		t.Fatalf("the built-in loop called the model %d times for an acp agent", n)
	}
}

func TestRuntimeRefusesAnUnavailableRuntime(t *testing.T) {
	st, acp := acpStore(t)
	ctx := context.Background()
	model := fakemodel.New()
	rt := runtime.New(runtime.Config{Store: st, Model: model, Workers: 1, RetryAfter: time.Hour})
	if err := rt.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Stop(ctx) })
	res, err := st.CreateSession(ctx, core.NewSession{Session: core.Session{Agent: core.AgentRef{ID: acp.ID, Version: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{store: st, rt: rt}
	f.send(t, res.Session.ID, core.TypeUserMessage, "hello")
	// The cycle fails and backs off; the input stays queued, and the
	// built-in loop never stands in for the missing runtime.
	deadline := time.Now().Add(time.Minute)
	for {
		if next, ok, _ := st.NextWake(ctx); ok && next.After(time.Now().Add(30*time.Minute)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the session's wake never moved to its retry")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if p, _ := st.Pending(ctx, res.Session.ID); len(p) != 1 {
		t.Fatalf("%d inputs pending, want the message kept", len(p))
	}
	if n := len(model.Requests()); n != 0 {
		t.Fatalf("the built-in loop ran an acp agent (%d model calls)", n)
	}
}
