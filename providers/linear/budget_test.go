package linear

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestBudgetServesHigherPrioritiesFirst: with the bucket empty, a
// response waiting behind a thought still goes first, and a blocked
// organization (RATELIMITED) waits for its reset while another does not.
func TestBudgetServesHigherPrioritiesFirst(t *testing.T) {
	b := newBudgets(20, 1, time.Now) // a call every 50 ms
	ctx := context.Background()
	if err := b.wait(ctx, "o", prioAnswer); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	take := func(name string, p priority) {
		defer wg.Done()
		if err := b.wait(ctx, "o", p); err != nil {
			t.Error(err)
		}
		mu.Lock()
		order = append(order, name)
		mu.Unlock()
	}
	wg.Add(3)
	go take("thought", prioThought)
	time.Sleep(5 * time.Millisecond)
	go take("action", prioAction)
	time.Sleep(5 * time.Millisecond)
	go take("response", prioAnswer)
	wg.Wait()
	if !slices.Equal(order, []string{"response", "action", "thought"}) {
		t.Fatalf("served %v", order)
	}

	b.block("o", time.Now().Add(time.Second))
	start := time.Now()
	if err := b.wait(ctx, "other", prioThought); err != nil || time.Since(start) >= time.Second {
		t.Fatalf("another organization waited %v (%v)", time.Since(start), err)
	}
	if err := b.wait(ctx, "o", prioAnswer); err != nil || time.Since(start) < 990*time.Millisecond {
		t.Fatalf("a blocked organization went after %v (%v)", time.Since(start), err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	b.block("o", time.Now().Add(time.Hour))
	if err := b.wait(cctx, "o", prioAnswer); err == nil {
		t.Fatal("a cancelled wait returned nil")
	}
}
