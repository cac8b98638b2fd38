package storetest

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// SinkStore is a session store that keeps output sinks' positions: the
// store marks a session for its origin's sink when a turn starts.
type SinkStore interface {
	core.Store
	core.SinkStore
}

// RunSinks runs the core.SinkStore suite. open must return a fresh, empty
// store for each subtest.
func RunSinks[S SinkStore](t *testing.T, open func(t *testing.T) S) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s SinkStore)
	}{
		{"sinks/position", testSinkPosition},
		{"sinks/active", testSinkActive},
		{"sinks/invalid", testSinkInvalid},
		{"sinks/claim_excludes", testSinkClaimExcludes},
		{"sinks/claim_expires", testSinkClaimExpires},
		{"sinks/claim_release", testSinkClaimRelease},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
}

func testSinkPosition(t *testing.T, s SinkStore) {
	ctx := t.Context()
	p, err := s.SinkPosition(ctx, "chat", "ses_1")
	must(t, err)
	if p.Seq != 0 || len(p.State) != 0 {
		t.Fatalf("fresh position %+v", p)
	}
	must(t, s.SaveSinkPosition(ctx, "chat", "ses_1", core.Claim{}, core.SinkPosition{Seq: 7, State: []byte(`{ "status_ts": "1.2" }`)}))
	must(t, s.SaveSinkPosition(ctx, "forge", "ses_1", core.Claim{}, core.SinkPosition{Seq: 3}))
	p, err = s.SinkPosition(ctx, "chat", "ses_1")
	must(t, err)
	if p.Seq != 7 || string(p.State) != `{"status_ts":"1.2"}` {
		t.Fatalf("position %+v (%s)", p, p.State)
	}
	p, err = s.SinkPosition(ctx, "forge", "ses_1")
	must(t, err)
	if p.Seq != 3 || len(p.State) != 0 {
		t.Fatalf("other sink's position %+v", p)
	}
	wantErr(t, s.SaveSinkPosition(ctx, "chat", "ses_1", core.Claim{}, core.SinkPosition{State: []byte("{")}), core.ErrInvalid)
}

// originSession creates a session started on provider under key.
func originSession(t *testing.T, s core.Store, provider, key string) *core.Session {
	t.Helper()
	res, err := s.CreateSession(t.Context(), core.NewSession{
		Session:     core.Session{Agent: core.AgentRef{ID: "agt_test", Version: 1}, Origin: &core.Origin{Provider: provider, Key: key}},
		ExternalKey: key,
	})
	must(t, err)
	return res.Session
}

func testSinkActive(t *testing.T, s SinkStore) {
	ctx := t.Context()
	active := func(sink string, want ...string) {
		t.Helper()
		got, err := s.ActiveSinkSessions(ctx, sink)
		must(t, err)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("active sessions of %s: %v, want %v", sink, got, want)
		}
	}
	a := originSession(t, s, "chat", "chat:T1:C1:1")
	b := originSession(t, s, "chat", "chat:T1:C1:2")
	g := originSession(t, s, "forge", "forge:o/r#1")
	api := newSession(t, s)
	active("chat")
	for _, sess := range []*core.Session{a, b, g, api} {
		appendEvents(t, s, sess.ID, core.AppendRequest{TurnID: "turn_1", Holder: "h", Events: []core.Event{turnStarted()}})
	}
	// The turn.started that opens a turn marks the session for its
	// origin's sink; a session without an origin has none.
	active("chat", a.ID, b.ID)
	active("forge", g.ID)
	active("tracker")

	last := appendEvents(t, s, a.ID, core.AppendRequest{TurnID: "turn_1", Events: []core.Event{agentMessage("hi"), turnCompleted(core.ReasonCompleted, core.Usage{})}})
	end := last[len(last)-1].Seq
	released, err := s.ReleaseSink(ctx, "chat", a.ID, end-1)
	must(t, err)
	if released {
		t.Fatal("released a session whose last event was not rendered")
	}
	active("chat", a.ID, b.ID)
	released, err = s.ReleaseSink(ctx, "chat", a.ID, end)
	must(t, err)
	if !released {
		t.Fatal("not released after rendering the whole log")
	}
	active("chat", b.ID)

	// A new turn marks it again, so a release that saw the old end fails.
	appendEvents(t, s, a.ID, core.AppendRequest{TurnID: "turn_2", Holder: "h", Events: []core.Event{turnStarted()}})
	if released, err = s.ReleaseSink(ctx, "chat", a.ID, end); err != nil || released {
		t.Fatalf("release across a new turn: %v, %v", released, err)
	}
	active("chat", a.ID, b.ID)

	// Releasing an unmarked session, or one of another sink, is a no-op.
	if released, err = s.ReleaseSink(ctx, "chat", g.ID, 0); err != nil || !released {
		t.Fatalf("release of an unmarked session: %v, %v", released, err)
	}
	active("forge", g.ID)

	// A release that fails says the session is not released, marked or
	// not: its worker must not let go of it.
	over, cancel := context.WithCancel(ctx)
	cancel()
	for _, id := range []string{b.ID, api.ID} {
		if released, err = s.ReleaseSink(over, "chat", id, math.MaxUint64); err == nil || released {
			t.Fatalf("release on an ended context: %v, %v", released, err)
		}
	}
	active("chat", a.ID, b.ID)
}

func testSinkInvalid(t *testing.T, s SinkStore) {
	ctx := t.Context()
	_, err := s.SinkPosition(ctx, "", "ses_1")
	wantErr(t, err, core.ErrInvalid)
	wantErr(t, s.SaveSinkPosition(ctx, "a\x00b", "ses_1", core.Claim{}, core.SinkPosition{}), core.ErrInvalid)
	_, err = s.ReleaseSink(ctx, "chat", "", 1)
	wantErr(t, err, core.ErrInvalid)
}
