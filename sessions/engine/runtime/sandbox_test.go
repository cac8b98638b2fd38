package runtime_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakemodel"
	"github.com/switchboardhq/switchboard/sessions/engine/runtime"
	"github.com/switchboardhq/switchboard/sessions/store/bolt"
)

// fakeSandboxes records what the runtime asks of the sandbox backend.
type fakeSandboxes struct {
	shared bool
	mu     sync.Mutex
	drops  []string
}

func (s *fakeSandboxes) SharedWorkspaces() bool { return s.shared }

func (s *fakeSandboxes) Drop(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drops = append(s.drops, id)
	return nil
}

func (s *fakeSandboxes) dropped() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.drops...)
}

// startReplica starts a runtime named holder over a fresh store, with sb
// as its sandbox backend.
func startReplica(t *testing.T, model *fakemodel.Model, holder string, sb runtime.Sandboxes, store func(*bolt.Store) runtime.Store) *fixture {
	t.Helper()
	f := newFixture(t, model)
	var rs runtime.Store = f.store
	if store != nil {
		rs = store(f.store)
	}
	f.rt = runtime.New(runtime.Config{Store: rs, Model: model, Workers: 2, Holder: holder, Sandboxes: sb,
		LeaseTTL: 300 * time.Millisecond, Limits: core.Limits{MaxSteps: 10, TurnSeconds: 60, MaxTokens: 1e6}, AfterCycle: f.afterCycle})
	if err := f.rt.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.rt.Stop(context.Background()) })
	return f
}

func toolUse(name string) core.Event {
	return core.NewEvent(core.TypeAgentToolUse, core.LevelProgress, core.ActorAgent,
		core.ToolUseBody{ToolUseID: "toolu_" + name, Name: name, Input: json.RawMessage(`{}`)})
}

func resets(t *testing.T, events []core.Event) []core.SandboxResetBody {
	t.Helper()
	var out []core.SandboxResetBody
	for _, e := range events {
		if e.Type != core.TypeSandboxReset {
			continue
		}
		var b core.SandboxResetBody
		if err := e.Decode(&b); err != nil {
			t.Fatal(err)
		}
		if e.Level != core.LevelProgress {
			t.Fatalf("session.sandbox_reset at level %s, want progress", e.Level)
		}
		out = append(out, b)
	}
	return out
}

func requestText(req core.ModelRequest) string {
	var b strings.Builder
	for _, m := range req.Messages {
		for _, c := range m.Content {
			b.WriteString(c.Text)
			b.WriteString("\n")
		}
	}
	return b.String()
}

