package output_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/providers/output"
	"github.com/switchboardhq/switchboard/sessions/store/postgres"
	"github.com/switchboardhq/switchboard/sessions/store/postgres/pgtest"
)

// storeClock is a store's clock that a test moves forward, so claims
// expire when the test says.
type storeClock struct{ skew atomic.Int64 }

func (c *storeClock) Now() time.Time          { return time.Now().Add(time.Duration(c.skew.Load())) }
func (c *storeClock) Advance(d time.Duration) { c.skew.Add(int64(d)) }

// platform is a fake platform both replicas' renderers post to: it keeps
// what was rendered of each session, in order, whoever rendered it.
type platform struct {
	mu       sync.Mutex
	rendered map[string][]string // session id → "seq:type"
}

// shared renders every event onto a platform; agent.message is a
// platform call, so its position is saved at once.
type shared struct {
	p *platform
}

func (r shared) Received(context.Context, *core.Session, []core.Event) error { return nil }

func (r shared) Render(_ context.Context, t *output.Thread, e core.Event) (bool, error) {
	r.p.mu.Lock()
	defer r.p.mu.Unlock()
	r.p.rendered[t.Session.ID] = append(r.p.rendered[t.Session.ID], fmt.Sprintf("%d:%s", e.Seq, e.Type))
	return e.Type == core.TypeAgentMessage, nil
}

// replicaStore is the store a replica's sink and the test both use.
type replicaStore interface {
	core.Store
	core.SinkStore
}

// replicaStores opens the stores two replicas share: one bbolt store (one
// process, two holders), or two PostgreSQL stores on one database.
func replicaStores(t *testing.T, backend string) [2]replicaStore {
	t.Helper()
	if backend == "bbolt" {
		st := openStore(t, t.TempDir())
		return [2]replicaStore{st, st}
	}
	dsn := pgtest.DSN(t)
	var out [2]replicaStore
	for i := range out {
		st, err := postgres.Open(t.Context(), dsn, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		out[i] = st
	}
	return out
}

// TestTwoSinksRenderEachEventOnce: two replicas' sinks follow the same
// sessions (both hear of every turn); each session's output is claimed by
// one at a time, so every event is rendered once, in log order.
func TestTwoSinksRenderEachEventOnce(t *testing.T) {
	for _, backend := range []string{"bbolt", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			stores := replicaStores(t, backend)
			p := &platform{rendered: map[string][]string{}}
			var sinks [2]*output.Sink
			for i, st := range stores {
				sinks[i] = output.New(output.Config{Name: "test", Store: st, Renderer: shared{p}, Holder: fmt.Sprintf("replica-%d", i),
					RetryMin: time.Millisecond, ClaimRetry: time.Millisecond})
				if err := sinks[i].Start(t.Context()); err != nil {
					t.Fatal(err)
				}
				defer sinks[i].Stop(context.Background())
			}
			const sessions, turns = 6, 2
			ids := make([]string, sessions)
			for i := range ids {
				ids[i] = newSession(t, stores[i%2], "test")
			}
			for n := range turns {
				for i, id := range ids {
					if n > 0 {
						queue(t, stores[i%2], id)
					}
					turn(t, stores[(i+n)%2], id)
				}
			}
			settled := func() bool { return sinks[0].Settled(t.Context()) && sinks[1].Settled(t.Context()) }
			waitUntil(t, "both sinks to let go", settled)
			want := append(slices.Clone(wantTurn), "7:user.message", "8:session.status_changed", "9:turn.started", "10:agent.message", "11:turn.completed", "12:session.status_changed")
			p.mu.Lock()
			defer p.mu.Unlock()
			for _, id := range ids {
				if got := p.rendered[id]; !slices.Equal(got, want) {
					t.Errorf("session %s rendered %v, want %v", id, got, want)
				}
			}
		})
	}
}

// queue queues an input on a session, as a platform's next message does.
func queue(t *testing.T, st core.Store, id string) {
	t.Helper()
	if _, err := st.QueueInputs(t.Context(), id, core.QueueRequest{Inputs: []core.Event{core.NewInput(core.TypeUserMessage, []byte(`{"text":"more"}`))}}); err != nil {
		t.Fatal(err)
	}
}

// gated posts each agent.message through PostOnce; while gate is set, it
// first waits on it, as a replica that stalls before posting would.
type gated struct {
	*poster
	entered chan struct{} // closed when Render first waits on gate
	gate    chan struct{}
	once    sync.Once
	refused atomic.Int32 // renders refused because the claim was lost
}

