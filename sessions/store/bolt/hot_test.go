package bolt

import (
	"errors"
	"fmt"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

func TestHotSessions(t *testing.T) {
	rec := func(id string) *core.Session { return &core.Session{ID: id, Status: core.StatusIdle} }
	tests := []struct {
		name string
		run  func(t *testing.T, h *hotSessions)
	}{
		{"other bytes miss", func(t *testing.T, h *hotSessions) {
			h.put(rec("s1"), []byte(`{"a":1}`))
			if _, ok := h.status("s1", []byte(`{"a":2}`)); ok {
				t.Fatal("status of other bytes answered")
			}
			if got := h.take("s1", []byte(`{"a":2}`)); got != nil {
				t.Fatalf("take of other bytes = %+v", got)
			}
		}},
		{"take hands the record over", func(t *testing.T, h *hotSessions) {
			want := rec("s1")
			h.put(want, []byte(`{"a":1}`))
			if st, ok := h.status("s1", []byte(`{"a":1}`)); !ok || st != core.StatusIdle {
				t.Fatalf("status = %q, %v", st, ok)
			}
			if got := h.take("s1", []byte(`{"a":1}`)); got != want {
				t.Fatalf("take = %p, want %p", got, want)
			}
			if got := h.take("s1", []byte(`{"a":1}`)); got != nil {
				t.Fatal("a record taken twice")
			}
		}},
		{"metadata is a copy, of the same bytes only", func(t *testing.T, h *hotSessions) {
			r := rec("s1")
			r.Metadata = map[string]string{"ticket": "T-1"}
			h.put(r, []byte(`{"a":1}`))
			if _, ok := h.metadata("s1", []byte(`{"a":2}`)); ok {
				t.Fatal("metadata of other bytes answered")
			}
			m, ok := h.metadata("s1", []byte(`{"a":1}`))
			if !ok || m["ticket"] != "T-1" {
				t.Fatalf("metadata = %v, %v", m, ok)
			}
			m["ticket"] = "changed"
			if r.Metadata["ticket"] != "T-1" {
				t.Fatal("the kept record changed through its metadata")
			}
		}},
		{"a read gets a copy, of the same bytes only", func(t *testing.T, h *hotSessions) {
			r := rec("s1")
			r.Metadata = map[string]string{"ticket": "T-1"}
			h.put(r, []byte(`{"a":1}`))
			if got := h.copyOf("s1", []byte(`{"a":2}`)); got != nil {
				t.Fatalf("copy of other bytes = %+v", got)
			}
			got := h.copyOf("s1", []byte(`{"a":1}`))
			if got == nil || got == r || got.Metadata["ticket"] != "T-1" {
				t.Fatalf("copy = %+v", got)
			}
			got.Metadata["ticket"] = "changed"
			if r.Metadata["ticket"] != "T-1" {
				t.Fatal("the kept record changed through a reader's copy")
			}
			if h.take("s1", []byte(`{"a":1}`)) != r {
				t.Fatal("a read took the record from the writers")
			}
			if got := h.copyOf("s1", []byte(`{"a":1}`)); got != nil {
				t.Fatal("a taken record was copied for a reader")
			}
		}},
		{"bounded", func(t *testing.T, h *hotSessions) {
			for i := range maxHotSessions + 10 {
				h.put(rec(fmt.Sprint(i)), []byte("x"))
			}
			if n := len(h.entries); n != maxHotSessions {
				t.Fatalf("kept %d records, want %d", n, maxHotSessions)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.run(t, &hotSessions{}) })
	}
}

// TestAppendAfterOtherWrites appends to a session whose record an append
// just cached, after another write path changed the record.
func TestAppendAfterOtherWrites(t *testing.T) {
	ev := core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorAgent, benchBody())
	tests := []struct {
		name    string
		between func(s *Store, id string) error
		check   func(t *testing.T, s *Store, id string, err error)
	}{
		{"archived", func(s *Store, id string) error {
			_, err := s.Archive(t.Context(), id)
			return err
		}, func(t *testing.T, _ *Store, _ string, err error) {
			if !errors.Is(err, core.ErrArchived) {
				t.Fatalf("append to an archived session: %v", err)
			}
		}},
		{"limits raised", func(s *Store, id string) error {
			_, err := s.SetSessionLimits(t.Context(), id, core.Limits{MaxSteps: 7}, core.ActorHuman)
			return err
		}, func(t *testing.T, s *Store, id string, err error) {
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.GetSession(t.Context(), id)
			if err != nil {
				t.Fatal(err)
			}
			if got.Limits == nil || got.Limits.MaxSteps != 7 || got.LastSeq != 2 {
				t.Fatalf("record after append: limits %+v, last seq %d", got.Limits, got.LastSeq)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := fresh(t)
			res, err := s.CreateSession(t.Context(), core.NewSession{})
			if err != nil {
				t.Fatal(err)
			}
			id := res.Session.ID
			req := core.AppendRequest{TurnID: "turn_x", Events: []core.Event{ev}}
			if _, err := s.Append(t.Context(), id, req); err != nil {
				t.Fatal(err)
			}
			if err := tt.between(s, id); err != nil {
				t.Fatal(err)
			}
			_, err = s.Append(t.Context(), id, req)
			tt.check(t, s, id, err)
		})
	}
}

// TestGetSessionFromAppends: a session read after an append (answered
// from the record the append kept) is the reader's own, and a write by
// another path is seen by the next read.
func TestGetSessionFromAppends(t *testing.T) {
	ctx := t.Context()
	s := fresh(t)
	res, err := s.CreateSession(ctx, core.NewSession{Session: core.Session{Metadata: map[string]string{"ticket": "T-1"}}})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Session.ID
	ev := core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorAgent, benchBody())
	if _, err := s.Append(ctx, id, core.AppendRequest{TurnID: "turn_1", Events: []core.Event{ev}}); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetSession(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if got.LastSeq == 0 || got.Metadata["ticket"] != "T-1" {
		t.Fatalf("after the append: %+v", got)
	}
	got.Metadata["ticket"] = "changed"
	got.Status = core.StatusFailed
	again, err := s.GetSession(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if again.Metadata["ticket"] != "T-1" || again.Status == core.StatusFailed {
		t.Fatalf("a reader's change reached the next read: %+v", again)
	}
	if _, err := s.Archive(ctx, id); err != nil {
		t.Fatal(err)
	}
	if after, err := s.GetSession(ctx, id); err != nil || after.Status != core.StatusArchived {
		t.Fatalf("after archiving: %+v %v", after, err)
	}
}

// TestQueuedRecordStaysTheCallers: the record CreateSession and
// QueueInputs return is the caller's, though a copy of it is kept for the
// next write: a change to it reaches neither a read nor the next queue
// or append, and what they see is what was written.
func TestQueuedRecordStaysTheCallers(t *testing.T) {
	ctx := t.Context()
	s := fresh(t)
	created, err := s.CreateSession(ctx, core.NewSession{Session: core.Session{Metadata: map[string]string{"ticket": "T-1"}}, Inputs: []core.Event{message("first")}})
	if err != nil {
		t.Fatal(err)
	}
	id := created.Session.ID
	created.Session.Metadata["ticket"] = "changed"
	created.Session.Status = core.StatusFailed
	queued, err := s.QueueInputs(ctx, id, core.QueueRequest{Inputs: []core.Event{message("second")}})
	if err != nil {
		t.Fatal(err)
	}
	if queued.Session.Metadata["ticket"] != "T-1" || queued.Session.Status != core.StatusQueued {
		t.Fatalf("queued on a record a caller changed: %+v", queued.Session)
	}
	queued.Session.Metadata["ticket"] = "changed again"
	queued.Session.LastSeq = 99
	logged, err := s.Append(ctx, id, core.AppendRequest{TurnID: "turn_1", TakeInputs: true, Events: []core.Event{
		core.NewEvent(core.TypeTurnStarted, core.LevelInternal, core.ActorSystem, struct{}{}),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(logged) != 3 || logged[0].Seq != 1 {
		t.Fatalf("append after the queue logged %d events from seq %d, want the 2 inputs and the turn from seq 1", len(logged), logged[0].Seq)
	}
	got, err := s.GetSession(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if got.Metadata["ticket"] != "T-1" || got.LastSeq != 3 || got.Status == core.StatusFailed {
		t.Fatalf("record after the append: metadata %v, last seq %d, status %s", got.Metadata, got.LastSeq, got.Status)
	}
}
