package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// TestPausedWriterHoldsNoTakeover: a replica paused in the middle of a
// write (its transaction open, the session's row locked, nothing more
// sent) does not keep another replica from taking the session's lease:
// the server ends the idle transaction, and the paused replica's write
// fails when it resumes instead of landing late.
func TestPausedWriterHoldsNoTakeover(t *testing.T) {
	a, dsn := openTest(t, Options{IdleTransactionTimeout: 50 * time.Millisecond})
	b, _ := replica(t, dsn)
	res, err := a.CreateSession(t.Context(), core.NewSession{Session: core.Session{Origin: &core.Origin{Provider: "api"}}})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Session.ID

	paused, err := a.pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer paused.Rollback(context.WithoutCancel(t.Context())) //nolint:errcheck // the server ended it
	if _, err := lockRow(t.Context(), paused, id); err != nil {
		t.Fatal(err)
	}

	// Not a timing bound: without the server's timeout the takeover
	// waits for as long as the pause lasts, which is for ever here.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	l, ok, err := b.TakeLease(ctx, id, "replica-b", time.Minute)
	if err != nil || !ok {
		t.Fatalf("take over from a paused writer: ok %v, err %v", ok, err)
	}
	if l.Epoch != 1 {
		t.Fatalf("lease epoch %d, want 1", l.Epoch)
	}

	// Resumed, the paused writer finds its transaction gone.
	if _, err := paused.Exec(t.Context(), `UPDATE sessions SET lease_holder = 'replica-a' WHERE id = $1`, id); err == nil {
		if err := paused.Commit(t.Context()); err == nil {
			t.Fatal("the paused writer's transaction committed after the takeover")
		}
	}
	// Its store goes on working on other connections.
	if _, err := a.GetSession(t.Context(), id); err != nil {
		t.Fatalf("the paused replica's store after its transaction was ended: %v", err)
	}
	if err := a.RenewLease(t.Context(), core.Lease{SessionID: id, Holder: "replica-b", Epoch: l.Epoch}, time.Minute); err != nil {
		t.Fatalf("renew through the other store: %v", err)
	}
}
