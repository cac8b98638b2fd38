package harness

import (
	"container/list"
	"sync"

	"github.com/switchboardhq/switchboard/core"
)

// Contexts keeps the model contexts of the sessions this process runs, so
// a step decodes only the events logged since the last one instead of
// the whole log. An entry holds for one lease (Cycle.Epoch, or the grants
// that follow it on this holder: Carry) of one agent version: a lease
// that moved, or an edited agent, derives afresh; so
// does a compaction or a fetch of attachments. It keeps at most max
// sessions, dropping the least recently used. Safe for concurrent use.
type Contexts struct {
	max int

	mu   sync.Mutex
	lru  *list.List // of *kept, most recent first
	byID map[string]*list.Element
}

// kept is one session's derivation and what it is valid for.
type kept struct {
	session string
	key     contextKey
	d       *derivation
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
	return &Contexts{max: max, lru: list.New(), byID: map[string]*list.Element{}}
}

// Derive returns Derive(c.Agent.System, events) for the session of c,
// events being its whole log. The context is valid until the next Derive
// of the same session: the cache goes on adding to it.
func (cs *Contexts) Derive(c *Cycle, events []core.Event) (*Context, error) {
	if cs == nil || cs.max <= 0 {
		return Derive(c.Agent.System, events)
	}
	key := contextKey{epoch: c.Epoch, agent: c.Agent.ID, version: c.Agent.Version, system: c.Agent.System}
	d := cs.take(c.SessionID, key, events)
	if d == nil {
		var err error
		if d, err = derive(c.Agent.System, events); err != nil {
			return nil, err
		}
	}
	// Seqs run 1..n in a whole log; a gap means events is not one, and
	// what was derived from it must not be carried on from.
	if n := len(events); n == 0 || events[n-1].Seq == uint64(n) {
		cs.put(c.SessionID, key, d)
	}
	mc := *d.mc
	return &mc, nil
}

// take removes the session's derivation from the cache and extends it to
// events; nil when there is none to extend from.
func (cs *Contexts) take(id string, key contextKey, events []core.Event) *derivation {
	cs.mu.Lock()
	el, ok := cs.byID[id]
	if ok {
		cs.lru.Remove(el)
		delete(cs.byID, id)
	}
	cs.mu.Unlock()
	if !ok {
		return nil
	}
	k := el.Value.(*kept)
	last := k.d.mc.LastSeq
	n := len(events)
	if k.key != key || n == 0 || events[n-1].Seq != uint64(n) || last > uint64(n) {
		return nil
	}
	tail := events[last:]
	if !extendable(tail) || k.d.extend(tail) != nil {
		return nil
	}
	return k.d
}

func (cs *Contexts) put(id string, key contextKey, d *derivation) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if el, ok := cs.byID[id]; ok {
		cs.lru.Remove(el)
	}
	cs.byID[id] = cs.lru.PushFront(&kept{session: id, key: key, d: d})
	for cs.lru.Len() > cs.max {
		el := cs.lru.Back()
		cs.lru.Remove(el)
		delete(cs.byID, el.Value.(*kept).session)
	}
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
