package bolt

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/storetest"
)

func openTemp(t *testing.T, opts Options) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "switchboard.db")
	s, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, path
}

// clocked opens an empty store for a conformance test, its clock now
// (nil: the wall clock); fresh one on the wall clock.
func clocked(t *testing.T, now func() time.Time) *Store {
	s, _ := openTemp(t, Options{Now: now})
	return s
}

func fresh(t *testing.T) *Store { return clocked(t, nil) }

func TestStoreConformance(t *testing.T) { storetest.Run(t, fresh) }

func TestOpenLockedFailsFast(t *testing.T) {
	_, path := openTemp(t, Options{})
	start := time.Now()
	second, err := Open(path, Options{LockTimeout: 100 * time.Millisecond})
	if err == nil {
		_ = second.Close()
		t.Fatal("second open of a held database succeeded")
	}
	if !errors.Is(err, core.ErrLocked) {
		t.Fatalf("err = %v, want ErrLocked", err)
	}
	if !strings.Contains(err.Error(), path) {
		t.Fatalf("error %q does not name %s", err, path)
	}
	// It gives up rather than waiting for the lock: bounded generously,
	// since a busy machine is slow.
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("second open took %v", d)
	}
}

func TestDataSurvivesReopen(t *testing.T) {
	ctx := t.Context()
	s, path := openTemp(t, Options{})
	agent, err := s.CreateAgent(ctx, &core.Agent{Name: "keep", Model: "anthropic/x"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.CreateSession(ctx, core.NewSession{
		Session:     core.Session{Agent: core.AgentRef{ID: agent.ID, Version: 1}},
		ExternalKey: "slack:T:C:1",
		Dedupe:      []string{"slack:Ev1"},
		Inputs:      []core.Event{core.NewInput(core.TypeUserMessage, []byte(`{"text":"a"}`)), core.NewInput(core.TypeUserMessage, []byte(`{"text":"b"}`))},
	})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Session.ID
	if _, err := s.QueueInputs(ctx, id, core.QueueRequest{Inputs: []core.Event{core.NewInput(core.TypeUserInterrupt, nil)}}); err != nil {
		t.Fatal(err)
	}
	logged, err := s.Append(ctx, id, core.AppendRequest{TakeInputs: true, TurnID: "turn_1", Holder: "h1", Events: []core.Event{
		core.NewEvent(core.TypeTurnStarted, core.LevelInternal, core.ActorSystem, struct{}{}),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.QueueInputs(ctx, id, core.QueueRequest{Inputs: []core.Event{core.NewInput(core.TypeUserMessage, []byte(`{"text":"c"}`))}}); err != nil {
		t.Fatal(err)
	}
	before, err := s.GetSession(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	r, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	if a, err := r.GetAgent(ctx, "keep"); err != nil || a.ID != agent.ID {
		t.Fatalf("agent after reopen = %v, %v", a, err)
	}
	after, err := r.SessionByKey(ctx, "slack:T:C:1")
	if err != nil {
		t.Fatal(err)
	}
	if j(t, after) != j(t, before) {
		t.Fatalf("session changed across reopen:\n%s\n%s", j(t, after), j(t, before))
	}
	events, err := r.Events(ctx, id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if j(t, events) != j(t, logged) {
		t.Fatalf("log changed across reopen:\n%s\n%s", j(t, events), j(t, logged))
	}
	pending, err := r.Pending(ctx, id)
	if err != nil || len(pending) != 1 {
		t.Fatalf("pending after reopen = %v, %v", pending, err)
	}
	if open, err := r.OpenTurns(ctx); err != nil || open[id] != "h1" {
		t.Fatalf("open turns after reopen = %v, %v", open, err)
	}
	if due, err := r.DueWakes(ctx, time.Now(), 0); err != nil || len(due) != 1 || due[0] != id {
		t.Fatalf("wakes after reopen = %v, %v", due, err)
	}
	if counts, err := r.CountByStatus(ctx); err != nil || counts[core.StatusQueued] != 1 || len(counts) != 1 {
		t.Fatalf("counts after reopen = %v, %v", counts, err)
	}
	dup, err := r.CreateSession(ctx, core.NewSession{ExternalKey: "slack:T:C:1", Dedupe: []string{"slack:Ev1"}})
	if err != nil || !dup.Duplicate {
		t.Fatalf("dedupe key lost across reopen: %+v, %v", dup, err)
	}
	next, err := r.Append(ctx, id, core.AppendRequest{Events: []core.Event{core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorAgent, core.MessageBody{Text: "x"})}})
	if err != nil || next[0].Seq != uint64(len(logged)+1) {
		t.Fatalf("seq after reopen = %+v, %v", next, err)
	}
}

func j(t *testing.T, v any) string {
	t.Helper()
	b, err := core.EncodeJSON(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSweepFollowsClock ages keys with Options.Now.
func TestSweepFollowsClock(t *testing.T) { storetest.RunClock(t, clocked) }

// TestBatchRerunIsSafe makes one call of a shared commit fail, which makes
// the committer run the others again; each input must still be queued once.
func TestBatchRerunIsSafe(t *testing.T) {
	ctx := t.Context()
	s, _ := openTemp(t, Options{})
	const n = 16
	errs := make([]error, 2*n)
	var wg sync.WaitGroup
	for i := range 2 * n {
		wg.Go(func() {
			id := "ses_same"
			if i%2 == 1 {
				id = fmt.Sprintf("ses_%02d", i)
			}
			_, errs[i] = s.CreateSession(ctx, core.NewSession{
				Session: core.Session{ID: id},
				Inputs:  []core.Event{core.NewInput(core.TypeUserMessage, []byte(fmt.Sprintf(`{"text":"%d"}`, i)))},
			})
		})
	}
	wg.Wait()
	conflicts := 0
	for i, err := range errs {
		switch {
		case errors.Is(err, core.ErrConflict) && i%2 == 0:
			conflicts++
		case err != nil:
			t.Fatalf("create %d: %v", i, err)
		}
	}
	if conflicts != n-1 {
		t.Fatalf("%d conflicts on one id, want %d", conflicts, n-1)
	}
	page, err := s.ListSessions(ctx, core.SessionFilter{})
	all := page.Sessions
	if err != nil || len(all) != n+1 {
		t.Fatalf("%d sessions, %v; want %d", len(all), err, n+1)
	}
	for _, sess := range all {
		pending, err := s.Pending(ctx, sess.ID)
		if err != nil || len(pending) != 1 {
			t.Fatalf("session %s has %d pending, %v; want 1", sess.ID, len(pending), err)
		}
	}
	if counts, err := s.CountByStatus(ctx); err != nil || counts[core.StatusQueued] != n+1 {
		t.Fatalf("counts = %v, %v", counts, err)
	}
	if due, err := s.DueWakes(ctx, time.Now().Add(time.Second), 0); err != nil || len(due) != n+1 {
		t.Fatalf("%d wakes, %v", len(due), err)
	}
}

func TestAttachTokenConformance(t *testing.T) { storetest.RunAttachTokens(t, fresh) }
