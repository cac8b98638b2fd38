package core

import (
	"slices"
	"sync"
	"testing"
)

// TestNewIDSortsInOrderMade: ids one process makes, thousands in one
// millisecond, sort in the order it made them, from any goroutine.
func TestNewIDSortsInOrderMade(t *testing.T) {
	var ids []string
	for range 5000 {
		ids = append(ids, NewID(PrefixEvent))
	}
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			t.Fatalf("id %d %s does not sort after %s", i, ids[i], ids[i-1])
		}
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	seen := map[string]bool{}
	for range 4 {
		wg.Go(func() {
			var mine []string
			for range 2000 {
				mine = append(mine, NewID(PrefixSession))
			}
			if !slices.IsSorted(mine) {
				t.Error("a goroutine's ids do not sort in the order it made them")
			}
			mu.Lock()
			defer mu.Unlock()
			for _, id := range mine {
				if seen[id] {
					t.Errorf("id %s made twice", id)
				}
				seen[id] = true
			}
		})
	}
	wg.Wait()
}

// TestAddIDCarries: a step past the random bits' end moves the time on.
func TestAddIDCarries(t *testing.T) {
	var b [16]byte
	for i := 6; i < 16; i++ {
		b[i] = 0xff
	}
	before := encodeID("x", b)
	addID(&b, 1)
	if after := encodeID("x", b); after <= before || b[5] != 1 || b[15] != 0 {
		t.Fatalf("%x: %s after %s", b, after, before)
	}
}
