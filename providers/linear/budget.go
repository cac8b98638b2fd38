package linear

import (
	"context"
	"sync"
	"time"
)

// priority orders calls of one organization when its budget is short: a
// response or question a person waits for goes before tool progress,
// which goes before the model's own calls to Linear (its mcp_linear_*
// tools: a turn waits on them, but nobody watches them), which go before
// thoughts.
type priority int

const (
	prioAnswer  priority = iota // response, elicitation, error, the first thought
	prioAction                  // tool calls shown as actions
	prioTool                    // the model's mcp_linear_* calls
	prioThought                 // thoughts
	numPriorities
)

// budgets keeps one token bucket per organization, filled at rate calls a
// second up to burst, so the gateway stays inside Linear's rate limits on
// its own; a RATELIMITED answer empties the bucket until Linear's reset.
type budgets struct {
	rate  float64
	burst float64
	now   func() time.Time

	mu sync.Mutex
	m  map[string]*bucket
}

type bucket struct {
	tokens  float64
	last    time.Time
	blocked time.Time // no call before this (a RATELIMITED reset)
	waiting [numPriorities]int
}

func newBudgets(rate float64, burst int, now func() time.Time) *budgets {
	return &budgets{rate: rate, burst: float64(burst), now: now, m: map[string]*bucket{}}
}

func (b *budgets) get(org string) *bucket {
	k := b.m[org]
	if k == nil {
		k = &bucket{tokens: b.burst, last: b.now()}
		b.m[org] = k
	}
	return k
}

// errBlocked is the model's call to Linear while the organization waits
// for a RATELIMITED reset: it fails at once, as the RATELIMITED answer
// itself would, rather than hold the turn behind every activity waiting
// for the same reset (which go first, and may use it up again).
type errBlocked struct{ until time.Time }

func (e errBlocked) Error() string {
	return "Linear's rate limit is exhausted until " + e.until.UTC().Format("15:04:05 UTC") + ": try the call again after that"
}

// wait takes one call of org's budget at priority p, waiting while the
// bucket is empty or blocked, or while a call of higher priority waits;
// the model's own calls (prioTool) do not wait out a block (errBlocked).
func (b *budgets) wait(ctx context.Context, org string, p priority) error {
	registered := false
	defer func() {
		if registered {
			b.mu.Lock()
			b.get(org).waiting[p]--
			b.mu.Unlock()
		}
	}()
	for {
		b.mu.Lock()
		k := b.get(org)
		now := b.now()
		if el := now.Sub(k.last).Seconds(); el > 0 {
			k.tokens = min(b.burst, k.tokens+el*b.rate)
		}
		k.last = now
		ahead := false
		for q := range p {
			ahead = ahead || k.waiting[q] > 0
		}
		var d time.Duration
		switch {
		case now.Before(k.blocked) && p == prioTool:
			until := k.blocked
			b.mu.Unlock()
			return errBlocked{until: until}
		case now.Before(k.blocked):
			d = k.blocked.Sub(now)
		case ahead:
			d = 20 * time.Millisecond
		case k.tokens >= 1:
			k.tokens--
			b.mu.Unlock()
			return nil
		default:
			d = time.Duration((1 - k.tokens) / b.rate * float64(time.Second))
		}
		if !registered {
			k.waiting[p]++
			registered = true
		}
		b.mu.Unlock()
		// Waiters look again now and then: a higher priority may have
		// gone, or the clock (a test's) moved.
		t := time.NewTimer(min(max(d, time.Millisecond), 250*time.Millisecond))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// block stops org's calls until until.
func (b *budgets) block(org string, until time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := b.get(org)
	if until.After(k.blocked) {
		k.blocked = until
	}
	k.tokens = 0
}
