package runtime_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakemodel"
	"github.com/switchboardhq/switchboard/sessions/engine/runtime"
	"github.com/switchboardhq/switchboard/sessions/store/bolt"
	"github.com/switchboardhq/switchboard/sessions/store/postgres"
	"github.com/switchboardhq/switchboard/sessions/store/postgres/pgtest"
)

// cutOffStore is a runtime's view of a shared store that it can no longer
// reach for its lease bookkeeping (a partitioned or paused replica):
// renewals and heartbeats fail once cut is set.
type cutOffStore struct {
	runtime.Store
	cut atomic.Bool
}

var errUnreachable = errors.New("store unreachable")

func (s *cutOffStore) RenewLease(ctx context.Context, l core.Lease, ttl time.Duration) error {
	if s.cut.Load() {
		return errUnreachable
	}
	return s.Store.RenewLease(ctx, l, ttl)
}

func (s *cutOffStore) Heartbeat(ctx context.Context, holder string, ttl time.Duration, draining bool) error {
	if s.cut.Load() {
		return errUnreachable
	}
	return s.Store.Heartbeat(ctx, holder, ttl, draining)
}

// firstCallWatch tells when the first model call returns.
type firstCallWatch struct {
	*fakemodel.Model
	calls    atomic.Int32
	returned chan struct{}
}

func (m *firstCallWatch) Generate(ctx context.Context, req core.ModelRequest) (*core.ModelResponse, error) {
	first := m.calls.Add(1) == 1
	resp, err := m.Model.Generate(ctx, req)
	if first {
		close(m.returned)
	}
	return resp, err
}

// sharedStore is a store two runtimes share: one bbolt store in this
// process, or PostgreSQL, where each runtime has a store of its own on the
// same database (two replicas).
type sharedStore interface {
	runtime.Store
	core.CommitStream
	CreateAgent(ctx context.Context, a *core.Agent) (*core.Agent, error)
	CreateSession(ctx context.Context, req core.NewSession) (*core.CreateResult, error)
	QueueInputs(ctx context.Context, sessionID string, req core.QueueRequest) (*core.QueueResult, error)
}

// TestLeaseTakeover: two runtimes share a store. The one running a turn
// stops renewing its lease; it cancels its own turn once a whole TTL passed
// without renewal (fencing from the holder's side), leaving the turn open,
// and the other runtime takes the session over once the lease expired by
// the store's clock and finishes the same turn: one turn.started, one
// turn.completed, the answer logged once.
func TestLeaseTakeover(t *testing.T) {
	for _, kind := range sharedStores {
		t.Run(kind.name, func(t *testing.T) {
			a, b := kind.open(t)
			testLeaseTakeover(t, a, b)
		})
	}
}

// sharedStores open the two views of a store that two runtimes share:
// the same bbolt store twice, or two PostgreSQL stores on one database.
var sharedStores = []struct {
	name string
	open func(t *testing.T) (sharedStore, sharedStore)
}{
	{"bbolt", func(t *testing.T) (sharedStore, sharedStore) {
		st, err := bolt.Open(filepath.Join(t.TempDir(), "db"), bolt.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st, st
	}},
	{"postgres", func(t *testing.T) (sharedStore, sharedStore) {
		dsn := pgtest.DSN(t)
		var stores [2]*postgres.Store
		for i := range stores {
			st, err := postgres.Open(t.Context(), dsn, postgres.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			stores[i] = st
		}
		return stores[0], stores[1]
	}},
}

func testLeaseTakeover(t *testing.T, st, other sharedStore) {
	ctx := context.Background()
	agent, err := st.CreateAgent(ctx, &core.Agent{Name: "a", Model: "anthropic/test"})
	if err != nil {
		t.Fatal(err)
	}
	hung := make(chan struct{})
	model := &firstCallWatch{Model: fakemodel.New(
		fakemodel.Step{Hang: true, Before: func(core.ModelRequest) { close(hung) }},
		fakemodel.Step{Text: "done"},
	), returned: make(chan struct{})}
	cut := &cutOffStore{Store: st}
	newRuntime := func(holder string, store runtime.Store, commits core.CommitStream) *runtime.Runtime {
		rt := runtime.New(runtime.Config{Store: store, Commits: commits, Model: model, Workers: 2, Holder: holder,
			LeaseTTL: 300 * time.Millisecond, Limits: core.Limits{MaxSteps: 10, TurnSeconds: 60, MaxTokens: 1e6}})
		if err := rt.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = rt.Stop(context.Background()) })
		return rt
	}
	newRuntime("replica-a", cut, st)
	res, err := st.CreateSession(ctx, core.NewSession{Session: core.Session{Agent: core.AgentRef{ID: agent.ID, Version: 1}},
		Inputs: []core.Event{core.NewInput(core.TypeUserMessage, []byte(`{"text":"hi"}`))}})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Session.ID
	select {
	case <-hung:
	case <-time.After(time.Minute):
		t.Fatal("the first runtime never called the model")
	}
	cut.cut.Store(true)
	// The cut-off runtime cannot know it still holds the session: once a
	// TTL passed without renewal it cancels the call itself.
	select {
	case <-model.returned:
	case <-time.After(time.Minute):
		t.Fatal("the cut-off runtime kept its turn running")
	}
	newRuntime("replica-b", other, other)

	deadline := time.Now().Add(time.Minute)
	for {
		s, err := st.GetSession(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if s.Status == core.StatusIdle && s.TurnID == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("session never finished after the takeover: %+v", s)
		}
		time.Sleep(5 * time.Millisecond)
	}
	events, err := st.Events(ctx, id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	var answer string
	for _, e := range events {
		count[e.Type]++
		if e.Type == core.TypeAgentMessage {
			var b core.MessageBody
			_ = e.Decode(&b)
			answer = b.Text
		}
	}
	if count[core.TypeTurnStarted] != 1 || count[core.TypeTurnCompleted] != 1 || count[core.TypeAgentMessage] != 1 || answer != "done" {
		t.Fatalf("log after takeover: %v, answer %q", count, answer)
	}
	if n := len(model.Requests()); n != 2 {
		t.Fatalf("%d model calls, want 2 (the cut-off one and the resumed one)", n)
	}
}
