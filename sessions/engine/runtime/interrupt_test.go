package runtime_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/toolset"
	"github.com/switchboardhq/switchboard/fixtures/fakemodel"
	"github.com/switchboardhq/switchboard/fixtures/panictest"
	"github.com/switchboardhq/switchboard/sessions/engine/harness"
	"github.com/switchboardhq/switchboard/sessions/engine/runtime"
	"github.com/switchboardhq/switchboard/sessions/store/bolt"
)

// TestInterruptIsNoFailure: an interrupt cancels the running turn's
// context, and whatever store call of the cycle it cuts short (the model
// call, the reads that open a cycle, the reads that end it) is the
// interrupt, not the store failing: the session takes its next message at
// once. The clock never moves, so a session backed off as failed would
// never answer.
func TestInterruptIsNoFailure(t *testing.T) {
	for _, tt := range []struct {
		name string
		// hang: the model's first step waits for the cancel; else the
		// cycle's opening read does.
		hang bool
	}{
		{name: "during the model call", hang: true},
		{name: "during the cycle's opening reads"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			clock, st, agent := clockedStore(t)
			var steps []fakemodel.Step
			if tt.hang {
				steps = append(steps, fakemodel.Step{Hang: true})
			}
			model := fakemodel.New(steps...)
			model.Default = &fakemodel.Step{Text: "answer"}
			model.Requested = make(chan core.ModelRequest, 8)
			// The cycle's first read waits for the interrupt when asked to,
			// and fails as a store read does when its context ends.
			var holdRead atomic.Bool
			holdRead.Store(!tt.hang)
			held := make(chan struct{})
			tools := func(ctx context.Context, _ *core.Session, _ *core.Agent) (*toolset.Registry, error) {
				if holdRead.CompareAndSwap(true, false) {
					close(held)
					<-ctx.Done()
					return nil, fmt.Errorf("read the session's tools: session store: %w", ctx.Err())
				}
				return toolset.New(harness.Conversation()...)
			}
			logged := panictest.New()
			cycles := make(chan struct{}, 64)
			afterCycle := func(string) {
				select {
				case cycles <- struct{}{}:
				default:
				}
			}
			startClocked(t, runtime.Config{Store: st, Commits: st, Model: model, Workers: 2, Clock: clock, Tools: tools, AfterCycle: afterCycle,
				Logger: logged.Logger(), RetryAfter: time.Second, MaxRetryAfter: time.Second,
				Limits: core.Limits{MaxSteps: 10, TurnSeconds: 30, MaxTokens: 1e6}})
			id := sessionWith(t, st, agent, "think it over")
			if tt.hang {
				<-model.Requested
			} else {
				<-held
			}
			// The commit stream brings the interrupt to the running turn.
			if _, err := st.QueueInputs(ctx, id, core.QueueRequest{Inputs: []core.Event{core.NewInput(core.TypeUserInterrupt, nil)}}); err != nil {
				t.Fatal(err)
			}
			waitSettled(t, st, cycles, id)
			if _, err := st.QueueInputs(ctx, id, core.QueueRequest{Inputs: []core.Event{core.NewInput(core.TypeUserMessage, []byte(`{"text":"go on"}`))}}); err != nil {
				t.Fatal(err)
			}
			s := waitSettled(t, st, cycles, id)
			if s.StopReason != core.ReasonCompleted {
				t.Fatalf("the message after the interrupt ended %s", s.StopReason)
			}
			if got := logged.String(); strings.Contains(got, "level=ERROR") {
				t.Fatalf("the interrupt was logged as a failure:\n%s", got)
			}
		})
	}
}

// waitSettled waits, a cycle's end at a time, until the session is idle
// with nothing pending; a session backing off never gets there, as its
// clock is the test's.
func waitSettled(t *testing.T, st *bolt.Store, cycles <-chan struct{}, id string) *core.Session {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		s, err := st.GetSession(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		p, err := st.Pending(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if s.Status == core.StatusIdle && len(p) == 0 && s.TurnID == "" {
			return s
		}
		select {
		case <-cycles:
		case <-deadline:
			t.Fatalf("session %s is %s/%s with %d pending and no cycle ends: backed off as if the store had failed", id, s.Status, s.StopReason, len(p))
		}
	}
}
