package output_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/providers/output"
	"github.com/switchboardhq/switchboard/sessions/store/bolt"
)

// recorder is a hand-written Renderer that records what it rendered.
type recorder struct {
	mu       sync.Mutex
	rendered []string       // "seq:type"
	keys     []string       // "seq:key", the key each answered at
	received []string       // input ids
	fail     map[uint64]int // seq → transient failures left
	perm     map[uint64]bool
	block    chan struct{} // when set, Render of agent.message waits on it
}

func (r *recorder) Received(_ context.Context, _ *core.Session, in []core.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range in {
		r.received = append(r.received, e.ID)
	}
	return nil
}

func (r *recorder) Render(ctx context.Context, t *output.Thread, e core.Event) (bool, error) {
	if e.Type == core.TypeAgentMessage && r.block != nil {
		select {
		case <-r.block:
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail[e.Seq] > 0 {
		r.fail[e.Seq]--
		return false, errors.New("platform is down")
	}
	if r.perm[e.Seq] {
		return false, output.Permanent(errors.New("channel_not_found"))
	}
	r.rendered = append(r.rendered, fmt.Sprintf("%d:%s", e.Seq, e.Type))
	r.keys = append(r.keys, fmt.Sprintf("%d:%s", e.Seq, t.Key))
	t.State = []byte(fmt.Sprintf(`{"last":%d}`, e.Seq))
	return e.Type == core.TypeAgentMessage, nil
}

func (r *recorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.rendered)
}

func openStore(t *testing.T, dir string) *bolt.Store {
	t.Helper()
	return openStoreAt(t, dir, nil)
}

// openStoreAt opens a store whose clock is now: claims expire by it.
func openStoreAt(t *testing.T, dir string, now func() time.Time) *bolt.Store {
	t.Helper()
	s, err := bolt.Open(filepath.Join(dir, "switchboard.db"), bolt.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func newSession(t *testing.T, st core.Store, provider string) string {
	t.Helper()
	res, err := st.CreateSession(t.Context(), core.NewSession{
		Session: core.Session{Agent: core.AgentRef{ID: "agt_x", Version: 1}, Origin: &core.Origin{Provider: provider}},
		Inputs:  []core.Event{core.NewInput(core.TypeUserMessage, []byte(`{"text":"hi"}`))},
	})
	if err != nil {
		t.Fatal(err)
	}
	return res.Session.ID
}

// turn appends a whole turn, as the harness does.
func turn(t *testing.T, w core.Store, id string) {
	t.Helper()
	ctx := t.Context()
	tid := core.NewID(core.PrefixTurn)
	steps := []core.AppendRequest{
		{TakeInputs: true, TurnID: tid, Holder: "h", Events: []core.Event{
			core.NewEvent(core.TypeStatusChanged, core.LevelInternal, core.ActorSystem, core.StatusChangedBody{Status: core.StatusRunning}),
			core.NewEvent(core.TypeTurnStarted, core.LevelInternal, core.ActorSystem, struct{}{}),
		}},
		{TurnID: tid, Events: []core.Event{core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorAgent, core.MessageBody{Text: "answer"})}},
		{TurnID: tid, Events: []core.Event{
			core.NewEvent(core.TypeTurnCompleted, core.LevelInternal, core.ActorSystem, core.TurnCompletedBody{YieldReason: core.ReasonCompleted}),
			core.NewEvent(core.TypeStatusChanged, core.LevelInternal, core.ActorSystem, core.StatusChangedBody{Status: core.StatusIdle, StopReason: core.ReasonCompleted}),
		}},
	}
	for _, req := range steps {
		if _, err := w.Append(ctx, id, req); err != nil {
			t.Fatal(err)
		}
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

var wantTurn = []string{"1:user.message", "2:session.status_changed", "3:turn.started", "4:agent.message", "5:turn.completed", "6:session.status_changed"}

func TestSinkRendersATurnAndLetsGo(t *testing.T) {
	st := openStore(t, t.TempDir())
	rec := &recorder{fail: map[uint64]int{4: 2}}
	sink := output.New(output.Config{Name: "test", Store: st, Renderer: rec, RetryMin: time.Millisecond})
	if err := sink.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer sink.Stop(context.Background())
	id := newSession(t, st, "test")
	other := newSession(t, st, "elsewhere")
	// The queued input is acknowledged from the commit stream, ahead of
	// the turn.
	waitUntil(t, "the input acknowledged", func() bool { rec.mu.Lock(); defer rec.mu.Unlock(); return len(rec.received) == 1 })
	turn(t, st, id)
	turn(t, st, other) // another provider's session: not rendered
	waitUntil(t, "the turn rendered", func() bool { return len(rec.got()) == len(wantTurn) })
	if got := rec.got(); !slices.Equal(got, wantTurn) {
		t.Fatalf("rendered %v", got)
	}
	waitUntil(t, "the sink to let go", func() bool { return sink.Settled(t.Context()) })
	active, err := st.ActiveSinkSessions(t.Context(), "test")
	if err != nil || len(active) != 0 {
		t.Fatalf("still marked: %v %v", active, err)
	}
	pos, err := st.SinkPosition(t.Context(), "test", id)
	if err != nil || pos.Seq != 6 || string(pos.State) != `{"last":6}` {
		t.Fatalf("position %+v (%s), %v", pos, pos.State, err)
	}
	if _, err := st.SinkPosition(t.Context(), "test", other); err != nil {
		t.Fatal(err)
	}
}

// deafStore is a store whose commit stream announces nothing, as when
// another replica's notifications are lost.
type deafStore struct {
	*bolt.Store
	silent *core.Commits
}

func (d deafStore) Subscribe(name string, buf int) *core.Subscription {
	return d.silent.Subscribe(name, buf)
}

// TestSinkSweepsMarkedSessionsNoChangeAnnounced: a turn the commit stream
// never announced is rendered all the same, found by its mark.
func TestSinkSweepsMarkedSessionsNoChangeAnnounced(t *testing.T) {
	st := openStore(t, t.TempDir())
	rec := &recorder{}
	sink := output.New(output.Config{Name: "test", Store: deafStore{st, core.NewCommits()}, Renderer: rec,
		RetryMin: time.Millisecond, Sweep: 5 * time.Millisecond})
	if err := sink.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer sink.Stop(context.Background())
	id := newSession(t, st, "test")
	turn(t, st, id)
	waitUntil(t, "the turn rendered", func() bool { return len(rec.got()) == len(wantTurn) })
	if got := rec.got(); !slices.Equal(got, wantTurn) {
		t.Fatalf("rendered %v", got)
	}
	waitUntil(t, "the sink to let go", func() bool { return sink.Settled(t.Context()) })
}

// TestSinkFollowsATurnWhoseStartWasNotAnnounced: a sink that never heard
// of a turn's start (the replica that started it died before its notice
// went out) follows the session at the first of the turn's changes it
// hears of, as when the turn is taken over on its own replica, without
// waiting for a sweep.
func TestSinkFollowsATurnWhoseStartWasNotAnnounced(t *testing.T) {
	st := openStore(t, t.TempDir())
	rec := &recorder{}
	commits := core.NewCommits()
	sink := output.New(output.Config{Name: "test", Store: deafStore{st, commits}, Renderer: rec,
		RetryMin: time.Millisecond, Sweep: time.Hour})
	if err := sink.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer sink.Stop(context.Background())
	id := newSession(t, st, "test")
	tid := core.NewID(core.PrefixTurn)
	if _, err := st.Append(t.Context(), id, core.AppendRequest{TakeInputs: true, TurnID: tid, Holder: "h", Events: []core.Event{
		core.NewEvent(core.TypeStatusChanged, core.LevelInternal, core.ActorSystem, core.StatusChangedBody{Status: core.StatusRunning}),
		core.NewEvent(core.TypeTurnStarted, core.LevelInternal, core.ActorSystem, struct{}{}),
	}}); err != nil {
		t.Fatal(err)
	}
	answer, err := st.Append(t.Context(), id, core.AppendRequest{TurnID: tid, Events: []core.Event{
		core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorAgent, core.MessageBody{Text: "answer"}),
	}})
	if err != nil {
		t.Fatal(err)
	}
	// Only the answer's commit is announced.
	commits.Publish(core.Change{SessionID: id, Provider: "test", Sinks: []string{"test"}, Events: answer})
	want := wantTurn[:4]
	waitUntil(t, "the turn rendered up to its answer", func() bool { return len(rec.got()) == len(want) })
	if got := rec.got(); !slices.Equal(got, want) {
		t.Fatalf("rendered %v, want %v", got, want)
	}
}

func TestSinkResumesAfterRestart(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, dir)
	rec := &recorder{block: make(chan struct{})}
	sink := output.New(output.Config{Name: "test", Store: st, Renderer: rec, RetryMin: time.Millisecond})
	if err := sink.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	id := newSession(t, st, "test")
	turn(t, st, id)
	waitUntil(t, "rendering up to the answer", func() bool { return len(rec.got()) == 3 })
	// The process stops while the answer is being rendered.
	if err := sink.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	rec2 := &recorder{}
	sink2 := output.New(output.Config{Name: "test", Store: st, Renderer: rec2, RetryMin: time.Millisecond})
	if err := sink2.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer sink2.Stop(context.Background())
	waitUntil(t, "the rest rendered", func() bool { return sink2.Settled(t.Context()) && len(rec2.got()) > 0 })
	// Events without a platform call before the stop are rendered again
	// (their position was not saved); the answer and what follows once.
	got := append(rec.got(), rec2.got()...)
	if n := slices.Index(got, "4:agent.message"); n < 0 || slices.Index(got[n+1:], "4:agent.message") >= 0 || got[len(got)-1] != "6:session.status_changed" {
		t.Fatalf("rendered %v then %v", rec.got(), rec2.got())
	}
}

func TestSinkSkipsPermanentFailures(t *testing.T) {
	st := openStore(t, t.TempDir())
	rec := &recorder{perm: map[uint64]bool{4: true}}
	sink := startSink(t, st, rec)
	id := newSession(t, st, "test")
	turn(t, st, id)
	waitUntil(t, "the sink to let go", func() bool { return sink.Settled(t.Context()) && len(rec.got()) == 5 })
	if got := rec.got(); slices.Contains(got, "4:agent.message") || got[4] != "6:session.status_changed" {
		t.Fatalf("rendered %v", got)
	}
}

// TestSinkLetsGoOfASessionArchivedMidTurn: an archived session's turn
// never completes; the sink lets go of it anyway.
func TestSinkLetsGoOfASessionArchivedMidTurn(t *testing.T) {
	st := openStore(t, t.TempDir())
	rec := &recorder{}
	// No recheck timer: the archive's commit is what wakes the sink.
	sink := output.New(output.Config{Name: "test", Store: st, Renderer: rec, RetryMin: time.Millisecond, Recheck: time.Hour})
	if err := sink.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer sink.Stop(context.Background())
	id := newSession(t, st, "test")
	if _, err := st.Append(t.Context(), id, core.AppendRequest{TakeInputs: true, TurnID: "turn_1", Holder: "h",
		Events: []core.Event{core.NewEvent(core.TypeTurnStarted, core.LevelInternal, core.ActorSystem, struct{}{})}}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the turn start rendered", func() bool { return len(rec.got()) == 2 })
	if sink.Following() != 1 {
		t.Fatal("the sink let go of a running turn")
	}
	if _, err := st.Archive(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the sink to let go", func() bool { return sink.Settled(t.Context()) })
	if active, _ := st.ActiveSinkSessions(t.Context(), "test"); len(active) != 0 {
		t.Fatalf("still marked: %v", active)
	}
}

// closer is a recorder that counts Closed calls.
type closer struct {
	recorder
	closed chan string
}

func (c *closer) Closed(_ context.Context, s *core.Session) error {
	c.closed <- s.ID
	return nil
}

// startSink starts a sink named test over st.
func startSink(t *testing.T, st *bolt.Store, r output.Renderer) *output.Sink {
	t.Helper()
	sink := output.New(output.Config{Name: "test", Store: st, Renderer: r, RetryMin: time.Millisecond})
	if err := sink.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sink.Stop(context.Background()) })
	return sink
}

func TestSinkShowsAnIdleSessionArchived(t *testing.T) {
	st := openStore(t, t.TempDir())
	rec := &closer{closed: make(chan string, 10)}
	sink := startSink(t, st, rec)
	id := newSession(t, st, "test")
	turn(t, st, id)
	waitUntil(t, "the turn rendered and let go", func() bool { return len(rec.got()) == len(wantTurn) && sink.Settled(t.Context()) })
	select {
	case got := <-rec.closed:
		t.Fatalf("%s closed before it was archived", got)
	default:
	}
	if _, err := st.Archive(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-rec.closed:
		if got != id {
			t.Fatalf("closed %s, want %s", got, id)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the archive was never shown")
	}
	waitUntil(t, "the sink to let go again", func() bool { return sink.Settled(t.Context()) })
}
