package postgres

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// TestConcurrentAppendsAndAttempts: two replicas (two stores, two pools)
// deliver from one database while sessions append to it (some attempts
// failing and retried at once): every delivery is sent successfully
// exactly once, each stream in seq order, and no write fails or loses
// its claim.
func TestConcurrentAppendsAndAttempts(t *testing.T) {
	s, dsn := openTest(t, Options{})
	other, _ := replica(t, dsn)
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	const sessions, events = 4, 15
	var ids []string
	if _, err := s.CreateDestination(ctx, core.NewDestination{Destination: core.Destination{ID: core.NewID(core.PrefixDestination), URL: "https://h/global"}}); err != nil {
		t.Fatal(err)
	}
	for range sessions {
		res, err := s.CreateSession(ctx, core.NewSession{Session: core.Session{Agent: core.AgentRef{ID: "agt_a", Version: 1}}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.Session.ID)
		d := core.NewDestination{Destination: core.Destination{ID: core.NewID(core.PrefixDestination), URL: "https://h/own", SessionID: res.Session.ID}}
		if _, err := s.CreateDestination(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	sent := map[core.Stream][]uint64{} // the successful posts, as a receiver sees them
	attempts := 0
	var wg sync.WaitGroup
	errs := make(chan error, sessions+4)
	fail := func(err error) {
		errs <- err
		stop()
	}
	for i, id := range ids {
		// Half the sessions are written through each replica.
		w := []*Store{s, other}[i%2]
		wg.Go(func() {
			for i := range events {
				msg := core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorAgent, core.MessageBody{Text: fmt.Sprint(i)})
				if _, err := w.Append(ctx, id, core.AppendRequest{Events: []core.Event{msg}}); err != nil {
					fail(err)
					return
				}
			}
		})
	}
	want := sessions * events * 2
	done := func() bool {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, seqs := range sent {
			n += len(seqs)
		}
		return n >= want
	}
	// deliver drives a claimed stream as a dispatcher's worker does.
	deliver := func(r *Store, c core.ClaimedDelivery) error {
		for d := c.Delivery; d != nil; {
			mu.Lock()
			attempts++
			failed := attempts%3 == 0
			if !failed {
				sent[d.Stream()] = append(sent[d.Stream()], d.Seq)
			}
			mu.Unlock()
			res := core.AttemptResult{Success: !failed, Attempt: core.Attempt{At: core.Now()}}
			if failed {
				res.RetryAt = time.Now()
			}
			var err error
			if _, d, err = r.RecordAttempt(ctx, c.Claim, d.ID, res); err != nil {
				return err
			}
		}
		return nil
	}
	for i, r := range []*Store{s, other, s, other} {
		holder := fmt.Sprintf("run_%d", i%2)
		wg.Go(func() {
			for !done() && ctx.Err() == nil {
				due, _, err := r.ClaimDeliveries(ctx, holder, time.Minute, time.Now().Add(time.Hour), 2)
				if err != nil {
					fail(err)
					return
				}
				for _, c := range due {
					if err := deliver(r, c); err != nil {
						fail(err)
						return
					}
				}
				if len(due) == 0 {
					time.Sleep(time.Millisecond) // the appends are still coming
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(sent) != sessions*2 {
		t.Fatalf("%d streams delivered, want %d", len(sent), sessions*2)
	}
	want1 := make([]uint64, events)
	for i := range want1 {
		want1[i] = uint64(i + 1)
	}
	for st, seqs := range sent {
		if !slices.Equal(seqs, want1) {
			t.Fatalf("stream %v sent %v", st, seqs)
		}
	}
	ds, _, err := s.ListDeliveries(t.Context(), core.DeliveryQuery{State: core.DeliveryDelivered, Limit: 1000})
	if err != nil || len(ds) != want {
		t.Fatalf("%d delivered, want %d (%v)", len(ds), want, err)
	}
}
