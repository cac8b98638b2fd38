package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/switchboardhq/switchboard/core"
)

// patience bounds every wait for a notification to travel between
// replicas.
const patience = time.Minute

// remoteChange waits for the subscription's next change; a lag fails.
func remoteChange(t *testing.T, sub *core.Subscription) core.Change {
	t.Helper()
	select {
	case ch := <-sub.C:
		return ch
	case <-sub.Lagged:
		t.Fatal("subscription lagged")
	case <-time.After(patience):
		t.Fatal("no change arrived from the other replica")
	}
	return core.Change{}
}

func waitLagged(t *testing.T, sub *core.Subscription) {
	t.Helper()
	select {
	case <-sub.Lagged:
	case <-time.After(patience):
		t.Fatal("the subscription was never told it lagged")
	}
}

func agentText(text string) core.Event {
	return core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorAgent, core.MessageBody{Text: text})
}

func userText(text string) core.Event {
	return core.NewInput(core.TypeUserMessage, json.RawMessage(fmt.Sprintf(`{"text":%q}`, text)))
}

func mustAppend(t *testing.T, s *Store, id string, req core.AppendRequest) []core.Event {
	t.Helper()
	out, err := s.Append(t.Context(), id, req)
	if err != nil {
		t.Fatalf("append: %v", err)
	}
	return out
}

