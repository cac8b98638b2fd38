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

// TestConcurrentAppendsAndAttempts: sessions appending while two workers
// deliver (some attempts failing and retried at once) end with every
// stream delivered exactly once each, in seq order, and no write failing.
func TestConcurrentAppendsAndAttempts(t *testing.T) {
	s, _ := openTest(t, Options{})
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
	busy := map[core.Stream]bool{}
	got := map[core.Stream][]uint64{}
	delivered, attempts := map[string]bool{}, 0
	var wg sync.WaitGroup
	errs := make(chan error, sessions+2)
	fail := func(err error) {
		errs <- err
		stop()
	}
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range events {
				msg := core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorAgent, core.MessageBody{Text: fmt.Sprint(i)})
				if _, err := s.Append(ctx, id, core.AppendRequest{Events: []core.Event{msg}}); err != nil {
					fail(err)
					return
				}
			}
		}()
	}
	want := sessions * events * 2
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				done := len(delivered) == want
				mu.Unlock()
				if done || ctx.Err() != nil {
					return
				}
				due, _, err := s.DueDeliveries(ctx, time.Now().Add(time.Hour), 4, func(st core.Stream) bool {
					mu.Lock()
					defer mu.Unlock()
					return busy[st]
				})
				if err != nil {
					fail(err)
					return
				}
				mu.Lock()
				var mine []*core.Delivery
				for _, d := range due {
					if !busy[d.Stream()] {
						busy[d.Stream()] = true
						mine = append(mine, d)
					}
				}
				mu.Unlock()
				for _, d := range mine {
					mu.Lock()
					attempts++
					failed := attempts%3 == 0
					mu.Unlock()
					r := core.AttemptResult{Success: !failed, Attempt: core.Attempt{At: core.Now()}}
					if failed {
						r.RetryAt = time.Now()
					}
					stored, _, err := s.RecordAttempt(ctx, d.ID, r)
					if err != nil {
						fail(err)
						return
					}
					mu.Lock()
					// A worker's due list may be stale: a delivery it
					// attempts again stays delivered, counted once.
					if stored.State == core.DeliveryDelivered && !delivered[d.ID] {
						got[d.Stream()] = append(got[d.Stream()], d.Seq)
						delivered[d.ID] = true
					}
					busy[d.Stream()] = false
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(got) != sessions*2 {
		t.Fatalf("%d streams delivered, want %d", len(got), sessions*2)
	}
	for st, seqs := range got {
		want := make([]uint64, events)
		for i := range want {
			want[i] = uint64(i + 1)
		}
		if !slices.Equal(seqs, want) {
			t.Fatalf("stream %v delivered %v", st, seqs)
		}
	}
}
