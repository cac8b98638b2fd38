package bolt

import (
	"context"
	"errors"
	"testing"
)

// TestRefreshLocks: a caller waiting for an installation's refresh lock
// gives up when its ctx ends, and a lock no one holds or waits for is
// forgotten.
func TestRefreshLocks(t *testing.T) {
	var r refreshLocks
	unlock, err := r.lock(t.Context(), "ins_1")
	if err != nil {
		t.Fatal(err)
	}
	other, err := r.lock(t.Context(), "ins_2") // another installation does not wait
	if err != nil {
		t.Fatal(err)
	}
	other()
	gone, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := r.lock(gone, "ins_1"); !errors.Is(err, context.Canceled) {
		t.Fatalf("waiting with an ended ctx: %v", err)
	}
	unlock()
	again, err := r.lock(t.Context(), "ins_1")
	if err != nil {
		t.Fatal(err)
	}
	again()
	if len(r.locks) != 0 {
		t.Fatalf("locks left: %v", r.locks)
	}
}
