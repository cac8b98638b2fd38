package postgres

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/storetest"
)

// clocked opens an empty store for a conformance test, its clock now
// (nil: the wall clock); fresh one on the wall clock.
func clocked(t *testing.T, now func() time.Time) *Store {
	s, _ := openTest(t, Options{Now: now})
	return s
}

func fresh(t *testing.T) *Store { return clocked(t, nil) }

func TestStoreConformance(t *testing.T) { storetest.Run(t, fresh) }

func TestSinkConformance(t *testing.T) { storetest.RunSinks(t, fresh) }

// replicas opens two stores on one fresh database, as two gateway
// replicas would share it.
func replicas(t *testing.T) [2]*Store {
	t.Helper()
	a, dsn := openTest(t, Options{})
	b, err := Open(t.Context(), dsn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return [2]*Store{a, b}
}

// TestClaimRaceAcrossReplicas: creators racing on one external key from
// two stores (no process-local ordering between them) end with one
// session holding every input.
func TestClaimRaceAcrossReplicas(t *testing.T) {
	stores := replicas(t)
	const n = 24
	results := make([]*core.CreateResult, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			results[i], errs[i] = stores[i%2].CreateSession(t.Context(), core.NewSession{
				Session:     core.Session{Origin: &core.Origin{Provider: "slack"}},
				ExternalKey: "slack:T1:C1:race",
				Inputs:      []core.Event{core.NewInput(core.TypeUserMessage, []byte(fmt.Sprintf(`{"text":"m%d"}`, i)))},
			})
		})
	}
	wg.Wait()
	created := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("creator %d: %v", i, errs[i])
		}
		if results[i].Session.ID != results[0].Session.ID {
			t.Fatalf("creators got sessions %s and %s", results[0].Session.ID, results[i].Session.ID)
		}
		if results[i].Created {
			created++
		}
	}
	if created != 1 {
		t.Fatalf("%d creators created the session, want 1", created)
	}
	pending, err := stores[0].Pending(t.Context(), results[0].Session.ID)
	if err != nil || len(pending) != n {
		t.Fatalf("%d pending, %v; want %d", len(pending), err, n)
	}
	counts, err := stores[1].CountByStatus(t.Context())
	if err != nil || counts[core.StatusQueued] != 1 || len(counts) != 1 {
		t.Fatalf("counts = %v, %v", counts, err)
	}
}

// TestDedupeRaceAcrossReplicas: one delivery received by both replicas
// at once is queued once; every other copy is a duplicate.
func TestDedupeRaceAcrossReplicas(t *testing.T) {
	stores := replicas(t)
	res, err := stores[0].CreateSession(t.Context(), core.NewSession{})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Session.ID
	const n = 16
	dups := make([]bool, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			r, err := stores[i%2].QueueInputs(t.Context(), id, core.QueueRequest{
				Inputs: []core.Event{core.NewInput(core.TypeUserMessage, []byte(`{"text":"once"}`))},
				Dedupe: []string{"gh:delivery:1", fmt.Sprintf("copy:%d", i)},
			})
			errs[i] = err
			if err == nil {
				dups[i] = r.Duplicate
			}
		})
	}
	wg.Wait()
	queued := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("copy %d: %v", i, errs[i])
		}
		if !dups[i] {
			queued++
		}
	}
	pending, err := stores[1].Pending(t.Context(), id)
	if err != nil || queued != 1 || len(pending) != 1 {
		t.Fatalf("%d copies queued, %d pending (%v); want 1", queued, len(pending), err)
	}
}

// TestSweepFollowsClock ages keys with Options.Now.
func TestSweepFollowsClock(t *testing.T) { storetest.RunClock(t, clocked) }

func TestAttachTokenConformance(t *testing.T) { storetest.RunAttachTokens(t, fresh) }
