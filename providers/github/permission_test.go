package github

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// testClock is a clock only the test moves.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// TestPermissionCacheExpires: a commenter's write access, once checked,
// is trusted for PermissionTTL by the provider's clock, then asked again.
func TestPermissionCacheExpires(t *testing.T) {
	r := newInstallRig(t, nil)
	clock := &testClock{now: time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)}
	r.p.cfg.Now = clock.Now
	r.fake.SetPermission("alice", "write")
	asked := func() int {
		n := 0
		for _, c := range r.fake.Calls() {
			if c.Method == "GET" && strings.HasSuffix(c.Path, "/collaborators/alice/permission") {
				n++
			}
		}
		return n
	}
	queued := func(number int) bool {
		t.Helper()
		s, err := r.store.SessionByKey(t.Context(), sessionKey("acme", "widgets", number))
		if errors.Is(err, core.ErrNotFound) {
			return false
		}
		if err != nil {
			t.Fatal(err)
		}
		p, err := r.store.Pending(t.Context(), s.ID)
		return err == nil && len(p) == 1
	}
	for _, step := range []struct {
		name    string
		perm    string        // alice's permission on GitHub before the mention
		advance time.Duration // clock moved before the mention
		number  int
		queued  bool
		asked   int // permission look-ups so far
	}{
		{"first mention: asked", "write", 0, 1, true, 1},
		{"write revoked, still trusted", "read", 30 * time.Second, 2, true, 1},
		{"trusted up to the TTL", "read", 29 * time.Second, 3, true, 1},
		{"past the TTL: asked again, refused", "read", 2 * time.Second, 4, false, 2},
		{"the refusal is trusted too", "write", 10 * time.Second, 5, false, 2},
	} {
		r.fake.SetPermission("alice", step.perm)
		clock.advance(step.advance)
		if code := r.deliver("issue_comment", mention(960, step.number, int64(100+step.number), "@sb-agent look")); code != 200 {
			t.Fatalf("%s: status %d", step.name, code)
		}
		if got := queued(step.number); got != step.queued {
			t.Fatalf("%s: queued %v, want %v", step.name, got, step.queued)
		}
		if got := asked(); got != step.asked {
			t.Fatalf("%s: %d permission look-ups, want %d", step.name, got, step.asked)
		}
	}
}
