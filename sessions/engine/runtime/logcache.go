package runtime

import (
	"container/list"
	"context"
	"sync"
	"unsafe"

	"github.com/switchboardhq/switchboard/core"
)

// logCache keeps the decoded logs of recently run sessions so a wake reads
// only the events appended since, not the whole log: logs are append-only,
// so a cached prefix never goes stale. It is bounded by a total number of
// events and by their approximate size in memory (events differ in size
// by orders of magnitude: a status change or a tool's long output), so
// that however many sessions run, it holds at most about maxBytes; the
// least recently used sessions go first.
type logCache struct {
	Store
	max      int
	maxBytes int

	mu    sync.Mutex
	total int        // events kept
	bytes int        // their size, by eventSize
	lru   *list.List // of *cachedLog, most recent first
	byID  map[string]*list.Element
}

type cachedLog struct {
	id     string
	events []core.Event
	bytes  int
}

func newLogCache(s Store, maxEvents, maxBytes int) *logCache {
	return &logCache{Store: s, max: maxEvents, maxBytes: maxBytes, lru: list.New(), byID: map[string]*list.Element{}}
}

// eventSize approximates the memory a decoded event holds: its struct and
// the bytes its strings and body point to.
func eventSize(e *core.Event) int {
	n := int(unsafe.Sizeof(*e)) + len(e.ID) + len(e.SessionID) + len(e.Type) + len(e.Level) +
		len(e.Actor) + len(e.TurnID) + len(e.SourceKey) + len(e.Body)
	if e.QueuedAt != nil {
		n += int(unsafe.Sizeof(*e.QueuedAt))
	}
	if e.ProcessedAt != nil {
		n += int(unsafe.Sizeof(*e.ProcessedAt))
	}
	return n
}

// Events serves the log from the cache, reading the tail from the store.
// A read that starts past what the cache holds of the session (the turn
// reads only what is new once its context is kept) goes to the store as
// it is: filling the cache would read the whole log for it.
func (c *logCache) Events(ctx context.Context, id string, after uint64, limit int) ([]core.Event, error) {
	if c.max <= 0 {
		return c.Store.Events(ctx, id, after, limit)
	}
	c.mu.Lock()
	var have []core.Event
	var size int
	if el, ok := c.byID[id]; ok {
		k := el.Value.(*cachedLog)
		have, size = k.events, k.bytes
	}
	c.mu.Unlock()
	if after > uint64(len(have)) {
		return c.Store.Events(ctx, id, after, limit)
	}
	var last uint64
	if n := len(have); n > 0 {
		last = have[n-1].Seq
	}
	tail, err := c.Store.Events(ctx, id, last, 0)
	if err != nil {
		return nil, err
	}
	for i := range tail {
		size += eventSize(&tail[i])
	}
	all := c.grow(id, have, tail, size)
	return window(all, after, limit), nil
}

// grow appends tail to the session's cached log have and keeps it, size
// bytes (eventSize) in all. The
// cached slice grows in place when it is still the one kept, so a read
// costs what it appends; readers hold windows capped at their length,
// which what is appended after them never touches.
func (c *logCache) grow(id string, have, tail []core.Event, size int) []core.Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	var kept []core.Event
	if el, ok := c.byID[id]; ok {
		kept = el.Value.(*cachedLog).events
	}
	var all []core.Event
	switch {
	case len(tail) == 0:
		all = have
	case len(kept) == len(have) && len(have) > 0 && &kept[0] == &have[0]:
		all = append(have, tail...)
	default:
		all = append(have[:len(have):len(have)], tail...)
	}
	c.putLocked(id, all, size)
	return all
}

// window returns the events with seq > after, at most limit (0: all),
// capped at its length.
func window(all []core.Event, after uint64, limit int) []core.Event {
	// Seqs are 1..n without gaps, so seq s sits at index s-1.
	start := min(int(after), len(all))
	out := all[start:len(all):len(all)]
	if limit > 0 && len(out) > limit {
		out = out[:limit:limit]
	}
	return out
}

// putLocked keeps a session's log of size bytes (eventSize).
func (c *logCache) putLocked(id string, events []core.Event, size int) {
	if el, ok := c.byID[id]; ok {
		c.drop(el)
	}
	if len(events) > c.max || size > c.maxBytes {
		return // too long to keep; it is read from the store
	}
	c.byID[id] = c.lru.PushFront(&cachedLog{id: id, events: events, bytes: size})
	c.total += len(events)
	c.bytes += size
	for c.total > c.max || c.bytes > c.maxBytes {
		c.drop(c.lru.Back())
	}
}

func (c *logCache) drop(el *list.Element) {
	k := el.Value.(*cachedLog)
	c.total -= len(k.events)
	c.bytes -= k.bytes
	c.lru.Remove(el)
	delete(c.byID, k.id)
}
