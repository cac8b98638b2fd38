package runtime

import (
	"context"
	"fmt"
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
	c := newLogCache(st, 10, 1<<30)
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

// bodyStore serves logs of one event each, with a body of size bytes.
type bodyStore struct {
	Store
	size int
	read map[string]int
}

func (s *bodyStore) Events(_ context.Context, id string, after uint64, limit int) ([]core.Event, error) {
	s.read[id]++
	if after > 0 {
		return nil, nil
	}
	return []core.Event{{SessionID: id, Seq: 1, Body: make([]byte, s.size)}}, nil
}

// TestLogCacheBoundedBySize: logs few in events but large in bytes are
// evicted by their size, so touching many sessions leaves the cache
// within its byte bound, the most recent ones kept.
func TestLogCacheBoundedBySize(t *testing.T) {
	st := &bodyStore{size: 10_000, read: map[string]int{}}
	one := eventSize(&core.Event{SessionID: "s0000", Seq: 1, Body: make([]byte, st.size)})
	const keep = 8
	c := newLogCache(st, 1_000_000, keep*one)
	ctx := context.Background()
	ids := make([]string, 100)
	for i := range ids {
		ids[i] = fmt.Sprintf("s%04d", i)
		if _, err := c.Events(ctx, ids[i], 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	if len(c.byID) != keep || c.lru.Len() != keep || c.bytes > keep*one || c.total != keep {
		t.Fatalf("cache holds %d sessions (%d listed), %d events, %d bytes; want %d sessions within %d bytes",
			len(c.byID), c.lru.Len(), c.total, c.bytes, keep, keep*one)
	}
	for _, id := range ids[len(ids)-keep:] {
		if _, ok := c.byID[id]; !ok {
			t.Fatalf("recent session %s evicted", id)
		}
	}
	// A log larger than the whole bound is served, not kept.
	big := &bodyStore{size: 10 * keep * one, read: map[string]int{}}
	c = newLogCache(big, 1_000_000, keep*one)
	if evs, err := c.Events(ctx, "big", 0, 0); err != nil || len(evs) != 1 {
		t.Fatalf("Events = %d, %v", len(evs), err)
	}
	if c.lru.Len() != 0 || c.bytes != 0 {
		t.Fatalf("a log over the bound kept: %d sessions, %d bytes", c.lru.Len(), c.bytes)
	}
}

// TestLogCacheTailOfUncachedLog: a read after a seq the cache does not
// hold of the session reads that tail from the store, not the whole log.
func TestLogCacheTailOfUncachedLog(t *testing.T) {
	st := &tailStore{logs: map[string]int{"a": 50}}
	c := newLogCache(st, 100, 1<<30)
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
	c := newLogCache(st, 100, 1<<30)
	ctx := context.Background()
	first, _ := c.Events(ctx, "a", 0, 0)
	_ = append(first, core.Event{Seq: 99})
	st.logs["a"] = 6
	second, _ := c.Events(ctx, "a", 0, 0)
	if len(first) != 3 || len(second) != 6 || second[3].Seq != 4 {
		t.Fatalf("first %v, second %v", first, second)
	}
}
