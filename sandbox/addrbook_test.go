package sandbox

import (
	"context"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeNetwork is the sandbox network as an inspection sees it.
type fakeNetwork struct {
	mu       sync.Mutex
	holders  map[netip.Addr]string
	inspects atomic.Int64
}

func (n *fakeNetwork) inspect(context.Context) (map[netip.Addr]string, error) {
	n.inspects.Add(1)
	n.mu.Lock()
	defer n.mu.Unlock()
	out := map[netip.Addr]string{}
	for a, name := range n.holders {
		out[a] = name
	}
	return out, nil
}

func (n *fakeNetwork) set(a netip.Addr, name string) {
	n.mu.Lock()
	n.holders[a] = name
	n.mu.Unlock()
}

// TestAddrBook: connections share one network inspection, and an address
// given to another container by a start is never answered from the book.
func TestAddrBook(t *testing.T) {
	a, b := netip.MustParseAddr("172.30.0.2"), netip.MustParseAddr("172.30.0.3")
	net := &fakeNetwork{holders: map[netip.Addr]string{a: "switchboard-d-ses_a"}}
	now := time.Unix(1000, 0)
	var clock sync.Mutex
	book := &addrBook{inspect: net.inspect, now: func() time.Time {
		clock.Lock()
		defer clock.Unlock()
		now = now.Add(time.Nanosecond) // every reading is later
		return now
	}}
	advance := func(d time.Duration) { clock.Lock(); now = now.Add(d); clock.Unlock() }
	lookup := func(addr netip.Addr, want string) {
		t.Helper()
		got, err := book.name(t.Context(), addr)
		if err != nil || got != want {
			t.Fatalf("name(%s) = %q, %v; want %q", addr, got, err, want)
		}
	}

	var wg sync.WaitGroup
	for range 5000 {
		wg.Go(func() {
			if got, err := book.name(t.Context(), a); err != nil || got != "switchboard-d-ses_a" {
				t.Errorf("name = %q, %v", got, err)
			}
		})
	}
	wg.Wait()
	if n := net.inspects.Load(); n > 2 {
		t.Errorf("%d inspections for 5000 connections of one sandbox, want 1 (2 at most under a race)", n)
	}

	t.Run("an address not in the book is read again", func(t *testing.T) {
		before := net.inspects.Load()
		net.set(b, "switchboard-d-ses_b")
		lookup(b, "switchboard-d-ses_b")
		if net.inspects.Load() != before+1 {
			t.Errorf("no new inspection for an unknown address")
		}
	})

	t.Run("a start ends the book's trust", func(t *testing.T) {
		lookup(a, "switchboard-d-ses_a")
		done := book.starts()
		// While the start is under way, a's new holder may already be
		// there: the book is not trusted.
		net.set(a, "switchboard-d-ses_c")
		lookup(a, "switchboard-d-ses_c")
		done()
		lookup(a, "switchboard-d-ses_c")
		net.set(a, "switchboard-d-ses_d")
		done = book.starts()
		done()
		lookup(a, "switchboard-d-ses_d")
	})

	t.Run("the book expires", func(t *testing.T) {
		lookup(a, "switchboard-d-ses_d")
		before := net.inspects.Load()
		lookup(a, "switchboard-d-ses_d")
		if net.inspects.Load() != before {
			t.Fatalf("a fresh book was read again")
		}
		advance(addrBookTTL)
		lookup(a, "switchboard-d-ses_d")
		if net.inspects.Load() != before+1 {
			t.Errorf("an expired book was not read again")
		}
	})
}
