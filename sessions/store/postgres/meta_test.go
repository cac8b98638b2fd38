package postgres

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// TestCheckMasterKey: the first check value is recorded; the same one
// passes on every later start, from any process; another is refused.
func TestCheckMasterKey(t *testing.T) {
	s, dsn := openTest(t, Options{})
	ctx := t.Context()
	if err := s.CheckMasterKey(ctx, "check-a"); err != nil {
		t.Fatalf("first check: %v", err)
	}
	other, err := Open(ctx, dsn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	tests := []struct {
		name  string
		store *Store
		check string
		want  error
	}{
		{"same key again", s, "check-a", nil},
		{"same key, another process", other, "check-a", nil},
		{"another key", s, "check-b", ErrMasterKeyMismatch},
		{"another key, another process", other, "check-b", ErrMasterKeyMismatch},
		{"a prefix of the value", other, "check-", ErrMasterKeyMismatch},
		{"empty", other, "", core.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.store.CheckMasterKey(ctx, tt.check)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("CheckMasterKey(%q) = %v, want %v", tt.check, err, tt.want)
			}
		})
	}
	var stored string
	if err := s.pool.QueryRow(ctx, "SELECT value FROM switchboard_meta WHERE key = 'master_key_check'").Scan(&stored); err != nil || stored != "check-a" {
		t.Fatalf("stored check = %q, %v; want the first one", stored, err)
	}
	if status, ok := s.Ready(ctx); !ok {
		t.Fatalf("a refused key left the store %q", status)
	}
}

// TestCheckMasterKeyRace: processes starting together with different keys
// on a fresh database: exactly one key is accepted, and every process
// with it is.
func TestCheckMasterKeyRace(t *testing.T) {
	_, dsn := openTest(t, Options{})
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		st, err := Open(t.Context(), dsn, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = st.CheckMasterKey(t.Context(), fmt.Sprintf("check-%d", i%2))
		}()
	}
	wg.Wait()
	won := map[int]bool{}
	for i, err := range errs {
		switch {
		case err == nil:
			won[i%2] = true
		case !errors.Is(err, ErrMasterKeyMismatch):
			t.Fatalf("process %d: %v", i, err)
		}
	}
	if len(won) != 1 {
		t.Fatalf("keys accepted: %v, want exactly one: %v", won, errs)
	}
	for i, err := range errs {
		if won[i%2] != (err == nil) {
			t.Fatalf("process %d with the winning key refused, or with the other accepted: %v", i, err)
		}
	}
}
