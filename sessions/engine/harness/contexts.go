package harness

import (
	"container/list"
	"sync"
	"unsafe"

	"github.com/switchboardhq/switchboard/core"
)

// Contexts keeps the model contexts of the sessions this process runs, so
// a step decodes only the events logged since the last one instead of
// the whole log. An entry holds for one lease (Cycle.Epoch, or the grants
// that follow it on this holder: Carry) of one agent version: a lease
// that moved, or an edited agent, derives afresh; so
// does a compaction or a fetch of attachments. It keeps at most max
// sessions, and contexts derived from at most about maxBytes of log (a
// context may hold a model's whole window), dropping the least recently
// used. Safe for concurrent use.
type Contexts struct {
	max      int
	maxBytes int

	mu    sync.Mutex
	bytes int        // of the kept contexts, by logSize
	lru   *list.List // of *kept, most recent first
	byID  map[string]*list.Element
}

// DefaultContextBytes bounds the contexts a Contexts keeps, by logSize,
// unless LimitBytes says otherwise.
const DefaultContextBytes = 64 << 20

// kept is one session's derivation and what it is valid for.
type kept struct {
	session string
	key     contextKey
	d       *derivation
	bytes   int
}

type contextKey struct {
	epoch   uint64
	agent   string
	version int
	system  string
}

// NewContexts returns a cache of at most max sessions' contexts; max <= 0
// keeps none.
func NewContexts(max int) *Contexts {
	return &Contexts{max: max, maxBytes: DefaultContextBytes, lru: list.New(), byID: map[string]*list.Element{}}
}

// LimitBytes bounds the kept contexts to about n bytes (logSize; default
// DefaultContextBytes) and returns cs.
func (cs *Contexts) LimitBytes(n int) *Contexts {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.maxBytes = n
	cs.trim()
	return cs
}

// logSize approximates the memory a context derived from events holds:
// about their bodies, decoded, and a block for each. It is counted over
// the events a step adds, so that keeping a context costs what is new.
func logSize(events []core.Event) int {
	n := 0
	for i := range events {
		n += int(unsafe.Sizeof(core.Block{})) + len(events[i].Body)
	}
	return n
}

// Derive returns Derive(c.Agent.System, events) for the session of c,
// events being its whole log. The context is valid until the next Derive
// of the same session: the cache goes on adding to it.
func (cs *Contexts) Derive(c *Cycle, events []core.Event) (*Context, error) {
	if cs == nil || cs.max <= 0 {
		return Derive(c.Agent.System, events)
	}
	key := contextKey{epoch: c.Epoch, agent: c.Agent.ID, version: c.Agent.Version, system: c.Agent.System}
	d, size := cs.take(c.SessionID, key, events)
	if d == nil {
		var err error
		if d, err = derive(c.Agent.System, events); err != nil {
			return nil, err
		}
		size = len(c.Agent.System) + logSize(events)
	}
	// Seqs run 1..n in a whole log; a gap means events is not one, and
	// what was derived from it must not be carried on from.
	if n := len(events); n == 0 || events[n-1].Seq == uint64(n) {
		cs.put(c.SessionID, key, d, size)
	}
	mc := *d.mc
	return &mc, nil
}

// take removes the session's derivation from the cache and extends it to
// events, with its size (logSize) once extended; nil when there is none to
// extend from.
func (cs *Contexts) take(id string, key contextKey, events []core.Event) (*derivation, int) {
	cs.mu.Lock()
	el, ok := cs.byID[id]
	if ok {
		cs.drop(el)
	}
	cs.mu.Unlock()
	if !ok {
		return nil, 0
	}
	k := el.Value.(*kept)
	last := k.d.mc.LastSeq
	n := len(events)
	if k.key != key || n == 0 || events[n-1].Seq != uint64(n) || last > uint64(n) {
		return nil, 0
	}
	tail := events[last:]
	if !extendable(tail) || k.d.extend(tail) != nil {
		return nil, 0
	}
	return k.d, k.bytes + logSize(tail)
}

// put keeps the session's derivation, of size bytes (logSize).
func (cs *Contexts) put(id string, key contextKey, d *derivation, size int) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if el, ok := cs.byID[id]; ok {
		cs.drop(el)
	}
	if size > cs.maxBytes {
		return // too large to keep: the next step derives it afresh
	}
	cs.byID[id] = cs.lru.PushFront(&kept{session: id, key: key, d: d, bytes: size})
	cs.bytes += size
	cs.trim()
}

// trim drops the least recently used contexts until the rest are within
// the bounds.
func (cs *Contexts) trim() {
	for cs.lru.Len() > 0 && (cs.lru.Len() > cs.max || cs.bytes > cs.maxBytes) {
		cs.drop(cs.lru.Back())
	}
}

func (cs *Contexts) drop(el *list.Element) {
	k := el.Value.(*kept)
	cs.bytes -= k.bytes
	cs.lru.Remove(el)
	delete(cs.byID, k.session)
}

// Carry keeps the session's context for its lease's next grant, epoch
// to, when the grant it was kept under, from, was the one before: no
// other holder ran the session in between. Other entries stay as they
// are, so a grant after a move derives afresh.
func (cs *Contexts) Carry(sessionID string, from, to uint64) {
	if cs == nil {
		return
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if el, ok := cs.byID[sessionID]; ok {
		if k := el.Value.(*kept); k.key.epoch == from {
			k.key.epoch = to
		}
	}
}

// Len is how many sessions' contexts are kept.
func (cs *Contexts) Len() int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.lru.Len()
}
