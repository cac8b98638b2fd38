package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// testClaimsExclusive: holders claiming at once never get the same stream
// while its claim is live, and between them get every due stream.
func testClaimsExclusive(t *testing.T, s DeliveryStore) {
	const streams, holders = 12, 4
	createDest(t, s, "", core.EventFilter{})
	for range streams {
		say(t, s, sessionOf(t, s, "agt_a").ID, "one", "two")
	}
	var mu sync.Mutex
	owner := map[core.Stream]string{}
	var wg sync.WaitGroup
	errs := make(chan error, holders)
	for i := range holders {
		holder := fmt.Sprintf("h%d", i)
		wg.Go(func() {
			for range streams {
				ds, _, err := s.ClaimDeliveries(t.Context(), holder, time.Hour, later(), 2)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				for _, d := range ds {
					if prev, ok := owner[d.Stream()]; ok {
						errs <- fmt.Errorf("stream %v claimed by %s and by %s", d.Stream(), prev, holder)
					}
					owner[d.Stream()] = holder
					if d.Seq != 1 {
						errs <- fmt.Errorf("head of %v is seq %d", d.Stream(), d.Seq)
					}
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(owner) != streams {
		t.Fatalf("%d streams claimed, want %d", len(owner), streams)
	}
}

// testClaimsExpiry: a live claim holds its stream back from others until
// it runs out by the store's clock; then it is taken over with a higher
// epoch, its holder's late attempt is refused and changes nothing, and the
// stream goes on in order under the new claim.
func testClaimsExpiry(t *testing.T, s DeliveryStore) {
	ctx := t.Context()
	createDest(t, s, "", core.EventFilter{})
	say(t, s, sessionOf(t, s, "agt_a").ID, "kept")
	now := later()
	ds, _, err := s.ClaimDeliveries(ctx, "a", time.Hour, now, 10)
	must(t, err)
	if len(ds) != 1 {
		t.Fatalf("a claimed %+v", ds)
	}
	// Its holder does not wait for its own claim; another waits for it to
	// run out, and no longer.
	none, next, err := s.ClaimDeliveries(ctx, "a", time.Hour, now, 10)
	must(t, err)
	if len(none) != 0 || !next.IsZero() {
		t.Fatalf("a claimed %+v again, next %v", none, next)
	}
	none, next, err = s.ClaimDeliveries(ctx, "b", time.Hour, now, 10)
	must(t, err)
	if len(none) != 0 || !next.After(now) || next.After(now.Add(time.Hour)) {
		t.Fatalf("b claimed %+v, next %v; want none until a's claim ends, within the hour from %v", none, next, now)
	}
	_, _, err = s.ClaimDeliveries(ctx, "", time.Hour, now, 10)
	wantErr(t, err, core.ErrInvalid)

	say(t, s, sessionOf(t, s, "agt_a").ID, "one", "two")
	ds, _, err = s.ClaimDeliveries(ctx, "a", time.Millisecond, later(), 10)
	must(t, err)
	if len(ds) != 1 || ds[0].Seq != 1 {
		t.Fatalf("a claimed %+v", ds)
	}
	held := ds[0]
	// a is paused past its claim.
	var took core.ClaimedDelivery
	eventually(t, "b's claim after a's ran out", func() bool {
		ds, _, err := s.ClaimDeliveries(ctx, "b", time.Hour, later(), 10)
		must(t, err)
		if len(ds) == 0 {
			return false
		}
		took = ds[0]
		return true
	})
	if took.ID != held.ID || took.Claim.Holder != "b" || took.Claim.Epoch <= held.Claim.Epoch {
		t.Fatalf("takeover = %+v, want %s above epoch %d", took, held.ID, held.Claim.Epoch)
	}
	_, _, err = s.RecordAttempt(ctx, held.Claim, held.ID, ok())
	wantErr(t, err, core.ErrLeaseLost)
	if d, err := s.GetDelivery(ctx, held.ID); err != nil || d.State != core.DeliveryPending || d.AttemptCount != 0 {
		t.Fatalf("a refused attempt changed the delivery: %+v, %v", d, err)
	}
	_, _, err = s.RecordAttempt(ctx, core.Claim{}, held.ID, ok())
	wantErr(t, err, core.ErrLeaseLost)
	_, next2 := record(t, s, took.Claim, took.ID, ok())
	if next2 == nil || next2.Seq != 2 {
		t.Fatalf("next after the takeover = %+v", next2)
	}
	record(t, s, took.Claim, next2.ID, ok())
}

// testClaimsRelease: a holder that stops lets go of its claims at once;
// its late attempt is refused as a lost claim's.
func testClaimsRelease(t *testing.T, s DeliveryStore) {
	ctx := t.Context()
	createDest(t, s, "", core.EventFilter{})
	say(t, s, sessionOf(t, s, "agt_a").ID, "one")
	say(t, s, sessionOf(t, s, "agt_a").ID, "two")
	held := claim(t, s, "a")
	if len(held) != 2 {
		t.Fatalf("a claimed %+v", held)
	}
	must(t, s.ReleaseDeliveryClaims(ctx, "b")) // another's release leaves a's alone
	if ds := claim(t, s, "b"); len(ds) != 0 {
		t.Fatalf("b claimed %+v while a holds them", ds)
	}
	must(t, s.ReleaseDeliveryClaims(ctx, "a"))
	took := claim(t, s, "b")
	if len(took) != 2 {
		t.Fatalf("b claimed %+v after a released", took)
	}
	for _, d := range took {
		if d.Claim.Epoch <= max(held[0].Claim.Epoch, held[1].Claim.Epoch) {
			t.Fatalf("b's claim %+v is not above a's epochs", d.Claim)
		}
	}
	_, _, err := s.RecordAttempt(ctx, held[0].Claim, held[0].ID, ok())
	wantErr(t, err, core.ErrLeaseLost)
}
