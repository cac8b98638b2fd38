package storetest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// ConsoleStore is what the console suite needs: the console's records,
// and the store's Sweep, which sweeps them too.
type ConsoleStore interface {
	core.Store
	core.ConsoleStore
}

// RunConsole runs the core.ConsoleStore suite. open must return a fresh,
// empty store for each subtest and close it when the test ends. Every
// time is given: nothing here reads the wall clock.
func RunConsole[S ConsoleStore](t *testing.T, open func(t *testing.T) S) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s ConsoleStore)
	}{
		{"console/create_get_delete", testConsoleCreateGetDelete},
		{"console/duplicate_id", testConsoleDuplicate},
		{"console/expiry", testConsoleExpiry},
		{"console/failures_window", testConsoleFailuresWindow},
		{"console/failures_per_address", testConsoleFailuresPerAddress},
		{"console/reserve_limit", testConsoleReserveLimit},
		{"console/reserve_race", testConsoleReserveRace},
		{"console/sweep", testConsoleSweep},
		{"console/store_sweep", testConsoleStoreSweep},
		{"console/invalid", testConsoleInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
}

// consoleT0 is the suite's "now"; times are offsets from it.
var consoleT0 = time.Date(2031, 3, 4, 5, 6, 7, 0, time.UTC)

// signIn is a valid sign-in with id, made at consoleT0, expiring after ttl.
func signIn(id string, ttl time.Duration) *core.ConsoleSession {
	return &core.ConsoleSession{
		ID: id, CSRF: "csrf-" + id, KeyCheck: "check", Address: "192.0.2.1",
		CreatedAt: consoleT0, ExpiresAt: consoleT0.Add(ttl),
	}
}

// wantSignIn checks that id is (live) or is not (ErrNotFound) a sign-in at now.
func wantSignIn(t *testing.T, s core.ConsoleStore, id string, now time.Time, live bool) *core.ConsoleSession {
	t.Helper()
	got, err := s.GetConsoleSession(t.Context(), id, now)
	if !live {
		if !errors.Is(err, core.ErrNotFound) {
			t.Fatalf("get %s at %v = %+v, %v; want ErrNotFound", id, now, got, err)
		}
		return nil
	}
	if err != nil {
		t.Fatalf("get %s at %v: %v", id, now, err)
	}
	return got
}

// noLimit is a ReserveSignIn limit the tests of counting never reach.
const noLimit = 1 << 20

// attempt counts a sign-in attempt of address at at, under no limit.
func attempt(t *testing.T, s core.ConsoleStore, address string, at time.Time) {
	t.Helper()
	ok, err := s.ReserveSignIn(t.Context(), address, at, time.Minute, noLimit)
	if err != nil || !ok {
		t.Fatalf("reserve %s at %v = %v, %v; want counted", address, at, ok, err)
	}
}

// wantFailures checks address's failures in (now-window, now].
func wantFailures(t *testing.T, s core.ConsoleStore, address string, now time.Time, window time.Duration, want int) {
	t.Helper()
	n, err := s.SignInFailures(t.Context(), address, now, window)
	if err != nil || n != want {
		t.Fatalf("failures of %s at %v in %v = %d, %v; want %d", address, now, window, n, err, want)
	}
}

func testConsoleCreateGetDelete(t *testing.T, s ConsoleStore) {
	ctx := t.Context()
	in := signIn("a1", time.Hour)
	must(t, s.CreateConsoleSession(ctx, in))
	got := wantSignIn(t, s, "a1", consoleT0, true)
	if got.ID != in.ID || got.CSRF != in.CSRF || got.KeyCheck != in.KeyCheck || got.Address != in.Address ||
		!got.CreatedAt.Equal(in.CreatedAt) || !got.ExpiresAt.Equal(in.ExpiresAt) {
		t.Fatalf("got %+v, want %+v", got, in)
	}
	wantSignIn(t, s, "missing", consoleT0, false)
	must(t, s.CreateConsoleSession(ctx, signIn("a2", time.Hour)))
	must(t, s.DeleteConsoleSession(ctx, "a1"))
	wantSignIn(t, s, "a1", consoleT0, false)
	wantSignIn(t, s, "a2", consoleT0, true)
	must(t, s.DeleteConsoleSession(ctx, "a1"))
	must(t, s.DeleteConsoleSession(ctx, "never"))
	// A deleted id may sign in again.
	must(t, s.CreateConsoleSession(ctx, signIn("a1", time.Hour)))
	wantSignIn(t, s, "a1", consoleT0, true)
}

func testConsoleDuplicate(t *testing.T, s ConsoleStore) {
	ctx := t.Context()
	must(t, s.CreateConsoleSession(ctx, signIn("dup", time.Hour)))
	other := signIn("dup", 2*time.Hour)
	other.CSRF = "other"
	wantErr(t, s.CreateConsoleSession(ctx, other), core.ErrConflict)
	if got := wantSignIn(t, s, "dup", consoleT0, true); got.CSRF != "csrf-dup" || !got.ExpiresAt.Equal(consoleT0.Add(time.Hour)) {
		t.Fatalf("the refused sign-in replaced the first: %+v", got)
	}
}

func testConsoleExpiry(t *testing.T, s ConsoleStore) {
	ctx := t.Context()
	must(t, s.CreateConsoleSession(ctx, signIn("e", time.Hour)))
	end := consoleT0.Add(time.Hour)
	wantSignIn(t, s, "e", end.Add(-time.Millisecond), true)
	wantSignIn(t, s, "e", end, false)
	wantSignIn(t, s, "e", end.Add(time.Minute), false)
	// Expired is not gone: an earlier now still finds it until a sweep.
	wantSignIn(t, s, "e", consoleT0, true)

	// Times are kept to the millisecond, so both stores expire a
	// sign-in at the same instant.
	fine := signIn("fine", time.Hour+700*time.Microsecond)
	must(t, s.CreateConsoleSession(ctx, fine))
	if got := wantSignIn(t, s, "fine", consoleT0, true); !got.ExpiresAt.Equal(end) {
		t.Fatalf("expires_at = %v, want %v", got.ExpiresAt, end)
	}
	wantSignIn(t, s, "fine", end, false)
}

func testConsoleFailuresWindow(t *testing.T, s ConsoleStore) {
	const addr = "198.51.100.7"
	wantFailures(t, s, addr, consoleT0, time.Minute, 0)
	// Six failures ten seconds apart: the sixth is within a minute of
	// the first and counts six.
	for i := range 6 {
		at := consoleT0.Add(time.Duration(i) * 10 * time.Second)
		attempt(t, s, addr, at)
		wantFailures(t, s, addr, at, time.Minute, i+1)
	}
	at50 := consoleT0.Add(50 * time.Second)
	wantFailures(t, s, addr, at50, time.Minute, 6) // counting records none
	wantFailures(t, s, addr, at50, time.Minute, 6)
	// The window is (now-window, now]: a failure made window ago is out,
	// one made later than now is not counted yet.
	wantFailures(t, s, addr, consoleT0.Add(time.Minute-time.Millisecond), time.Minute, 6)
	wantFailures(t, s, addr, consoleT0.Add(time.Minute), time.Minute, 5)
	wantFailures(t, s, addr, consoleT0.Add(25*time.Second), time.Minute, 3)
	wantFailures(t, s, addr, at50, 15*time.Second, 2)
	// A failure after older ones left the window counts only the recent.
	attempt(t, s, addr, consoleT0.Add(95*time.Second))
	wantFailures(t, s, addr, consoleT0.Add(95*time.Second), time.Minute, 3) // at 40s, 50s, 95s
	wantFailures(t, s, addr, consoleT0.Add(95*time.Second), time.Hour, 7)
	wantFailures(t, s, addr, consoleT0.Add(10*time.Minute), time.Minute, 0)
}

func testConsoleFailuresPerAddress(t *testing.T, s ConsoleStore) {
	// "10.0.0.1" is a prefix of "10.0.0.10": neither counts the other's.
	for i := range 3 {
		attempt(t, s, "10.0.0.1", consoleT0.Add(time.Duration(i)*time.Second))
	}
	attempt(t, s, "10.0.0.10", consoleT0.Add(5*time.Second))
	now := consoleT0.Add(5 * time.Second)
	wantFailures(t, s, "10.0.0.1", now, time.Minute, 3)
	wantFailures(t, s, "10.0.0.10", now, time.Minute, 1)
	wantFailures(t, s, "10.0.0.", now, time.Minute, 0)
	wantFailures(t, s, "2001:db8::1", now, time.Minute, 0)
}

func testConsoleSweep(t *testing.T, s ConsoleStore) {
	ctx := t.Context()
	for _, tc := range []struct {
		id  string
		ttl time.Duration
	}{{"early", time.Minute}, {"edge", time.Hour}, {"late", 2 * time.Hour}} {
		must(t, s.CreateConsoleSession(ctx, signIn(tc.id, tc.ttl)))
	}
	for _, at := range []time.Duration{0, 30 * time.Minute, time.Hour, 90 * time.Minute} {
		attempt(t, s, "203.0.113.5", consoleT0.Add(at))
	}
	wantSweep := func(before time.Time, want int) {
		t.Helper()
		n, err := s.SweepConsole(ctx, before)
		if err != nil || n != want {
			t.Fatalf("sweep before %v = %d, %v; want %d", before, n, err, want)
		}
	}
	wantSweep(consoleT0, 0)
	// At an hour, "early" and "edge" are expired (edge expires then); the
	// failures at 0 and 30 minutes were made before it, the one at an
	// hour was not.
	cut := consoleT0.Add(time.Hour)
	wantSweep(cut, 4)
	// Gone, not just expired: an earlier now no longer finds them.
	wantSignIn(t, s, "early", consoleT0, false)
	wantSignIn(t, s, "edge", consoleT0, false)
	wantSignIn(t, s, "late", consoleT0, true)
	wantFailures(t, s, "203.0.113.5", consoleT0.Add(90*time.Minute), 24*time.Hour, 2)
	wantSweep(cut, 0)
	// A swept id may sign in again.
	must(t, s.CreateConsoleSession(ctx, signIn("edge", 3*time.Hour)))
	wantSweep(consoleT0.Add(2*time.Hour), 3) // late, the failures at 1h and 90m
	wantSignIn(t, s, "edge", consoleT0, true)
}

// testConsoleStoreSweep: the store's Sweep, run periodically by the
// runtime, sweeps the console's records as SweepConsole does.
func testConsoleStoreSweep(t *testing.T, s ConsoleStore) {
	ctx := t.Context()
	must(t, s.CreateConsoleSession(ctx, signIn("old", time.Minute)))
	must(t, s.CreateConsoleSession(ctx, signIn("live", 48*time.Hour)))
	attempt(t, s, "192.0.2.9", consoleT0)
	n, err := s.Sweep(ctx, consoleT0.Add(time.Hour))
	if err != nil || n != 2 {
		t.Fatalf("sweep = %d, %v; want 2 (a sign-in and a failure)", n, err)
	}
	wantSignIn(t, s, "old", consoleT0, false)
	wantSignIn(t, s, "live", consoleT0, true)
	wantFailures(t, s, "192.0.2.9", consoleT0, time.Minute, 0)
}

func testConsoleInvalid(t *testing.T, s ConsoleStore) {
	ctx := t.Context()
	must(t, s.CreateConsoleSession(ctx, signIn("kept", time.Hour)))
	attempt(t, s, "192.0.2.1", consoleT0)
	for _, tc := range []struct {
		name string
		edit func(*core.ConsoleSession)
	}{
		{"empty id", func(c *core.ConsoleSession) { c.ID = "" }},
		{"nul in id", func(c *core.ConsoleSession) { c.ID = "a\x00b" }},
		{"no csrf", func(c *core.ConsoleSession) { c.CSRF = "" }},
		{"no key check", func(c *core.ConsoleSession) { c.KeyCheck = "" }},
		{"no expiry", func(c *core.ConsoleSession) { c.ExpiresAt = time.Time{} }},
		{"nul in address", func(c *core.ConsoleSession) { c.Address = "\x00" }},
	} {
		t.Run("create/"+tc.name, func(t *testing.T) {
			in := signIn("new", time.Hour)
			tc.edit(in)
			wantErr(t, s.CreateConsoleSession(ctx, in), core.ErrInvalid)
		})
	}
	wantErr(t, s.CreateConsoleSession(ctx, nil), core.ErrInvalid)
	_, err := s.GetConsoleSession(ctx, "", consoleT0)
	wantErr(t, err, core.ErrInvalid)
	wantErr(t, s.DeleteConsoleSession(ctx, ""), core.ErrInvalid)
	for _, tc := range []struct {
		name    string
		address string
		window  time.Duration
	}{
		{"empty address", "", time.Minute},
		{"nul in address", "192.0.2.1\x00", time.Minute},
		{"zero window", "192.0.2.1", 0},
		{"negative window", "192.0.2.1", -time.Minute},
	} {
		t.Run("failures/"+tc.name, func(t *testing.T) {
			_, err := s.ReserveSignIn(ctx, tc.address, consoleT0, tc.window, noLimit)
			wantErr(t, err, core.ErrInvalid)
			_, err = s.SignInFailures(ctx, tc.address, consoleT0, tc.window)
			wantErr(t, err, core.ErrInvalid)
		})
	}
	// Nothing was lost, and nothing refused was written.
	wantSignIn(t, s, "kept", consoleT0, true)
	wantSignIn(t, s, "new", consoleT0, false)
	wantFailures(t, s, "192.0.2.1", consoleT0, time.Minute, 1)
}

// testConsoleReserveLimit: an address with limit attempts counted in the
// window gets no more, and a refusal writes nothing; an attempt released
// (it signed in) frees its place; the window moving on frees the others.
func testConsoleReserveLimit(t *testing.T, s ConsoleStore) {
	ctx := t.Context()
	const addr, limit = "198.51.100.33", 5
	reserve := func(at time.Time, want bool) {
		t.Helper()
		ok, err := s.ReserveSignIn(ctx, addr, at, time.Minute, limit)
		if err != nil || ok != want {
			t.Fatalf("reserve at %v = %v, %v; want %v", at, ok, err, want)
		}
	}
	for i := range limit {
		reserve(consoleT0.Add(time.Duration(i)*time.Second), true)
	}
	at := consoleT0.Add(10 * time.Second)
	reserve(at, false)
	reserve(at, false)
	wantFailures(t, s, addr, at, time.Minute, limit)
	// Another address is not limited by this one's.
	attempt(t, s, "198.51.100.3", at)

	// Releasing at an instant no attempt was counted uncounts nothing.
	must(t, s.ReleaseSignIn(ctx, addr, at))
	wantFailures(t, s, addr, at, time.Minute, limit)
	must(t, s.ReleaseSignIn(ctx, addr, consoleT0.Add(2*time.Second)))
	wantFailures(t, s, addr, at, time.Minute, limit-1)
	reserve(at, true)
	reserve(at, false)
	// Two attempts of one instant: releasing one leaves the other.
	must(t, s.ReleaseSignIn(ctx, addr, at))
	wantFailures(t, s, addr, at, time.Minute, limit-1)
	reserve(at, true)

	// The first attempt, made at consoleT0, leaves the window a minute later.
	reserve(consoleT0.Add(time.Minute-time.Millisecond), false)
	reserve(consoleT0.Add(time.Minute), true)
	wantErr(t, s.ReleaseSignIn(ctx, "", at), core.ErrInvalid)

	// An attempt another clock stamped later than now counts too: a
	// replica whose clock is behind cannot slip more through.
	const skewed = "198.51.100.44"
	if ok, err := s.ReserveSignIn(ctx, skewed, consoleT0.Add(time.Second), time.Minute, 1); err != nil || !ok {
		t.Fatalf("first attempt = %v, %v", ok, err)
	}
	if ok, err := s.ReserveSignIn(ctx, skewed, consoleT0, time.Minute, 1); err != nil || ok {
		t.Fatalf("an attempt from a clock a second behind = %v, %v; want refused", ok, err)
	}
}

// testConsoleReserveRace: of 60 attempts of one address at once, exactly
// the limit are counted, whatever their interleaving.
func testConsoleReserveRace(t *testing.T, s ConsoleStore) {
	const limit = 5
	if n := ReserveInParallel(t, 60, func(int) core.ConsoleStore { return s }, "203.0.113.60", consoleT0, limit); n != limit {
		t.Fatalf("%d of 60 parallel attempts counted, want %d", n, limit)
	}
	wantFailures(t, s, "203.0.113.60", consoleT0, time.Minute, limit)
}

// ReserveInParallel makes n sign-in attempts of address at now at once,
// the i-th on store(i), with a one-minute window and limit, and returns
// how many were counted.
func ReserveInParallel(t *testing.T, n int, store func(i int) core.ConsoleStore, address string, now time.Time, limit int) int {
	t.Helper()
	oks := make([]bool, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			oks[i], errs[i] = store(i).ReserveSignIn(t.Context(), address, now, time.Minute, limit)
		})
	}
	wg.Wait()
	counted := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("attempt %d: %v", i, errs[i])
		}
		if oks[i] {
			counted++
		}
	}
	return counted
}
