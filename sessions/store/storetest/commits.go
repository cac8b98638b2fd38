package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// nextChange reads the subscription's next change; the store publishes
// before it answers the write, so the change is there already.
func nextChange(t *testing.T, sub *core.Subscription) core.Change {
	t.Helper()
	select {
	case ch := <-sub.C:
		return ch
	case <-sub.Lagged:
		t.Fatal("subscription lagged")
	case <-time.After(30 * time.Second):
		t.Fatal("no change published after a committed write")
	}
	return core.Change{}
}

func noChange(t *testing.T, sub *core.Subscription) {
	t.Helper()
	select {
	case ch := <-sub.C:
		t.Fatalf("unexpected change %+v", ch)
	default:
	}
}

func testCommitsOrder(t *testing.T, s core.Store) {
	ctx := t.Context()
	sub := s.Subscribe("test", 64)
	defer sub.Close()
	res, err := s.CreateSession(ctx, core.NewSession{
		Session:     core.Session{Agent: core.AgentRef{ID: "agt_test", Version: 1}, Origin: &core.Origin{Provider: "chat", Key: "chat:T:C:1"}},
		ExternalKey: "chat:T:C:1",
		Inputs:      []core.Event{message("one")},
		Dedupe:      []string{"d1"},
	})
	must(t, err)
	id := res.Session.ID
	ch := nextChange(t, sub)
	// A store's own writes are not remote (metrics counts them).
	if ch.SessionID != id || ch.Provider != "chat" || ch.Status != core.StatusQueued || len(ch.Events) != 0 || ch.Remote ||
		!slices.Equal(texts(t, ch.Queued), []string{"one"}) || ch.Queued[0].ID != res.Inputs[0].ID {
		t.Fatalf("create change %+v", ch)
	}
	// A duplicate writes nothing, so nothing is published.
	if _, err := s.QueueInputs(ctx, id, core.QueueRequest{Inputs: []core.Event{message("again")}, Dedupe: []string{"d1"}}); err != nil {
		t.Fatal(err)
	}
	noChange(t, sub)
	if _, err := s.QueueInputs(ctx, id, core.QueueRequest{Inputs: []core.Event{interrupt()}}); err != nil {
		t.Fatal(err)
	}
	ch = nextChange(t, sub)
	if ch.SessionID != id || ch.Status != "" || !ch.Interrupts() || ch.StartsTurn() {
		t.Fatalf("queue change %+v", ch)
	}
	logged := appendEvents(t, s, id, core.AppendRequest{TakeInputs: true, TurnID: "turn_1", Holder: "h",
		Events: []core.Event{statusEvent(core.StatusRunning, ""), turnStarted()}})
	ch = nextChange(t, sub)
	if ch.SessionID != id || ch.Status != core.StatusRunning || !ch.StartsTurn() || len(ch.Events) != len(logged) || ch.Remote {
		t.Fatalf("append change %+v", ch)
	}
	for i, e := range ch.Events {
		if e.Seq != uint64(i+1) || e.ID != logged[i].ID {
			t.Fatalf("event %d of the change: seq %d id %s, logged %+v", i, e.Seq, e.ID, logged[i])
		}
	}
	if _, err := s.Archive(ctx, id); err != nil {
		t.Fatal(err)
	}
	if ch = nextChange(t, sub); ch.SessionID != id || ch.Status != core.StatusArchived {
		t.Fatalf("archive change %+v", ch)
	}
	// An API session has no provider.
	api := newSession(t, s, message("hi"))
	if ch = nextChange(t, sub); ch.SessionID != api.ID || ch.Provider != "" {
		t.Fatalf("api session change %+v", ch)
	}
}

func testCommitsLag(t *testing.T, s core.Store) {
	sess := newSession(t, s)
	sub := s.Subscribe("slow", 1)
	defer sub.Close()
	for i := range 3 {
		appendEvents(t, s, sess.ID, core.AppendRequest{Events: []core.Event{agentMessage(string(rune('a' + i)))}})
	}
	// The first change fits; the others are dropped, and the subscriber is
	// told to catch up from the store.
	select {
	case <-sub.Lagged:
	default:
		t.Fatal("a full subscription was not told it lagged")
	}
	if ch := <-sub.C; len(ch.Events) != 1 || ch.Events[0].Seq != 1 {
		t.Fatalf("first change %+v", ch)
	}
	// Closing stops delivery.
	sub.Close()
	appendEvents(t, s, sess.ID, core.AppendRequest{Events: []core.Event{agentMessage("z")}})
	noChange(t, sub)
}

func testCreateOnlyExisting(t *testing.T, s core.Store) {
	ctx := t.Context()
	key := "chat:T:C:9"
	steer := core.NewSession{
		Session:      core.Session{Agent: core.AgentRef{ID: "agt_test", Version: 1}, Origin: &core.Origin{Provider: "chat"}},
		ExternalKey:  key,
		Inputs:       []core.Event{message("reply")},
		Dedupe:       []string{"steer-1"},
		OnlyExisting: true,
	}
	res, err := s.CreateSession(ctx, steer)
	must(t, err)
	if res.Session != nil || res.Created || res.Duplicate || len(res.Inputs) != 0 {
		t.Fatalf("steer without a session: %+v", res)
	}
	if _, err := s.SessionByKey(ctx, key); err == nil {
		t.Fatal("a steer created a session")
	}
	// Nothing was written, so the same delivery is not a duplicate later.
	start := steer
	start.OnlyExisting, start.Dedupe, start.Inputs = false, []string{"start-1"}, []core.Event{message("mention")}
	start.StartInputs = []core.Event{message("mention with context")}
	res, err = s.CreateSession(ctx, start)
	must(t, err)
	if !res.Created || !slices.Equal(texts(t, res.Inputs), []string{"mention with context"}) {
		t.Fatalf("start: %+v", res)
	}
	res, err = s.CreateSession(ctx, steer)
	must(t, err)
	if res.Created || res.Duplicate || res.Session == nil || !slices.Equal(texts(t, res.Inputs), []string{"reply"}) {
		t.Fatalf("steer of an existing session: %+v", res)
	}
	// StartInputs are only for the call that creates it.
	again := start
	again.Dedupe = []string{"start-2"}
	res, err = s.CreateSession(ctx, again)
	must(t, err)
	if res.Created || !slices.Equal(texts(t, res.Inputs), []string{"mention"}) {
		t.Fatalf("second start: %+v", res)
	}
	pending, err := s.Pending(ctx, res.Session.ID)
	must(t, err)
	if got := texts(t, pending); !slices.Equal(got, []string{"mention with context", "reply", "mention"}) {
		t.Fatalf("pending %v", got)
	}
	res, err = s.CreateSession(ctx, steer)
	must(t, err)
	if !res.Duplicate {
		t.Fatalf("repeated steer: %+v", res)
	}
}
