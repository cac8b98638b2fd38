package bolt

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

func opening(turn string) core.AppendRequest {
	return core.AppendRequest{TurnID: turn, Holder: "a", Events: []core.Event{
		core.NewEvent(core.TypeStatusChanged, core.LevelInternal, core.ActorSystem, core.StatusChangedBody{Status: core.StatusRunning}),
		core.NewEvent(core.TypeTurnStarted, core.LevelInternal, core.ActorSystem, struct{}{}),
	}}
}

func userText(text string) core.Event {
	b, _ := json.Marshal(core.MessageBody{Text: text})
	return core.NewInput(core.TypeUserMessage, b)
}

// TestTakeLeaseOpen: the lease's transaction opens the turn, as the
// harness's OpenTurn would under the new lease, only when the session
// would open one at once; otherwise it only grants the lease.
func TestTakeLeaseOpen(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, s *Store, id string)
		opens bool
	}{
		{"idle with a message", func(*testing.T, *Store, string) {}, true},
		{"nothing pending", func(t *testing.T, s *Store, id string) {
			if _, err := s.Append(t.Context(), id, core.AppendRequest{TakeInputs: true}); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"a turn open", func(t *testing.T, s *Store, id string) {
			req := opening("turn_open")
			if _, err := s.Append(t.Context(), id, req); err != nil {
				t.Fatal(err)
			}
			queue(t, s, id, userText("more"))
		}, false},
		{"an interrupt first", func(t *testing.T, s *Store, id string) {
			if _, err := s.Append(t.Context(), id, core.AppendRequest{TakeInputs: true}); err != nil {
				t.Fatal(err)
			}
			queue(t, s, id, core.NewInput(core.TypeUserInterrupt, []byte(`{}`)), userText("then this"))
		}, false},
		{"moved from another holder", func(t *testing.T, s *Store, id string) {
			l, ok, err := s.TakeLease(t.Context(), id, "b", time.Hour)
			if err != nil || !ok {
				t.Fatal(ok, err)
			}
			if err := s.ReleaseLease(t.Context(), l); err != nil {
				t.Fatal(err)
			}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := fresh(t)
			res, err := s.CreateSession(t.Context(), core.NewSession{Session: core.Session{Agent: core.AgentRef{ID: "agt_test", Version: 1}}, Inputs: []core.Event{userText("hi")}})
			if err != nil {
				t.Fatal(err)
			}
			id := res.Session.ID
			tc.setup(t, s, id)
			before, _ := s.Events(t.Context(), id, 0, 0)
			l, ok, opened, err := s.TakeLeaseOpen(t.Context(), id, "a", time.Hour, opening("turn_new"))
			if err != nil || !ok || l.Holder != "a" || l.Epoch == 0 {
				t.Fatalf("lease %+v, %v, %v", l, ok, err)
			}
			after, _ := s.Events(t.Context(), id, 0, 0)
			sess, _ := s.GetSession(t.Context(), id)
			if !tc.opens {
				if len(opened) != 0 || len(after) != len(before) {
					t.Fatalf("opened %d events, log %d → %d; want none", len(opened), len(before), len(after))
				}
				return
			}
			types := []string{}
			for _, e := range opened {
				types = append(types, e.Type)
				if e.TurnID != "turn_new" {
					t.Fatalf("event %s of turn %q", e.Type, e.TurnID)
				}
			}
			want := []string{core.TypeUserMessage, core.TypeStatusChanged, core.TypeTurnStarted}
			if len(types) != len(want) || types[0] != want[0] || types[1] != want[1] || types[2] != want[2] {
				t.Fatalf("opened %v, want %v", types, want)
			}
			if sess.TurnID != "turn_new" || sess.Status != core.StatusRunning {
				t.Fatalf("session turn %q status %s", sess.TurnID, sess.Status)
			}
			pending, _ := s.Pending(t.Context(), id)
			if len(pending) != 0 {
				t.Fatalf("%d inputs still pending", len(pending))
			}
			// The lease is live and fences the turn's writes.
			if _, ok, _, _ := s.TakeLeaseOpen(t.Context(), id, "b", time.Hour, opening("turn_b")); ok {
				t.Fatal("another holder took a live lease")
			}
			if _, err := s.Append(t.Context(), id, core.AppendRequest{Epoch: l.Epoch + 1, Events: []core.Event{userText("other")}}); !errors.Is(err, core.ErrLeaseLost) {
				t.Fatalf("append under another epoch: %v", err)
			}
			if _, err := s.Append(t.Context(), id, core.AppendRequest{Epoch: l.Epoch, Events: []core.Event{userText("ours")}}); err != nil {
				t.Fatalf("append under the lease: %v", err)
			}
		})
	}
}

// TestTakeLeaseOpenRefused: a lease another holder has is neither taken
// nor opens a turn, and an unknown session is an error.
func TestTakeLeaseOpenRefused(t *testing.T) {
	s := fresh(t)
	if _, _, _, err := s.TakeLeaseOpen(t.Context(), "ses_missing", "a", time.Hour, opening("t")); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("missing session: %v", err)
	}
	res, err := s.CreateSession(t.Context(), core.NewSession{Session: core.Session{Agent: core.AgentRef{ID: "agt_test", Version: 1}}, Inputs: []core.Event{userText("hi")}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.TakeLease(t.Context(), res.Session.ID, "b", time.Hour); err != nil || !ok {
		t.Fatal(ok, err)
	}
	_, ok, opened, err := s.TakeLeaseOpen(t.Context(), res.Session.ID, "a", time.Hour, opening("t"))
	if err != nil || ok || len(opened) != 0 {
		t.Fatalf("took a held lease: %v, %d events, %v", ok, len(opened), err)
	}
	if pending, _ := s.Pending(t.Context(), res.Session.ID); len(pending) != 1 {
		t.Fatalf("%d pending, want the message still queued", len(pending))
	}
}

func queue(t *testing.T, s *Store, id string, inputs ...core.Event) {
	t.Helper()
	if _, err := s.QueueInputs(t.Context(), id, core.QueueRequest{Inputs: inputs}); err != nil {
		t.Fatal(err)
	}
}
