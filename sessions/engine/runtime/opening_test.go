package runtime_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/toolset"
	"github.com/switchboardhq/switchboard/fixtures/fakemodel"
	"github.com/switchboardhq/switchboard/sessions/engine/harness"
	"github.com/switchboardhq/switchboard/sessions/engine/runtime"
	"github.com/switchboardhq/switchboard/sessions/store/bolt"
)

// writeCounter is a bolt store that counts the writes the runtime makes
// to a session, and the reads of it.
type writeCounter struct {
	*bolt.Store
	mu     sync.Mutex
	writes []string
	reads  int
}

func (w *writeCounter) note(what string) {
	w.mu.Lock()
	w.writes = append(w.writes, what)
	w.mu.Unlock()
}

func (w *writeCounter) TakeLease(ctx context.Context, id, holder string, ttl time.Duration) (core.Lease, bool, error) {
	w.note("take lease")
	return w.Store.TakeLease(ctx, id, holder, ttl)
}

func (w *writeCounter) TakeLeaseOpen(ctx context.Context, id, holder string, ttl time.Duration, open core.AppendRequest) (core.Lease, bool, []core.Event, error) {
	w.note("take lease and open")
	return w.Store.TakeLeaseOpen(ctx, id, holder, ttl, open)
}

func (w *writeCounter) Append(ctx context.Context, id string, req core.AppendRequest) ([]core.Event, error) {
	out, err := w.Store.Append(ctx, id, req)
	if len(out) > 0 {
		w.note("append")
	}
	return out, err
}

func (w *writeCounter) GetSession(ctx context.Context, id string) (*core.Session, error) {
	w.mu.Lock()
	w.reads++
	w.mu.Unlock()
	return w.Store.GetSession(ctx, id)
}

// TestWakeCommitsOnceBeforeTheModel: the wake of an idle session takes
// its lease and opens its turn in one commit, and reads the session
// twice (to prepare the opening, then under the lease), before the model
// is asked; the turn then runs as a new one.
func TestWakeCommitsOnceBeforeTheModel(t *testing.T) {
	f := newFixture(t, fakemodel.New())
	st := &writeCounter{Store: f.store}
	type seen struct {
		writes []string
		reads  int
	}
	atModel := make(chan seen, 1)
	f.model.Push(fakemodel.Step{Text: "hello", Before: func(core.ModelRequest) {
		st.mu.Lock()
		atModel <- seen{append([]string(nil), st.writes...), st.reads}
		st.mu.Unlock()
	}})
	id := f.session(t)
	rt := runtime.New(runtime.Config{Store: st, Commits: f.store, Model: f.model, Workers: 1,
		Limits: core.Limits{MaxSteps: 10, TurnSeconds: 30, MaxTokens: 1e6}})
	if err := rt.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Stop(context.Background()) })
	f.rt = rt
	f.send(t, id, core.TypeUserMessage, "hi")
	var got seen
	select {
	case got = <-atModel:
	case <-time.After(30 * time.Second):
		t.Fatal("the model was not called")
	}
	if len(got.writes) != 1 || got.writes[0] != "take lease and open" {
		t.Fatalf("writes before the model call: %v, want the lease's commit alone", got.writes)
	}
	if got.reads != 2 {
		t.Fatalf("%d reads of the session before the model call, want 2", got.reads)
	}
	f.waitStatus(t, id, core.StatusIdle)
	reqs := f.model.Requests()
	if len(reqs) != 1 || len(reqs[0].Messages) != 1 {
		t.Fatalf("model requests %+v, want one with the message", reqs)
	}
}

// TestFirstWakePrimesBeforeTheTurn: a session that has not run yet is
// primed by its toolset (its platform's context) before its first turn
// opens, so the turn is not opened with the lease then.
func TestFirstWakePrimesBeforeTheTurn(t *testing.T) {
	f := newFixture(t, fakemodel.New(fakemodel.Step{Text: "hello"}, fakemodel.Step{Text: "again"}))
	id := f.session(t)
	tools := func(ctx context.Context, s *core.Session, _ *core.Agent) (*toolset.Registry, error) {
		if s.LastSeq == 0 {
			primed := core.NewEvent(core.TypeUserMessage, core.LevelInternal, core.ActorSystem, core.MessageBody{Text: "the issue"})
			if _, err := f.store.Append(ctx, s.ID, core.AppendRequest{Events: []core.Event{primed}}); err != nil {
				return nil, err
			}
		}
		return toolset.New(harness.Conversation()...)
	}
	f.rt = runtime.New(runtime.Config{Store: f.store, Commits: f.store, Model: f.model, Workers: 1, Tools: tools,
		Limits: core.Limits{MaxSteps: 10, TurnSeconds: 30, MaxTokens: 1e6}})
	if err := f.rt.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.rt.Stop(context.Background()) })
	for _, text := range []string{"hi", "more"} {
		f.send(t, id, core.TypeUserMessage, text)
		f.waitStatus(t, id, core.StatusIdle)
	}
	evs := f.events(t, id)
	if len(evs) < 3 || evs[0].Actor != core.ActorSystem || evs[0].Type != core.TypeUserMessage || evs[1].Actor != core.ActorHuman || evs[2].Type != core.TypeStatusChanged {
		t.Fatalf("the log starts %v; want the priming, then the first turn", typesOf(evs))
	}
	if reqs := f.model.Requests(); len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
}

func typesOf(evs []core.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Type + "/" + string(e.Actor)
	}
	return out
}
