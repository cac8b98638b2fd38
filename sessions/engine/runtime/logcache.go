package runtime

import (
	"container/list"
	"context"
	"sync"

	"github.com/switchboardhq/switchboard/core"
)

// logCache keeps the decoded logs of recently run sessions so a wake reads
// only the events appended since, not the whole log: logs are append-only,
// so a cached prefix never goes stale. It is bounded by a total number of
// events; the least recently used sessions go first.
type logCache struct {
	Store
	max int

	mu    sync.Mutex
	total int
	lru   *list.List // of *cachedLog, most recent first
	byID  map[string]*list.Element
}

type cachedLog struct {
	id     string
	events []core.Event
}

func newLogCache(s Store, maxEvents int) *logCache {
	return &logCache{Store: s, max: maxEvents, lru: list.New(), byID: map[string]*list.Element{}}
}

// Events serves the log from the cache, reading the tail from the store.
func (c *logCache) Events(ctx context.Context, id string, after uint64, limit int) ([]core.Event, error) {
	if c.max <= 0 {
		return c.Store.Events(ctx, id, after, limit)
	}
	c.mu.Lock()
	var have []core.Event
	if el, ok := c.byID[id]; ok {
		have = el.Value.(*cachedLog).events
	}
	c.mu.Unlock()
	var last uint64
	if n := len(have); n > 0 {
		last = have[n-1].Seq
	}
	tail, err := c.Store.Events(ctx, id, last, 0)
	if err != nil {
		return nil, err
	}
	all := append(have[:len(have):len(have)], tail...)
	c.put(id, all)
	return window(all, after, limit), nil
}

// window returns the events with seq > after, at most limit (0: all).
func window(all []core.Event, after uint64, limit int) []core.Event {
	// Seqs are 1..n without gaps, so seq s sits at index s-1.
	start := min(int(after), len(all))
	out := all[start:]
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}

func (c *logCache) put(id string, events []core.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byID[id]; ok {
		c.total -= len(el.Value.(*cachedLog).events)
		c.lru.Remove(el)
		delete(c.byID, id)
	}
	if len(events) > c.max {
		return // too long to keep; it is read from the store
	}
	c.byID[id] = c.lru.PushFront(&cachedLog{id: id, events: events})
	c.total += len(events)
	for c.total > c.max {
		el := c.lru.Back()
		old := el.Value.(*cachedLog)
		c.total -= len(old.events)
		c.lru.Remove(el)
		delete(c.byID, old.id)
	}
}
