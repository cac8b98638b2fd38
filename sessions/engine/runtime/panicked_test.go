package runtime_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/toolset"
	"github.com/switchboardhq/switchboard/fixtures/fakemodel"
	"github.com/switchboardhq/switchboard/fixtures/panictest"
	"github.com/switchboardhq/switchboard/sessions/engine/harness"
	"github.com/switchboardhq/switchboard/sessions/engine/runtime"
)

// panicHarness opens a turn, then panics: a runtime with a bug. It keeps
// the sessions it was told to Reset.
type panicHarness struct {
	mu    sync.Mutex
	reset []string
}

func (p *panicHarness) Run(ctx context.Context, c *harness.Cycle) (harness.Outcome, error) {
	if _, _, err := harness.OpenTurn(ctx, c); err != nil {
		return harness.Outcome{}, err
	}
	panic("acp harness bug")
}

func (p *panicHarness) Reset(_ context.Context, id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reset = append(p.reset, id)
}

func (p *panicHarness) wasReset(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range p.reset {
		if r == id {
			return true
		}
	}
	return false
}

// TestPanicEndsOnlyItsSessionsTurn: a panic in one session's cycle (the
// model's client, another runtime's harness, the builder of its tools)
// ends that session's turn with a retryable internal error, logged once
// with its stack, while another session's turn, in flight at the time,
// completes on the same runtime.
func TestPanicEndsOnlyItsSessionsTurn(t *testing.T) {
	for _, tt := range []struct {
		name string
		// panicky names the agent of the session that panics, and sets
		// up what panics.
		panicky func(t *testing.T, f *fixture, cfg *runtime.Config, ph *panicHarness) *core.Agent
	}{
		{"the model's client", func(t *testing.T, f *fixture, cfg *runtime.Config, _ *panicHarness) *core.Agent {
			f.model.Push(fakemodel.Step{Before: func(core.ModelRequest) { panic("model client bug") }})
			return f.agent
		}},
		{"another runtime's harness", func(t *testing.T, f *fixture, cfg *runtime.Config, ph *panicHarness) *core.Agent {
			cfg.Runtimes = map[string]harness.Harness{core.RuntimeACP: ph}
			return f.newAgent(t, &core.Agent{Name: "coder", Runtime: core.AgentRuntime{Kind: core.RuntimeACP, Command: []string{"goose", "acp"}}})
		}},
		{"the builder of its tools", func(t *testing.T, f *fixture, cfg *runtime.Config, _ *panicHarness) *core.Agent {
			cfg.Tools = func(_ context.Context, _ *core.Session, a *core.Agent) (*toolset.Registry, error) {
				if a.Name == "broken" {
					panic("toolset bug")
				}
				return toolset.New(harness.Conversation()...)
			}
			return f.newAgent(t, &core.Agent{Name: "broken", Model: "anthropic/test"})
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			held, gate := make(chan struct{}), make(chan struct{})
			model := fakemodel.New(fakemodel.Step{Text: "the other session's answer", Before: func(core.ModelRequest) {
				close(held)
				<-gate
			}})
			f := newFixture(t, model)
			logged := panictest.New()
			ph := &panicHarness{}
			cfg := runtime.Config{Store: f.store, Model: model, Workers: 2, Logger: logged.Logger(),
				Limits: core.Limits{MaxSteps: 10, TurnSeconds: 30, MaxTokens: 1e6}}
			panicky := tt.panicky(t, f, &cfg, ph)
			f.rt = runtime.New(cfg)
			if err := f.rt.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = f.rt.Stop(context.Background()) })
			// A failed test lets the other turn go, so the stop is not
			// stuck behind it.
			release := sync.OnceFunc(func() { close(gate) })
			t.Cleanup(release)

			other := f.session(t)
			f.send(t, other, core.TypeUserMessage, "take your time")
			<-held
			id := f.sessionOf(t, panicky)
			f.send(t, id, core.TypeUserMessage, "this one panics")

			s := f.waitStatus(t, id, core.StatusFailed)
			if s.StopReason != core.ReasonError {
				t.Fatalf("the panicked session stopped %s", s.StopReason)
			}
			var eb core.ErrorBody
			evs := f.events(t, id)
			for _, e := range evs {
				if e.Type == core.TypeError {
					_ = e.Decode(&eb)
				}
			}
			if eb.Message != "internal error" || !eb.Retryable {
				t.Fatalf("session.error %+v, log %v", eb, evTypes(evs))
			}
			logged.WantOne(t, "panicked_test.go", "session_id="+id)
			if tt.name == "another runtime's harness" && !ph.wasReset(id) {
				t.Fatal("the harness that panicked was not told to reset the session")
			}

			release()
			f.waitStatus(t, other, core.StatusIdle)
			var answered bool
			for _, e := range f.events(t, other) {
				answered = answered || e.Type == core.TypeAgentMessage && strings.Contains(string(e.Body), "the other session's answer")
			}
			if !answered {
				t.Fatalf("the other session's turn did not complete: %v", evTypes(f.events(t, other)))
			}
		})
	}
}

// TestPanicOutsideACycleBacksOff: a panic in the runtime's work around a
// session's cycles (here the AfterCycle hook) is logged once and backs
// that session off; the worker lives on and runs the next session.
func TestPanicOutsideACycleBacksOff(t *testing.T) {
	f := newFixture(t, fakemodel.New(fakemodel.Step{Text: "first"}, fakemodel.Step{Text: "second"}))
	logged := panictest.New()
	var once sync.Once
	f.rt = runtime.New(runtime.Config{Store: f.store, Model: f.model, Workers: 1, Logger: logged.Logger(),
		Limits: core.Limits{MaxSteps: 10, TurnSeconds: 30, MaxTokens: 1e6}, RetryAfter: time.Hour,
		AfterCycle: func(string) { once.Do(func() { panic("hook bug") }) }})
	if err := f.rt.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.rt.Stop(context.Background()) })
	first := f.session(t)
	f.send(t, first, core.TypeUserMessage, "one")
	f.waitStatus(t, first, core.StatusIdle)
	// One worker: the second session runs only if the first's panic left
	// it alive.
	second := f.session(t)
	f.send(t, second, core.TypeUserMessage, "two")
	f.waitStatus(t, second, core.StatusIdle)
	logged.WantOne(t, "panicked_test.go", "session_id="+first)
	if !strings.Contains(logged.String(), "session cycle failed; retrying later") {
		t.Fatalf("the session was not backed off:\n%s", logged)
	}
}

// newAgent creates another agent in the fixture's store.
func (f *fixture) newAgent(t *testing.T, a *core.Agent) *core.Agent {
	t.Helper()
	a, err := f.store.CreateAgent(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// sessionOf creates a session of agent a.
func (f *fixture) sessionOf(t *testing.T, a *core.Agent) string {
	t.Helper()
	res, err := f.store.CreateSession(context.Background(), core.NewSession{Session: core.Session{Agent: core.AgentRef{ID: a.ID, Version: a.Version}}})
	if err != nil {
		t.Fatal(err)
	}
	return res.Session.ID
}

func evTypes(evs []core.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}