func (g *gated) Render(ctx context.Context, t *output.Thread, e core.Event) (bool, error) {
	if e.Type == core.TypeAgentMessage && g.gate != nil {
		g.once.Do(func() { close(g.entered) })
		select {
		case <-g.gate:
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
	acted, err := g.poster.Render(ctx, t, e)
	if errors.Is(err, core.ErrLeaseLost) {
		g.refused.Add(1)
	}
	return acted, err
}

// TestTakenOverSinkStops: a replica stalls before posting for longer than
// its claim; another takes the session over (a higher epoch) and posts.
// When the first wakes up, its intent's save is refused, so it posts
// nothing, and it lets the session go.
func TestTakenOverSinkStops(t *testing.T) {
	clock := &storeClock{}
	st := openStoreAt(t, t.TempDir(), clock.Now)
	base := &poster{st: st}
	a := &gated{poster: base, entered: make(chan struct{}), gate: make(chan struct{})}
	// b shares a's platform (posts and look-ups).
	b := &gated{poster: base}
	id, sinkA, sinkB := takeOver(t, st, clock, a, b, a.entered)
	waitUntil(t, "b to post the answer", func() bool { posts, _ := base.snapshot(); return len(posts) == 1 })

	close(a.gate)
	waitUntil(t, "a's save refused", func() bool { return a.refused.Load() > 0 })
	waitUntil(t, "both sinks to let go", func() bool { return sinkA.Settled(t.Context()) && sinkB.Settled(t.Context()) })
	posts, _ := base.snapshot()
	if len(posts) != 1 {
		t.Fatalf("posts %v, want the answer once", posts)
	}
	pos, err := st.SinkPosition(t.Context(), "test", id)
	if err != nil || pos.Seq != 6 {
		t.Fatalf("position %+v, %v", pos, err)
	}
	var state posterState
	if err := json.Unmarshal(pos.State, &state); err != nil || state.Intent != nil {
		t.Fatalf("state %s left an intent (%v)", pos.State, err)
	}
}

// holderSink starts a sink rendering for holder with r, whose claims
// last an hour by the store's clock (the test moves it on).
func holderSink(t *testing.T, st output.Store, r output.Renderer, holder string) *output.Sink {
	t.Helper()
	s := output.New(output.Config{Name: "test", Store: st, Renderer: r, Holder: holder, ClaimTTL: time.Hour,
		RetryMin: time.Millisecond, ClaimRetry: time.Millisecond})
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop(context.Background()) })
	return s
}

// takeOver starts a turn that a renders until entered closes (a stalls
// there), then starts b and moves the store's clock past a's claim, so b
// takes the session over.
func takeOver(t *testing.T, st replicaStore, clock *storeClock, a, b output.Renderer, entered <-chan struct{}) (id string, sinkA, sinkB *output.Sink) {
	t.Helper()
	sinkA = holderSink(t, st, a, "a")
	id = newSession(t, st, "test")
	turn(t, st, id)
	<-entered
	sinkB = holderSink(t, st, b, "b")
	clock.Advance(2 * time.Hour)
	return id, sinkA, sinkB
}

// statusBoard is a platform's transient status of a thread: what the last
// write said, whoever made it.
type statusBoard struct {
	mu     sync.Mutex
	status string
	writes []string
}

func (b *statusBoard) set(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.status = s
	b.writes = append(b.writes, s)
}

func (b *statusBoard) get() (string, []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.status, slices.Clone(b.writes)
}

// showing shows a status while a turn runs: "working" at turn.started,
// "answering" at agent.message, cleared at turn.completed. While gate is
// set, its agent.message write waits on it after the call has left, as a
// replica stopped in the middle of that call would make it late.
type showing struct {
	board   *statusBoard
	entered chan struct{}
	gate    chan struct{}
	once    sync.Once
	fenced  atomic.Int32
}

func (s *showing) Received(context.Context, *core.Session, []core.Event) error { return nil }

func (s *showing) Render(ctx context.Context, _ *output.Thread, e core.Event) (bool, error) {
	switch e.Type {
	case core.TypeTurnStarted:
		s.board.set("working")
	case core.TypeAgentMessage:
		if s.gate != nil {
			s.once.Do(func() { close(s.entered) })
			select {
			case <-s.gate:
			case <-ctx.Done():
				return false, ctx.Err()
			}
		}
		s.board.set("answering")
	case core.TypeTurnCompleted:
		s.board.set("")
	default:
		return false, nil
	}
	return true, nil
}

func (s *showing) Fenced(context.Context, *output.Thread) error {
	s.fenced.Add(1)
	s.board.set("")
	return nil
}

// TestFencedHolderTakesDownItsStatus: a replica's status write is held up
// past its claim; another takes the session over, renders the rest of the
// turn and clears the status. The late write lands after that clear, so
// the first replica, refused its next save, takes it down again: the
// thread ends with no status.
func TestFencedHolderTakesDownItsStatus(t *testing.T) {
	clock := &storeClock{}
	st := openStoreAt(t, t.TempDir(), clock.Now)
	board := &statusBoard{}
	a := &showing{board: board, entered: make(chan struct{}), gate: make(chan struct{})}
	b := &showing{board: board}
	_, sinkA, sinkB := takeOver(t, st, clock, a, b, a.entered)
	waitUntil(t, "b to end the turn", func() bool { _, w := board.get(); return len(w) >= 3 && w[len(w)-1] == "" })

	close(a.gate)
	waitUntil(t, "both sinks to let go", func() bool { return sinkA.Settled(t.Context()) && sinkB.Settled(t.Context()) })
	status, writes := board.get()
	if status != "" {
		t.Fatalf("status %q left (writes %q), want it taken down", status, writes)
	}
	if want := []string{"working", "answering", "", "answering", ""}; !slices.Equal(writes, want) {
		t.Fatalf("writes %q, want %q", writes, want)
	}
	if n := b.fenced.Load(); n != 0 {
		t.Fatalf("the holder that kept its claim was told it was fenced %d times", n)
	}
}