// TestSessionMovedResetsSandbox: a session whose lease was last held by
// another replica, and that had worked in a sandbox there, gets one
// session.sandbox_reset before its turn, which its model reads; the
// sandbox this replica may have of it from before is dropped. Nothing is
// logged when the session stayed, never had a sandbox, or workspaces are
// shared.
func TestSessionMovedResetsSandbox(t *testing.T) {
	const here = "replica-b"
	tests := []struct {
		name      string
		last      string // holder of the lease before this replica
		history   []core.Event
		shared    bool
		wantReset bool
		wantDrop  bool
	}{
		{name: "moved with a sandbox", last: "replica-a", history: []core.Event{toolUse("bash")}, wantReset: true, wantDrop: true},
		{name: "same replica", last: here, history: []core.Event{toolUse("bash")}},
		{name: "first grant", history: []core.Event{toolUse("bash")}},
		{name: "moved without a sandbox", last: "replica-a", history: []core.Event{toolUse("say")}, wantDrop: true},
		{name: "moved after a reset and no sandbox since", last: "replica-a", wantDrop: true, history: []core.Event{
			toolUse("bash"), core.NewEvent(core.TypeSandboxReset, core.LevelProgress, core.ActorSystem, core.SandboxResetBody{Reason: core.ResetMoved}),
		}},
		{name: "moved with shared workspaces", last: "replica-a", history: []core.Event{toolUse("bash")}, shared: true, wantDrop: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			model := fakemodel.New(fakemodel.Step{Text: "one"}, fakemodel.Step{Text: "two"})
			sb := &fakeSandboxes{shared: tc.shared}
			f := startReplica(t, model, here, sb, nil)
			id := f.session(t)
			if _, err := f.store.Append(ctx, id, core.AppendRequest{Events: tc.history}); err != nil {
				t.Fatal(err)
			}
			if tc.last != "" {
				// The other replica ran it and let go; it sent no
				// heartbeat, so it keeps no affinity.
				l, ok, err := f.store.TakeLease(ctx, id, tc.last, time.Hour)
				if err != nil || !ok {
					t.Fatalf("take lease as %s: %v %v", tc.last, ok, err)
				}
				if err := f.store.ReleaseLease(ctx, l); err != nil {
					t.Fatal(err)
				}
			}
			// Two turns: the second runs on the same replica, so it is no
			// move.
			for _, text := range []string{"first", "second"} {
				f.send(t, id, core.TypeUserMessage, text)
				f.waitStatus(t, id, core.StatusIdle)
			}
			got := resets(t, f.events(t, id)[len(tc.history):])
			want := 0
			if tc.wantReset {
				want = 1
			}
			if len(got) != want {
				t.Fatalf("%d session.sandbox_reset logged, want %d: %+v", len(got), want, got)
			}
			if want == 1 && got[0].Reason != core.ResetMoved {
				t.Fatalf("reset reason %q, want %q", got[0].Reason, core.ResetMoved)
			}
			reqs := model.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d model requests, want 2", len(reqs))
			}
			for i, req := range reqs {
				if has := strings.Count(requestText(req), "The sandbox was reset ("+core.ResetMoved+")") > len(resets(t, tc.history)); has != tc.wantReset {
					t.Fatalf("request %d carries the reset note: %v, want %v\n%s", i, has, tc.wantReset, requestText(req))
				}
			}
			if d := sb.dropped(); (len(d) == 1 && d[0] == id) != tc.wantDrop || len(d) > 1 {
				t.Fatalf("dropped %v, want a drop of %s: %v", d, id, tc.wantDrop)
			}
		})
	}
}

// refusingStore refuses renewals once refuse is closed, as a store does
// after another replica took the session over.
type refusingStore struct {
	runtime.Store
	refuse chan struct{}
}

func (s *refusingStore) RenewLease(ctx context.Context, l core.Lease, ttl time.Duration) error {
	select {
	case <-s.refuse:
		return core.ErrLeaseLost
	default:
		return s.Store.RenewLease(ctx, l, ttl)
	}
}

// TestSessionTakenOverDropsSandbox: a replica whose renewal is refused
// (another took the session) stops the turn and removes the session's
// sandbox from its engine: it is an orphan there.
func TestSessionTakenOverDropsSandbox(t *testing.T) {
	hung := make(chan struct{})
	model := fakemodel.New(fakemodel.Step{Hang: true, Before: func(core.ModelRequest) { close(hung) }})
	sb := &fakeSandboxes{}
	rs := &refusingStore{refuse: make(chan struct{})}
	f := startReplica(t, model, "replica-a", sb, func(st *bolt.Store) runtime.Store { rs.Store = st; return rs })
	id := f.session(t)
	f.send(t, id, core.TypeUserMessage, "hi")
	select {
	case <-hung:
	case <-time.After(time.Minute):
		t.Fatal("the model was never called")
	}
	if d := sb.dropped(); len(d) != 0 {
		t.Fatalf("dropped %v while the session was held here", d)
	}
	close(rs.refuse)
	f.waitLetGo(t, id)
	if d := sb.dropped(); len(d) != 1 || d[0] != id {
		t.Fatalf("dropped %v, want %s once", d, id)
	}
}
