package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// batchOfOne records each attempt as a batch of one.
type batchOfOne struct{ DeliveryStore }

func (b batchOfOne) RecordAttempt(ctx context.Context, c core.Claim, id string, r core.AttemptResult) (*core.Delivery, *core.Delivery, error) {
	out, err := b.RecordAttempts(ctx, []core.AttemptRecord{{Claim: c, ID: id, Result: r}})
	if err != nil {
		return nil, nil, err
	}
	if len(out) != 1 {
		return nil, nil, context.Canceled // never: fails the case that sees it
	}
	return out[0].Stored, out[0].Next, out[0].Err
}

// testRecordBatch: attempts of several streams recorded together each end
// as they would alone (delivered with the stream's next handed on, retried
// later), and one refused (a lost claim, a delivery that does not exist)
// changes nothing while the others are recorded.
func testRecordBatch(t *testing.T, s DeliveryStore) {
	ctx := t.Context()
	createDest(t, s, "", core.EventFilter{})
	say(t, s, sessionOf(t, s, "agt_a").ID, "one", "two")
	say(t, s, sessionOf(t, s, "agt_a").ID, "one")
	say(t, s, sessionOf(t, s, "agt_a").ID, "one")
	held := claim(t, s, "a")
	if len(held) != 3 {
		t.Fatalf("a claimed %+v", held)
	}
	var two core.ClaimedDelivery
	var rest []core.ClaimedDelivery
	for _, d := range held {
		log, err := s.Events(ctx, d.SessionID, 0, 10)
		must(t, err)
		if len(log) == 2 {
			two = d
		} else {
			rest = append(rest, d)
		}
	}
	if two.Delivery == nil || len(rest) != 2 {
		t.Fatalf("streams %+v", held)
	}
	one, lost := rest[0], rest[1]
	retry := time.Now().Add(time.Hour)
	now := core.Now()
	out, err := s.RecordAttempts(ctx, []core.AttemptRecord{
		{Claim: two.Claim, ID: two.ID, Result: core.AttemptResult{Success: true, Attempt: core.Attempt{At: now, StatusCode: 204}}},
		{Claim: core.Claim{}, ID: lost.ID, Result: core.AttemptResult{Success: true, Attempt: core.Attempt{At: now, StatusCode: 204}}},
		{Claim: one.Claim, ID: one.ID, Result: core.AttemptResult{RetryAt: retry, Attempt: core.Attempt{At: now, StatusCode: 503, Error: "unavailable"}}},
		{Claim: one.Claim, ID: core.NewID(core.PrefixDelivery), Result: core.AttemptResult{Success: true, Attempt: core.Attempt{At: now}}},
	})
	must(t, err)
	if len(out) != 4 {
		t.Fatalf("%d answers for 4 attempts", len(out))
	}
	if out[0].Err != nil || out[0].Stored.State != core.DeliveryDelivered || out[0].Next == nil || out[0].Next.Seq != 2 {
		t.Fatalf("delivered: %+v", out[0])
	}
	wantErr(t, out[1].Err, core.ErrLeaseLost)
	if d, err := s.GetDelivery(ctx, lost.ID); err != nil || d.State != core.DeliveryPending || d.AttemptCount != 0 {
		t.Fatalf("a refused attempt changed its delivery: %+v, %v", d, err)
	}
	if out[2].Err != nil || out[2].Next != nil || out[2].Stored.State != core.DeliveryPending || out[2].Stored.NextAttemptAt == nil {
		t.Fatalf("retried: %+v", out[2])
	}
	wantErr(t, out[3].Err, core.ErrNotFound)
	// The claims moved as RecordAttempt moves them: kept for the stream
	// that goes on, ended for the one that waits.
	stored, _ := record(t, s, two.Claim, out[0].Next.ID, ok())
	if stored.State != core.DeliveryDelivered {
		t.Fatalf("next under the renewed claim: %+v", stored)
	}
	// Released, the lost claim's stream is due at once; the retried one
	// waits for its retry.
	must(t, s.ReleaseDeliveryClaims(ctx, "a"))
	ds := claim(t, s, "b")
	if len(ds) != 1 || ds[0].ID != lost.ID {
		t.Fatalf("due = %+v; want only %s", ds, lost.ID)
	}
}
