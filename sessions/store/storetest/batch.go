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

// testSendAhead: a holder reads the deliveries queued behind the one it
// sends (QueuedDeliveries) and records their attempts in order in one
// batch; each is stored as if recorded after the one before, and the
// claim ends with the stream.
func testSendAhead(t *testing.T, s DeliveryStore) {
	ctx := t.Context()
	createDest(t, s, "", core.EventFilter{})
	sess := sessionOf(t, s, "agt_a")
	say(t, s, sess.ID, "one", "two", "three")
	held := claim(t, s, "a")
	if len(held) != 1 || held[0].Seq != 1 {
		t.Fatalf("a claimed %+v", held)
	}
	head := held[0]
	ahead, err := s.QueuedDeliveries(ctx, head.Stream(), head.Seq, 10)
	must(t, err)
	if len(ahead) != 2 || ahead[0].Seq != 2 || ahead[1].Seq != 3 || ahead[0].State != core.DeliveryPending {
		t.Fatalf("queued after %d = %+v", head.Seq, ahead)
	}
	if one, err := s.QueuedDeliveries(ctx, head.Stream(), head.Seq, 1); err != nil || len(one) != 1 || one[0].Seq != 2 {
		t.Fatalf("queued, limit 1 = %+v, %v", one, err)
	}
	done := core.AttemptResult{Success: true, Attempt: core.Attempt{At: core.Now(), StatusCode: 204}}
	out, err := s.RecordAttempts(ctx, []core.AttemptRecord{
		{Claim: head.Claim, ID: head.ID, Result: done},
		{Claim: head.Claim, ID: ahead[0].ID, Result: done},
		{Claim: head.Claim, ID: ahead[1].ID, Result: done},
	})
	must(t, err)
	for i, o := range out {
		if o.Err != nil || o.Stored.State != core.DeliveryDelivered {
			t.Fatalf("attempt %d: %+v", i, o)
		}
	}
	if out[0].Next == nil || out[0].Next.ID != ahead[0].ID || out[1].Next == nil || out[1].Next.ID != ahead[1].ID || out[2].Next != nil {
		t.Fatalf("nexts %+v %+v %+v", out[0].Next, out[1].Next, out[2].Next)
	}
	if rest, err := s.QueuedDeliveries(ctx, head.Stream(), 0, 10); err != nil || len(rest) != 0 {
		t.Fatalf("queued once delivered = %+v, %v", rest, err)
	}
	// The stream ended with its claim: a new event is claimed afresh.
	say(t, s, sess.ID, "four")
	again := claim(t, s, "b")
	if len(again) != 1 || again[0].Seq != 4 || again[0].Claim.Epoch <= head.Claim.Epoch {
		t.Fatalf("claimed after the stream drained = %+v", again)
	}
}
