package storetest

import (
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

func claimSink(t *testing.T, s SinkStore, sink, id, holder string, ttl time.Duration) (core.Claim, bool) {
	t.Helper()
	c, ok, err := s.ClaimSink(t.Context(), sink, id, holder, ttl)
	must(t, err)
	return c, ok
}

// wantPosition checks the stored position's seq: a refused write left it.
func wantPosition(t *testing.T, s SinkStore, sink, id string, seq uint64) {
	t.Helper()
	p, err := s.SinkPosition(t.Context(), sink, id)
	must(t, err)
	if p.Seq != seq {
		t.Fatalf("position of %s in %s = %d, want %d", sink, id, p.Seq, seq)
	}
}

func testSinkClaimExcludes(t *testing.T, s SinkStore) {
	ctx := t.Context()
	_, _, err := s.ClaimSink(ctx, "chat", "ses_1", "", time.Hour)
	wantErr(t, err, core.ErrInvalid)
	_, _, err = s.ClaimSink(ctx, "chat", "ses_1", "a", 0)
	wantErr(t, err, core.ErrInvalid)
	_, _, err = s.ClaimSink(ctx, "a\x00b", "ses_1", "a", time.Hour)
	wantErr(t, err, core.ErrInvalid)

	a, ok := claimSink(t, s, "chat", "ses_1", "a", time.Hour)
	if !ok || a.Holder != "a" || a.Epoch == 0 {
		t.Fatalf("first claim = %+v %v", a, ok)
	}
	if _, ok := claimSink(t, s, "chat", "ses_1", "b", time.Hour); ok {
		t.Fatal("b claimed a stream a holds")
	}
	// A claim covers one sink's output of one session.
	if _, ok := claimSink(t, s, "forge", "ses_1", "b", time.Hour); !ok {
		t.Fatal("b could not claim another sink's output of the session")
	}
	if _, ok := claimSink(t, s, "chat", "ses_2", "b", time.Hour); !ok {
		t.Fatal("b could not claim the sink's output of another session")
	}
	must(t, s.RenewSinkClaim(ctx, "chat", "ses_1", a, time.Hour))
	must(t, s.SaveSinkPosition(ctx, "chat", "ses_1", a, core.SinkPosition{Seq: 4}))
	// Once claimed, an unfenced write is refused.
	wantErr(t, s.SaveSinkPosition(ctx, "chat", "ses_1", core.Claim{}, core.SinkPosition{Seq: 9}), core.ErrLeaseLost)
	wantPosition(t, s, "chat", "ses_1", 4)

	// The holder's own claim again is a new grant: the earlier one is
	// fenced off.
	a2, ok := claimSink(t, s, "chat", "ses_1", "a", time.Hour)
	if !ok || a2.Epoch <= a.Epoch {
		t.Fatalf("claim again = %+v %v, want an epoch above %d", a2, ok, a.Epoch)
	}
	wantErr(t, s.SaveSinkPosition(ctx, "chat", "ses_1", a, core.SinkPosition{Seq: 9}), core.ErrLeaseLost)
	wantErr(t, s.RenewSinkClaim(ctx, "chat", "ses_1", a, time.Hour), core.ErrLeaseLost)
	wantPosition(t, s, "chat", "ses_1", 4)
	must(t, s.SaveSinkPosition(ctx, "chat", "ses_1", a2, core.SinkPosition{Seq: 5}))
	wantPosition(t, s, "chat", "ses_1", 5)
}

func testSinkClaimExpires(t *testing.T, s SinkStore) {
	ctx := t.Context()
	a, _ := claimSink(t, s, "chat", "ses_1", "a", time.Hour)
	must(t, s.SaveSinkPosition(ctx, "chat", "ses_1", a, core.SinkPosition{Seq: 3, State: []byte(`{"intent":"k"}`)}))
	// Expiry is judged by the store's clock.
	must(t, s.RenewSinkClaim(ctx, "chat", "ses_1", a, time.Millisecond))
	var b core.Claim
	eventually(t, "claim after a's expired", func() bool {
		var ok bool
		b, ok = claimSink(t, s, "chat", "ses_1", "b", time.Hour)
		return ok
	})
	if b.Epoch <= a.Epoch || b.Holder != "b" {
		t.Fatalf("takeover = %+v, want an epoch above %d", b, a.Epoch)
	}
	// The stale holder's write is refused and leaves what b finds.
	wantErr(t, s.SaveSinkPosition(ctx, "chat", "ses_1", a, core.SinkPosition{Seq: 7}), core.ErrLeaseLost)
	wantErr(t, s.RenewSinkClaim(ctx, "chat", "ses_1", a, time.Hour), core.ErrLeaseLost)
	p, err := s.SinkPosition(ctx, "chat", "ses_1")
	must(t, err)
	if p.Seq != 3 || string(p.State) != `{"intent":"k"}` {
		t.Fatalf("position after a refused write: %+v (%s)", p, p.State)
	}
	must(t, s.ReleaseSinkClaim(ctx, "chat", "ses_1", a)) // a's stale release leaves b's claim alone
	if _, ok := claimSink(t, s, "chat", "ses_1", "c", time.Hour); ok {
		t.Fatal("a stale release freed b's claim")
	}
	must(t, s.SaveSinkPosition(ctx, "chat", "ses_1", b, core.SinkPosition{Seq: 7}))
	wantPosition(t, s, "chat", "ses_1", 7)
}

func testSinkClaimRelease(t *testing.T, s SinkStore) {
	ctx := t.Context()
	a, _ := claimSink(t, s, "chat", "ses_1", "a", time.Hour)
	must(t, s.ReleaseSinkClaim(ctx, "chat", "ses_1", a))
	wantErr(t, s.RenewSinkClaim(ctx, "chat", "ses_1", a, time.Hour), core.ErrLeaseLost)
	b, ok := claimSink(t, s, "chat", "ses_1", "b", time.Hour)
	if !ok || b.Epoch <= a.Epoch {
		t.Fatalf("claim after release = %+v %v, want an epoch above %d", b, ok, a.Epoch)
	}
	wantErr(t, s.SaveSinkPosition(ctx, "chat", "ses_1", a, core.SinkPosition{Seq: 2}), core.ErrLeaseLost)
	wantPosition(t, s, "chat", "ses_1", 0)
	must(t, s.SaveSinkPosition(ctx, "chat", "ses_1", b, core.SinkPosition{Seq: 2}))
	wantPosition(t, s, "chat", "ses_1", 2)
}
