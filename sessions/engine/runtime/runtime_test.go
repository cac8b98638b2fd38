package runtime_test

import (
	"context"
	"encoding/json"
	"fmt"
	stdruntime "runtime"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakemodel"
	"github.com/switchboardhq/switchboard/sessions/engine/runtime"
	"github.com/switchboardhq/switchboard/sessions/store/bolt"
)

type fixture struct {
	store *bolt.Store
	agent *core.Agent
	model *fakemodel.Model
	rt    *runtime.Runtime

	mu     sync.Mutex
	letGo  map[string]int // AfterCycle calls by session
	letSig chan struct{}  // closed at the next AfterCycle call
}

func start(t *testing.T, model *fakemodel.Model, workers int) *fixture {
	t.Helper()
	f := newFixture(t, model)
	f.rt = f.newRuntime(t, workers)
	return f
}

// newFixture opens a fresh store with one agent; the caller starts the
// runtime.
func newFixture(t *testing.T, model *fakemodel.Model) *fixture {
	t.Helper()
	st, a := storeWithAgent(t, bolt.Options{})
	return &fixture{store: st, agent: a, model: model, letGo: map[string]int{}}
}

func (f *fixture) newRuntime(t *testing.T, workers int) *runtime.Runtime {
	t.Helper()
	rt := runtime.New(runtime.Config{Store: f.store, Model: f.model, Workers: workers,
		Limits: core.Limits{MaxSteps: 10, TurnSeconds: 30, MaxTokens: 1e6}, AfterCycle: f.afterCycle})
	if err := rt.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Stop(context.Background()) })
	return rt
}

