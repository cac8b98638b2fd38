package runtime

import (
	"context"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// tailStore serves logs of n events per session and records the `after`
// of every read.
type tailStore struct {
	Store
	logs   map[string]int
	afters []uint64
}

func (s *tailStore) Events(_ context.Context, id string, after uint64, limit int) ([]core.Event, error) {
	s.afters = append(s.afters, after)
	var out []core.Event
	for seq := after + 1; seq <= uint64(s.logs[id]); seq++ {
		out = append(out, core.Event{SessionID: id, Seq: seq})
		if limit > 0 && len(out) == limit {
			break
		}
	}
	return out, nil
}

func TestLogCacheReadsOnlyTheTail(t *testing.T) {
	st := &tailStore{logs: map[string]int{"a": 5, "b": 3}}
	c := newLogCache(st, 10)
	ctx := context.Background()
	check := func(id string, after uint64, limit int, first, n int) {
		t.Helper()
		evs, err := c.Events(ctx, id, after, limit)
		if err != nil || len(evs) != n || (n > 0 && evs[0].Seq != uint64(first)) {
			t.Fatalf("Events(%s, %d, %d) = %d events from %v, %v", id, after, limit, len(evs), evs, err)
		}
	}
	check("a", 0, 0, 1, 5)
	st.logs["a"] = 7
	check("a", 0, 0, 1, 7)
	check("a", 4, 2, 5, 2)
	if got := st.afters; len(got) != 3 || got[1] != 5 || got[2] != 7 {
		t.Fatalf("store reads after %v; want the tail only after the first", got)
	}
	// b (3) and a (7) make 10; growing a to 9 evicts b.
	check("b", 0, 0, 1, 3)
	st.logs["a"] = 9
	check("a", 0, 0, 1, 9)
	st.afters = nil
	check("b", 0, 0, 1, 3)
	if len(st.afters) != 1 || st.afters[0] != 0 {
		t.Fatalf("b should have been evicted and read whole: %v", st.afters)
	}
	if c.total > 10 {
		t.Fatalf("cache holds %d events, bound 10", c.total)
	}
}

// TestLogCacheTailOfUncachedLog: a read after a seq the cache does not
// hold of the session reads that tail from the store, not the whole log.
func TestLogCacheTailOfUncachedLog(t *testing.T) {
	st := &tailStore{logs: map[string]int{"a": 50}}
	c := newLogCache(st, 100)
	evs, err := c.Events(context.Background(), "a", 40, 0)
	if err != nil || len(evs) != 10 || evs[0].Seq != 41 {
		t.Fatalf("Events(a, 40) = %v, %v", evs, err)
	}
	if len(st.afters) != 1 || st.afters[0] != 40 {
		t.Fatalf("store reads after %v, want one after 40", st.afters)
	}
}

// TestLogCacheWindowsStay: what a reader was handed is not changed by the
// log growing in the cache, nor the cache by a reader appending to it.
func TestLogCacheWindowsStay(t *testing.T) {
	st := &tailStore{logs: map[string]int{"a": 3}}
	c := newLogCache(st, 100)
	ctx := context.Background()
	first, _ := c.Events(ctx, "a", 0, 0)
	_ = append(first, core.Event{Seq: 99})
	st.logs["a"] = 6
	second, _ := c.Events(ctx, "a", 0, 0)
	if len(first) != 3 || len(second) != 6 || second[3].Seq != 4 {
		t.Fatalf("first %v, second %v", first, second)
	}
}
