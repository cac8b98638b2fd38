package linear

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// testClock is a clock only the test moves. Every reading is counted, so
// the test can tell that a waiter has looked at the time it set.
type testClock struct {
	mu    sync.Mutex
	now   time.Time
	reads int
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads++
	return c.now
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func (c *testClock) readings() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reads
}

// waiting is how many calls of org's budget wait at priority p.
func (b *budgets) waitingAt(org string, p priority) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.get(org).waiting[p]
}

// waitTake starts a wait for one call of org's budget; the channel gives
// its result.
func waitTake(ctx context.Context, b *budgets, org string, p priority) <-chan error {
	done := make(chan error, 1)
	go func() { done <- b.wait(ctx, org, p) }()
	return done
}

// TestBudgetServesHigherPrioritiesFirst: with the bucket empty, a
// response waiting behind a thought still goes first, and a blocked
// organization (RATELIMITED) waits for its reset while another does not.
// The clock is the test's: the bucket refills only when the test moves it.
func TestBudgetServesHigherPrioritiesFirst(t *testing.T) {
	clock := &testClock{now: time.Unix(1_700_000_000, 0)}
	b := newBudgets(20, 1, clock.Now) // a call every 50 ms
	ctx := context.Background()
	if err := b.wait(ctx, "o", prioAnswer); err != nil {
		t.Fatal(err)
	}
	// The bucket is empty and the clock stands still: the three queue up,
	// the lowest priority first, each seen waiting before the next comes.
	done := map[string]<-chan error{}
	for _, w := range []struct {
		name string
		p    priority
	}{{"thought", prioThought}, {"action", prioAction}, {"response", prioAnswer}} {
		done[w.name] = waitTake(ctx, b, "o", w.p)
		waitUntil(t, w.name+" waiting", func() bool { return b.waitingAt("o", w.p) == 1 })
	}
	// Each step of the clock refills one call: the highest priority
	// waiting takes it, and the others still wait.
	for i, name := range []string{"response", "action", "thought"} {
		clock.advance(50 * time.Millisecond)
		select {
		case err := <-done[name]:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("step %d: %s was not served", i, name)
		}
		for _, other := range []string{"response", "action", "thought"}[i+1:] {
			select {
			case <-done[other]:
				t.Fatalf("step %d: %s served with %s, on one call's refill", i, other, name)
			default:
			}
		}
	}

	// Blocked until the reset one second ahead: another organization goes
	// at once; this one not at 990 ms, then at 1 s.
	b.block("o", clock.Now().Add(time.Second))
	if err := b.wait(ctx, "other", prioThought); err != nil {
		t.Fatal(err)
	}
	blocked := waitTake(ctx, b, "o", prioAnswer)
	waitUntil(t, "the blocked call waiting", func() bool { return b.waitingAt("o", prioAnswer) == 1 })
	clock.advance(990 * time.Millisecond)
	// Two readings after the move: the waiter looked at 990 ms and went
	// back to waiting.
	seen := clock.readings()
	waitUntil(t, "the blocked call to look at the clock again", func() bool { return clock.readings() >= seen+2 })
	select {
	case err := <-blocked:
		t.Fatalf("a blocked organization went 10 ms before its reset (%v)", err)
	default:
	}
	clock.advance(10 * time.Millisecond)
	select {
	case err := <-blocked:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a blocked organization did not go at its reset")
	}

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	b.block("o", clock.Now().Add(time.Hour))
	if err := b.wait(cctx, "o", prioAnswer); err == nil {
		t.Fatal("a cancelled wait returned nil")
	}
}

// TestBudgetToolCallsDoNotWaitOutABlock: while an organization waits for
// a RATELIMITED reset, the model's own call fails at once, saying until
// when (a tool error it can act on), while an activity waits for the
// reset; once it is past, the model's calls are served again.
func TestBudgetToolCallsDoNotWaitOutABlock(t *testing.T) {
	clock := &testClock{now: time.Unix(1_700_000_000, 0)}
	b := newBudgets(20, 5, clock.Now)
	ctx := context.Background()
	b.block("o", clock.Now().Add(5*time.Second))
	err := b.wait(ctx, "o", prioTool)
	var blocked errBlocked
	if !errors.As(err, &blocked) || !strings.Contains(err.Error(), "22:13:25 UTC") {
		t.Fatalf("a tool call during the block: %v", err)
	}
	answer := waitTake(ctx, b, "o", prioAnswer)
	waitUntil(t, "the answer waiting", func() bool { return b.waitingAt("o", prioAnswer) == 1 })
	clock.advance(5 * time.Second)
	if err := <-answer; err != nil {
		t.Fatal(err)
	}
	clock.advance(time.Second) // the bucket refills
	if err := b.wait(ctx, "o", prioTool); err != nil {
		t.Fatalf("a tool call after the reset: %v", err)
	}
}
