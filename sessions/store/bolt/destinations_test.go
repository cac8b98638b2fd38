package bolt

import (
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/storetest"
)

func TestOutboxConformance(t *testing.T) { storetest.RunDeliveries(t, fresh) }

// TestOutboxSurvivesReopen proves the queue is durable: what was due
// before a close is due after the reopen, in the same order, whoever
// had claimed it.
func TestOutboxSurvivesReopen(t *testing.T) {
	s, path := openTemp(t, Options{})
	ctx := t.Context()
	queueDeliveries(t, s, 3)
	// A claim of the process before the reopen holds nothing after it.
	if due, _, err := s.ClaimDeliveries(ctx, "run_gone", time.Hour, time.Now().Add(time.Second), 10); err != nil || len(due) != 1 {
		t.Fatalf("due before the reopen = %+v, %v", due, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	var seqs []uint64
	due, _, err := s2.ClaimDeliveries(ctx, "run_a", time.Minute, time.Now().Add(time.Second), 10)
	if err != nil || len(due) != 1 {
		t.Fatalf("due after reopen = %+v, %v", due, err)
	}
	for d := due[0].Delivery; err == nil && d != nil; {
		seqs = append(seqs, d.Seq)
		_, d, err = s2.RecordAttempt(ctx, due[0].Claim, d.ID, core.AttemptResult{Success: true, Attempt: core.Attempt{At: core.Now()}})
	}
	if err != nil || len(seqs) != 3 || seqs[0] != 1 || seqs[2] != 3 {
		t.Fatalf("after reopen delivered %v, err %v", seqs, err)
	}
}

// TestClaimExpiresByTheStoreClock: a delivery stream's claim runs out by
// the store's clock, not by the time the caller passes.
func TestClaimExpiresByTheStoreClock(t *testing.T) {
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}
	s, _ := openTemp(t, Options{Now: clock})
	ctx := t.Context()
	queueDeliveries(t, s, 1)
	due := now.Add(time.Second)
	a, _, err := s.ClaimDeliveries(ctx, "run_a", time.Minute, due, 10)
	if err != nil || len(a) != 1 {
		t.Fatalf("a claimed %+v, %v", a, err)
	}
	b, next, err := s.ClaimDeliveries(ctx, "run_b", time.Minute, due.Add(time.Hour), 10)
	if err != nil || len(b) != 0 || !next.Equal(due.Add(time.Hour+time.Minute)) {
		t.Fatalf("b claimed %+v, next %v, %v; want none, next a minute on", b, next, err)
	}
	mu.Lock()
	now = now.Add(time.Minute)
	mu.Unlock()
	b, _, err = s.ClaimDeliveries(ctx, "run_b", time.Minute, due, 10)
	if err != nil || len(b) != 1 || b[0].Claim.Epoch <= a[0].Claim.Epoch {
		t.Fatalf("b claimed %+v, %v after a's claim ran out", b, err)
	}
}

// queueDeliveries makes a session with a destination and logs n events,
// which queue n deliveries in one stream.
func queueDeliveries(t *testing.T, s *Store, n int) {
	t.Helper()
	ctx := t.Context()
	res, err := s.CreateSession(ctx, core.NewSession{Session: core.Session{Agent: core.AgentRef{ID: "agt_a", Version: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	d := core.NewDestination{Destination: core.Destination{ID: core.NewID(core.PrefixDestination), URL: "http://h/x", SessionID: res.Session.ID}}
	if _, err := s.CreateDestination(ctx, d); err != nil {
		t.Fatal(err)
	}
	msg := core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorAgent, core.MessageBody{Text: "x"})
	for range n {
		if _, err := s.Append(ctx, res.Session.ID, core.AppendRequest{Events: []core.Event{msg}}); err != nil {
			t.Fatal(err)
		}
	}
}