func (f *fixture) session(t *testing.T) string {
	t.Helper()
	res, err := f.store.CreateSession(context.Background(), core.NewSession{Session: core.Session{Agent: core.AgentRef{ID: f.agent.ID, Version: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	return res.Session.ID
}

func (f *fixture) send(t *testing.T, id, typ, text string) {
	t.Helper()
	body := json.RawMessage(`{}`)
	if typ == core.TypeUserMessage {
		body, _ = json.Marshal(core.MessageBody{Text: text})
	}
	if _, err := f.store.QueueInputs(context.Background(), id, core.QueueRequest{Inputs: []core.Event{core.NewInput(typ, body)}}); err != nil {
		t.Fatal(err)
	}
	if typ == core.TypeUserInterrupt {
		f.rt.Interrupt(id)
	} else {
		f.rt.Wake(id)
	}
}

// waitStatus polls the session record until it has the status and no
// pending input; the store is the only observable here.
func (f *fixture) waitStatus(t *testing.T, id string, want core.Status) *core.Session {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		s, err := f.store.GetSession(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		p, _ := f.store.Pending(context.Background(), id)
		if s.Status == want && len(p) == 0 && s.TurnID == "" {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("session %s: status %s (pending %d), want %s", id, s.Status, len(p), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (f *fixture) afterCycle(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.letGo[id]++
	if f.letSig != nil {
		close(f.letSig)
		f.letSig = nil
	}
}

// waitLetGo waits until the runtime has let go of every session in ids
// (AfterCycle), or fails the test after 30 s.
func (f *fixture) waitLetGo(t *testing.T, ids ...string) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		f.mu.Lock()
		missing := ""
		for _, id := range ids {
			if f.letGo[id] == 0 {
				missing = id
				break
			}
		}
		if missing == "" {
			f.mu.Unlock()
			return
		}
		if f.letSig == nil {
			f.letSig = make(chan struct{})
		}
		sig := f.letSig
		f.mu.Unlock()
		select {
		case <-sig:
		case <-timeout:
			t.Fatalf("the runtime never let go of session %s", missing)
		}
	}
}

func (f *fixture) events(t *testing.T, id string) []core.Event {
	t.Helper()
	evs, err := f.store.Events(context.Background(), id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func TestWakeRunsATurn(t *testing.T) {
	f := start(t, fakemodel.New(fakemodel.Step{Text: "hi back"}), 2)
	id := f.session(t)
	f.send(t, id, core.TypeUserMessage, "hi")
	s := f.waitStatus(t, id, core.StatusIdle)
	if s.StopReason != core.ReasonCompleted || s.Usage.Total() != 15 || s.LastSeq != 6 {
		t.Fatalf("session %+v", s)
	}
	// The worker lets go of the session after its last commit: the store
	// shows the session idle a moment before.
	f.waitLetGo(t, id)
	if f.rt.Running() != 0 {
		t.Fatalf("%d sessions still held by the runtime", f.rt.Running())
	}
}

// TestOneTurnAtATime floods sessions with concurrent inputs and checks that
// no session ever had two turns open and no input was lost.
func TestOneTurnAtATime(t *testing.T) {
	model := fakemodel.New()
	model.Default = &fakemodel.Step{Text: "ok"}
	f := start(t, model, 4)
	const sessionsN, messages = 6, 10
	ids := make([]string, sessionsN)
	for i := range ids {
		ids[i] = f.session(t)
	}
	var wg sync.WaitGroup
	for _, id := range ids {
		for m := range messages {
			wg.Add(1)
			go func() {
				defer wg.Done()
				f.send(t, id, core.TypeUserMessage, fmt.Sprintf("m%d", m))
			}()
		}
	}
	wg.Wait()
	for _, id := range ids {
		f.waitStatus(t, id, core.StatusIdle)
		open, inputs := "", 0
		for i, e := range f.events(t, id) {
			if e.Seq != uint64(i+1) {
				t.Fatalf("seq gap at %d: %d", i, e.Seq)
			}
			switch e.Type {
			case core.TypeTurnStarted:
				if open != "" {
					t.Fatalf("turn %s started inside turn %s", e.TurnID, open)
				}
				open = e.TurnID
			case core.TypeTurnCompleted:
				open = ""
			case core.TypeUserMessage:
				inputs++
			}
		}
		if inputs != messages {
			t.Fatalf("session %s logged %d of %d inputs", id, inputs, messages)
		}
	}
}

func TestInterruptCancelsRunningTurn(t *testing.T) {
	model := fakemodel.New(fakemodel.Step{Hang: true}, fakemodel.Step{Text: "next"})
	model.Requested = make(chan core.ModelRequest, 4)
	f := start(t, model, 2)
	id := f.session(t)
	f.send(t, id, core.TypeUserMessage, "long")
	<-model.Requested
	f.send(t, id, core.TypeUserInterrupt, "")
	s := f.waitStatus(t, id, core.StatusIdle)
	if s.StopReason != core.ReasonCanceled {
		t.Fatalf("stop reason %s", s.StopReason)
	}
	f.send(t, id, core.TypeUserMessage, "again")
	if s := f.waitStatus(t, id, core.StatusIdle); s.StopReason != core.ReasonCompleted {
		t.Fatalf("after interrupt: %s", s.StopReason)
	}
}

// TestStartResumesOpenTurns: a turn left open by a stopped runtime is
// found at the next Start and completed.
func TestStartResumesOpenTurns(t *testing.T) {
	model := fakemodel.New(fakemodel.Step{Hang: true}, fakemodel.Step{Text: "resumed"})
	model.Requested = make(chan core.ModelRequest, 4)
	f := start(t, model, 1)
	id := f.session(t)
	f.send(t, id, core.TypeUserMessage, "work")
	<-model.Requested
	if err := f.rt.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	open, err := f.store.OpenTurns(context.Background())
	if err != nil || len(open) != 1 {
		t.Fatalf("open turns after stop: %v %v", open, err)
	}
	f.rt = f.newRuntime(t, 1)
	s := f.waitStatus(t, id, core.StatusIdle)
	if s.StopReason != core.ReasonCompleted {
		t.Fatalf("resumed turn ended %s", s.StopReason)
	}
	turns := 0
	for _, e := range f.events(t, id) {
		if e.Type == core.TypeTurnStarted {
			turns++
		}
	}
	if turns != 1 {
		t.Fatalf("%d turns; the open one should have been resumed", turns)
	}
}

// TestIdleHoldsNothing: after many sessions go idle the runtime holds no
// goroutine or state for them.
func TestIdleHoldsNothing(t *testing.T) {
	model := fakemodel.New()
	model.Default = &fakemodel.Step{Text: "ok"}
	f := start(t, model, 4)
	before := stdruntime.NumGoroutine()
	var ids []string
	for range 50 {
		id := f.session(t)
		f.send(t, id, core.TypeUserMessage, "hi")
		ids = append(ids, id)
	}
	for _, id := range ids {
		f.waitStatus(t, id, core.StatusIdle)
	}
	f.waitLetGo(t, ids...)
	if f.rt.Running() != 0 {
		t.Fatalf("%d sessions held", f.rt.Running())
	}
	// A worker that let go of its last session is a moment from parked.
	for deadline := time.Now().Add(30 * time.Second); stdruntime.NumGoroutine() > before+2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("goroutines grew from %d to %d", before, stdruntime.NumGoroutine())
		}
	}
}

// TestAfterCycleWhenLetGo: the hook hears of a session once the runtime
// has nothing left to run for it, so its resources can start idling.
func TestAfterCycleWhenLetGo(t *testing.T) {
	model := fakemodel.New(fakemodel.Step{Text: "one"})
	f := start(t, model, 1)
	_ = f.rt.Stop(context.Background())
	let := make(chan string, 4)
	f.rt = runtime.New(runtime.Config{Store: f.store, Model: f.model, Workers: 1, AfterCycle: func(id string) { let <- id }})
	if err := f.rt.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.rt.Stop(context.Background()) })
	id := f.session(t)
	f.send(t, id, core.TypeUserMessage, "hi")
	select {
	case got := <-let:
		if got != id {
			t.Fatalf("AfterCycle(%s), want %s", got, id)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("AfterCycle never called")
	}
	if s := f.waitStatus(t, id, core.StatusIdle); s.StopReason != core.ReasonCompleted {
		t.Fatalf("stop reason %s", s.StopReason)
	}
}