// TestReplicaSeesEvents: the events appended through one replica reach
// the other's subscribers in seq order, once each, with their bodies;
// the writer's own subscribers get each of its changes once.
func TestReplicaSeesEvents(t *testing.T) {
	stores := replicas(t)
	a, b := stores[0], stores[1]
	ctx := t.Context()
	subA, subB := a.Subscribe("a", 1024), b.Subscribe("b", 1024)
	defer subA.Close()
	defer subB.Close()

	res, err := a.CreateSession(ctx, core.NewSession{
		Session: core.Session{Origin: &core.Origin{Provider: "slack", Key: "slack:T:C:1"}},
		Inputs:  []core.Event{userText("hi")},
	})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Session.ID
	ch := remoteChange(t, subB)
	if ch.SessionID != id || ch.Provider != "slack" || ch.Status != core.StatusQueued || len(ch.Events) != 0 ||
		len(ch.Queued) != 1 || ch.Queued[0].ID != res.Inputs[0].ID || ch.Queued[0].Type != core.TypeUserMessage {
		t.Fatalf("create change %+v", ch)
	}

	writes := 1
	mustAppend(t, a, id, core.AppendRequest{TakeInputs: true, TurnID: "turn_1", Holder: "h", Events: []core.Event{
		core.NewEvent(core.TypeStatusChanged, core.LevelInternal, core.ActorSystem, core.StatusChangedBody{Status: core.StatusRunning}),
		core.NewEvent(core.TypeTurnStarted, core.LevelInternal, core.ActorSystem, struct{}{}),
	}})
	writes++
	for i := range 5 {
		mustAppend(t, a, id, core.AppendRequest{TurnID: "turn_1", Events: []core.Event{agentText(fmt.Sprint("part ", i))}})
		writes++
	}
	last := mustAppend(t, a, id, core.AppendRequest{TurnID: "turn_1", Events: []core.Event{agentText("x"), agentText("y"), agentText("z")}})
	writes++
	want, err := a.Events(ctx, id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}

	var got []core.Event
	for len(got) < len(want) {
		ch := remoteChange(t, subB)
		if ch.SessionID != id || len(ch.Events) == 0 {
			t.Fatalf("change %+v, want events of %s", ch, id)
		}
		if !ch.Remote {
			t.Fatalf("change %+v from the other replica is not marked remote", ch)
		}
		if len(got) == 0 && (!ch.StartsTurn() || ch.Status != core.StatusRunning || ch.Provider != "slack") {
			t.Fatalf("the turn's first change %+v", ch)
		}
		got = append(got, ch.Events...)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("replica b saw\n%+v\nthe log holds\n%+v", got, want)
	}
	if got[len(got)-1].Seq != last[len(last)-1].Seq {
		t.Fatalf("last seq %d, appended %d", got[len(got)-1].Seq, last[len(last)-1].Seq)
	}

	// A write through b marks the end: a sees its own changes once before
	// it (its notifications are skipped), then b's.
	marker, err := b.CreateSession(ctx, core.NewSession{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range writes {
		if ch := remoteChange(t, subA); ch.SessionID != id || ch.Remote {
			t.Fatalf("a's change %d is %+v, want its own (not remote) of %s", i, ch, id)
		}
	}
	if ch := remoteChange(t, subA); ch.SessionID != marker.Session.ID || ch.Provider != "" || !ch.Remote {
		t.Fatalf("after its own changes a saw %+v, want b's session %s", ch, marker.Session.ID)
	}
	// And b sees its own change once: the next is a's after it.
	end, err := a.CreateSession(ctx, core.NewSession{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{marker.Session.ID, end.Session.ID} {
		if ch := remoteChange(t, subB); ch.SessionID != want {
			t.Fatalf("b saw %+v, want a change of %s", ch, want)
		}
	}
}

// TestReplicaSeesInputs: what the runtime and the archive listeners of
// another replica act on arrives there.
func TestReplicaSeesInputs(t *testing.T) {
	stores := replicas(t)
	a, b := stores[0], stores[1]
	sub := b.Subscribe("b", 64)
	defer sub.Close()
	res, err := a.CreateSession(t.Context(), core.NewSession{Session: core.Session{Origin: &core.Origin{Provider: "github"}}})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Session.ID
	if ch := remoteChange(t, sub); ch.SessionID != id || len(ch.Queued) != 0 || ch.Provider != "github" {
		t.Fatalf("create change %+v", ch)
	}
	for _, tc := range []struct {
		name  string
		write func() error
		check func(core.Change) bool
	}{
		{"input", func() error {
			_, err := a.QueueInputs(t.Context(), id, core.QueueRequest{Inputs: []core.Event{userText("one"), userText("two")}})
			return err
		}, func(c core.Change) bool {
			return len(c.Queued) == 2 && !c.Interrupts() && c.Status == core.StatusQueued
		}},
		{"interrupt", func() error {
			_, err := a.QueueInputs(t.Context(), id, core.QueueRequest{Inputs: []core.Event{core.NewInput(core.TypeUserInterrupt, nil)}})
			return err
		}, func(c core.Change) bool {
			return len(c.Queued) == 1 && c.Interrupts() && c.Status == ""
		}},
		{"archive", func() error {
			_, err := a.Archive(t.Context(), id)
			return err
		}, func(c core.Change) bool {
			return c.Status == core.StatusArchived && len(c.Queued) == 0 && len(c.Events) == 0
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.write(); err != nil {
				t.Fatal(err)
			}
			if ch := remoteChange(t, sub); ch.SessionID != id || ch.Provider != "github" || !tc.check(ch) {
				t.Fatalf("change %+v", ch)
			}
		})
	}
}

// TestReplicaSeesConcurrentSessions: the appends of many sessions at
// once through one replica reach the other with every seq of every
// session once, in order per session.
func TestReplicaSeesConcurrentSessions(t *testing.T) {
	stores := replicas(t)
	a, b := stores[0], stores[1]
	const sessions, appends = 16, 40
	sub := b.Subscribe("b", 4*sessions*appends)
	defer sub.Close()
	ids := make([]string, sessions)
	for i := range ids {
		res, err := a.CreateSession(t.Context(), core.NewSession{})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = res.Session.ID
	}
	var wg sync.WaitGroup
	errs := make(chan error, sessions)
	for _, id := range ids {
		wg.Go(func() {
			for j := range appends {
				if _, err := a.Append(t.Context(), id, core.AppendRequest{Events: []core.Event{agentText(fmt.Sprint(j))}}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	last := map[string]uint64{}
	for _, id := range ids {
		last[id] = 0
	}
	for done := 0; done < sessions; {
		ch := remoteChange(t, sub)
		for _, e := range ch.Events {
			prev, ok := last[ch.SessionID]
			if !ok {
				t.Fatalf("events of unknown session %s", ch.SessionID)
			}
			if e.Seq != prev+1 {
				t.Fatalf("session %s: seq %d after %d", ch.SessionID, e.Seq, prev)
			}
			var body core.MessageBody
			if err := e.Decode(&body); err != nil || body.Text != fmt.Sprint(e.Seq-1) {
				t.Fatalf("session %s seq %d: body %s (%v)", ch.SessionID, e.Seq, e.Body, err)
			}
			if last[ch.SessionID] = e.Seq; e.Seq == appends {
				done++
			}
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	select {
	case ch := <-sub.C:
		t.Fatalf("a change after every seq arrived: %+v", ch)
	default:
	}
}

// TestReplicaListensAgain: when the listening connection breaks, every
// subscriber is told it may have missed changes, and the changes
// committed after the listener is back arrive again.
func TestReplicaListensAgain(t *testing.T) {
	a, dsn := openTest(t, Options{})
	b, _ := replica(t, dsn)
	res, err := a.CreateSession(t.Context(), core.NewSession{})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Session.ID
	sub, other := b.Subscribe("b", 64), b.Subscribe("other", 64)
	defer sub.Close()
	defer other.Close()

	admin, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(t.Context())
	pid := b.listener.pid.Load()
	var ended bool
	if err := admin.QueryRow(t.Context(), `SELECT pg_terminate_backend($1)`, int32(pid)).Scan(&ended); err != nil || !ended {
		t.Fatalf("terminate the listener's backend %d: %v, %v", pid, ended, err)
	}
	waitLagged(t, sub)
	waitLagged(t, other)
	if now := b.listener.pid.Load(); now == pid {
		t.Fatalf("lag announced before listening again (backend %d)", now)
	}
	mustAppend(t, a, id, core.AppendRequest{Events: []core.Event{agentText("after")}})
	for {
		ch := remoteChange(t, sub)
		if ch.SessionID == id && len(ch.Events) == 1 && ch.Events[0].Seq == 1 {
			break
		}
		if len(ch.Events) > 0 {
			t.Fatalf("unexpected change %+v", ch)
		}
	}
}

// TestListenerStops: Close ends the listener whether it waits for a
// notification or backs off between attempts to listen again.
func TestListenerStops(t *testing.T) {
	t.Run("waiting", func(t *testing.T) {
		s, _ := openTest(t, Options{})
		closed := make(chan struct{})
		go func() { s.Close(); close(closed) }()
		select {
		case <-closed:
		case <-time.After(patience):
			t.Fatal("Close did not return")
		}
		select {
		case <-s.listener.done:
		default:
			t.Fatal("Close returned while the listener runs")
		}
	})
	t.Run("reconnecting", func(t *testing.T) {
		logs := &signalHandler{msgs: make(chan string, 16)}
		s, _ := openTest(t, Options{Logger: slog.New(logs)})
		cfg, err := pgx.ParseConfig("postgres://nobody@127.0.0.1:1/none?connect_timeout=5")
		if err != nil {
			t.Fatal(err)
		}
		l := &listener{s: s, cfg: cfg, channel: s.channel}
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		got := make(chan *pgx.Conn)
		go func() { got <- l.reconnect(ctx) }()
		for msg := ""; msg != msgRetrying; {
			select {
			case msg = <-logs.msgs:
			case <-time.After(patience):
				t.Fatal("the listener never backed off")
			}
		}
		cancel()
		select {
		case conn := <-got:
			if conn != nil {
				t.Fatal("reconnect to nowhere returned a connection")
			}
		case <-time.After(patience):
			t.Fatal("reconnect did not stop while backing off")
		}
	})
}

// signalHandler passes on the messages logged.
type signalHandler struct{ msgs chan string }

func (h *signalHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *signalHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *signalHandler) WithGroup(string) slog.Handler            { return h }
func (h *signalHandler) Handle(_ context.Context, r slog.Record) error {
	select {
	case h.msgs <- r.Message:
	default:
	}
	return nil
}
