package postgres

import (
	"errors"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/storetest"
)

func TestConsoleStoreConformance(t *testing.T) { storetest.RunConsole(t, fresh) }

// TestConsoleAcrossReplicas: a sign-in made on one replica is good on the
// other, a sign-out on either ends it on both, and both count one
// address's failures together.
func TestConsoleAcrossReplicas(t *testing.T) {
	stores := replicas(t)
	a, b := stores[0], stores[1]
	ctx := t.Context()
	now := time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)
	in := &core.ConsoleSession{ID: "s1", CSRF: "c", KeyCheck: "k", CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	if err := a.CreateConsoleSession(ctx, in); err != nil {
		t.Fatal(err)
	}
	if got, err := b.GetConsoleSession(ctx, "s1", now); err != nil || got.CSRF != "c" {
		t.Fatalf("the other replica's get = %+v, %v", got, err)
	}
	if err := b.CreateConsoleSession(ctx, in); !errors.Is(err, core.ErrConflict) {
		t.Fatalf("the same id on the other replica = %v, want ErrConflict", err)
	}
	if err := b.DeleteConsoleSession(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if got, err := a.GetConsoleSession(ctx, "s1", now); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("after a sign-out on the other replica, get = %+v, %v; want ErrNotFound", got, err)
	}

	const addr = "198.51.100.20"
	for i, s := range []*Store{a, b, a} {
		if ok, err := s.ReserveSignIn(ctx, addr, now.Add(time.Duration(i)*time.Second), time.Minute, 3); err != nil || !ok {
			t.Fatalf("attempt %d = %v, %v; want counted", i+1, ok, err)
		}
	}
	if ok, err := b.ReserveSignIn(ctx, addr, now.Add(2*time.Second), time.Minute, 3); err != nil || ok {
		t.Fatalf("an attempt past the limit on the other replica = %v, %v; want refused", ok, err)
	}
	if n, err := b.SignInFailures(ctx, addr, now.Add(2*time.Second), time.Minute); err != nil || n != 3 {
		t.Fatalf("the other replica counts %d, %v; want 3", n, err)
	}
	if err := b.CreateConsoleSession(ctx, &core.ConsoleSession{ID: "s2", CSRF: "c", KeyCheck: "k", CreatedAt: now, ExpiresAt: now.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if n, err := a.SweepConsole(ctx, now.Add(time.Hour)); err != nil || n != 4 {
		t.Fatalf("sweep = %d, %v; want 4 (a sign-in, three failures)", n, err)
	}
	if _, err := b.GetConsoleSession(ctx, "s2", now); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("a sign-in swept by the other replica = %v, want ErrNotFound", err)
	}
}

// TestConsoleReserveRace: attempts of one address made at once on two
// replicas are counted up to the limit, no further: the lockout holds
// across replicas.
func TestConsoleReserveRace(t *testing.T) {
	stores := replicas(t)
	now := time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)
	const limit = 5
	if n := storetest.ReserveInParallel(t, 60, func(i int) core.ConsoleStore { return stores[i%2] }, "203.0.113.9", now, limit); n != limit {
		t.Fatalf("%d of 60 attempts on two replicas counted, want %d", n, limit)
	}
}
