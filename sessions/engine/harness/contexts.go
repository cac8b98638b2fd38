package harness

import (
	"container/list"
	"context"
	"fmt"
	"sync"
	"unsafe"

	"github.com/switchboardhq/switchboard/core"
)

// Contexts keeps what a turn reads of the sessions this process runs, so
// a step reads and decodes only the events logged since the last one
// instead of the whole log: the model context derived so far, and the
// part of the log a turn still looks at (Events). An entry holds for one
// lease (Cycle.Epoch, or the grants that follow it on this holder: Carry)
// of one agent version: a lease that moved, or an edited agent, reads and
// derives afresh; a compaction or a fetch of attachments derives afresh.
// It keeps at most max sessions, and contexts and views of at most about
// maxBytes of log (logSize; a context may hold a model's whole window),
// dropping the least recently used. Safe for concurrent use.
type Contexts struct {
	max      int
	maxBytes int

	mu    sync.Mutex
	bytes int        // of the kept entries
	lru   *list.List // of *kept, most recent first
	byID  map[string]*list.Element
}

// DefaultContextBytes bounds what a Contexts keeps, by logSize, unless
// LimitBytes says otherwise.
const DefaultContextBytes = 64 << 20

// kept is one session's derivation and view of its log, and what they are
// valid for.
type kept struct {
	session string
	key     contextKey
	d       *derivation // nil until a context is derived
	// view is the log from its horizon on (see horizon), through seen,
	// the seq of the last event read.
	view []core.Event
	seen uint64
	// dBytes is the size of the log d was derived from, and bytes the
	// entry's as last kept (logSize).
	dBytes, bytes int
}

type contextKey struct {
	epoch   uint64
	agent   string
	version int
	system  string
}

func keyOf(c *Cycle) contextKey {
	return contextKey{epoch: c.Epoch, agent: c.Agent.ID, version: c.Agent.Version, system: c.Agent.System}
}

// NewContexts returns a cache of at most max sessions' contexts; max <= 0
// keeps none.
func NewContexts(max int) *Contexts {
	return &Contexts{max: max, maxBytes: DefaultContextBytes, lru: list.New(), byID: map[string]*list.Element{}}
}

// LimitBytes bounds the kept entries to about n bytes (logSize; default
// DefaultContextBytes) and returns cs.
func (cs *Contexts) LimitBytes(n int) *Contexts {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.maxBytes = n
	cs.trim()
	return cs
}

// logSize approximates the memory events hold, or a context derived from
// them: about their bodies, decoded, and a block for each. A context's is
// counted over the events each step adds, so that keeping it costs what
// is new.
func logSize(events []core.Event) int {
	n := 0
	for i := range events {
		n += int(unsafe.Sizeof(core.Block{})) + len(events[i].Body)
	}
	return n
}

func (cs *Contexts) off() bool { return cs == nil || cs.max <= 0 }

// Events returns the session's log as far as a turn reads it: every event
// from the horizon on, through the last one logged. The horizon is the
// earliest of the last turn.started, the oldest tool call without a
// result, the oldest user.message whose attachments wait to be fetched,
// and the first event not yet in the kept context; what the turn reads
// before it (turnEvents, openCalls, staleAnswers, Fetch) is the same on
// these events as on the whole log. Only the events logged since the
// last call are read from the store. Without a cache it is the whole log.
func (cs *Contexts) Events(ctx context.Context, c *Cycle) ([]core.Event, error) {
	if cs.off() {
		return readLog(ctx, c, 0)
	}
	key := keyOf(c)
	var view []core.Event
	var seen, derived uint64
	cs.mu.Lock()
	if el, ok := cs.byID[c.SessionID]; ok {
		if k := el.Value.(*kept); k.key == key {
			view, seen = k.view, k.seen
			if k.d != nil {
				derived = k.d.mc.LastSeq
			}
		}
	}
	cs.mu.Unlock()
	tail, err := readLog(ctx, c, seen)
	if err != nil {
		return nil, err
	}
	if seen > 0 && len(tail) > 0 && tail[0].Seq != seen+1 {
		// Not the continuation of what was kept: read it all again.
		view, seen, derived = nil, 0, 0
		if tail, err = readLog(ctx, c, 0); err != nil {
			return nil, err
		}
	}
	all := append(view[:len(view):len(view)], tail...)
	if n := len(all); n > 0 {
		seen = all[n-1].Seq
	}
	fetching := c.Attachments != nil && c.Attachments.Fetcher != nil
	h, err := horizon(all, derived, fetching)
	if err != nil {
		return nil, err
	}
	cs.keep(c.SessionID, key, func(k *kept) {
		k.view, k.seen = all[h:len(all):len(all)], seen
	})
	return all[:len(all):len(all)], nil
}

func readLog(ctx context.Context, c *Cycle, after uint64) ([]core.Event, error) {
	events, err := c.Log.Events(ctx, c.SessionID, after, 0)
	if err != nil {
		return nil, fmt.Errorf("read log: %w", err)
	}
	return events, nil
}

// horizon is the index in events (a log from some seq on, through its
// last event) from which a turn's reads need them: see Events. derived is
// the last seq the kept context covers (0: none).
func horizon(events []core.Event, derived uint64, fetching bool) (int, error) {
	h := len(events)
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Type == core.TypeTurnStarted {
			h = i
			break
		}
	}
	for i, e := range events {
		if i >= h {
			break
		}
		if e.Seq > derived {
			h = i
			break
		}
	}
	// The calls still open, at the index of their tool use.
	open := map[string]int{}
	var fetched map[uint64][]core.Attachment
	if fetching {
		var err error
		if fetched, err = core.FetchedAttachments(events); err != nil {
			return 0, err
		}
	}
	for i, e := range events {
		switch e.Type {
		case core.TypeAgentToolUse, core.TypeAgentCustomToolUse:
			var b core.ToolUseBody
			if err := e.Decode(&b); err != nil {
				return 0, err
			}
			open[b.ToolUseID] = i
		case core.TypeAgentToolResult, core.TypeUserCustomToolResult:
			id, err := answeredCall(e)
			if err != nil {
				return 0, err
			}
			delete(open, id)
		case core.TypeUserMessage:
			if !fetching || i >= h {
				continue
			}
			if _, done := fetched[e.Seq]; done {
				continue
			}
			var b core.MessageBody
			if err := e.Decode(&b); err != nil {
				return 0, err
			}
			for _, a := range b.Attachments {
				if a.Pending() {
					h = i
					break
				}
			}
		}
	}
	for _, i := range open {
		h = min(h, i)
	}
	return h, nil
}

// Context returns the model context of the session of c, events being
// what Events returned (and the events the turn logged after it, such as
// fetched attachments). It carries on from the kept context, reading the
// whole log only when it must derive afresh.
func (cs *Contexts) Context(ctx context.Context, c *Cycle, events []core.Event) (*Context, error) {
	if cs.off() || len(events) == 0 || events[0].Seq == 1 {
		return cs.Derive(c, events)
	}
	key := keyOf(c)
	if d, size := cs.extend(c.SessionID, key, events); d != nil {
		cs.keep(c.SessionID, key, func(k *kept) { k.d, k.dBytes = d, size })
		mc := *d.mc
		return &mc, nil
	}
	whole, err := readLog(ctx, c, 0)
	if err != nil {
		return nil, err
	}
	return cs.Derive(c, whole)
}

// extend takes the session's derivation from the cache and extends it by
// the events of log (a contiguous run of the log through its end) it does
// not cover yet, with its size once extended (logSize); nil when there is
// none to extend from.
func (cs *Contexts) extend(id string, key contextKey, log []core.Event) (*derivation, int) {
	d, size := cs.takeDerivation(id, key)
	if d == nil {
		return nil, 0
	}
	last := d.mc.LastSeq
	if n := len(log); n == 0 || log[0].Seq > last+1 || log[n-1].Seq < last {
		return nil, 0
	}
	i := 0
	for i < len(log) && log[i].Seq <= last {
		i++
	}
	tail := log[i:]
	if !extendable(tail) || d.extend(tail) != nil {
		return nil, 0
	}
	return d, size + logSize(tail)
}

// Derive returns Derive(c.Agent.System, events) for the session of c,
// events being its whole log. The context is valid until the next Derive
// of the same session: the cache goes on adding to it.
func (cs *Contexts) Derive(c *Cycle, events []core.Event) (*Context, error) {
	if cs.off() {
		return Derive(c.Agent.System, events)
	}
	key := keyOf(c)
	var d *derivation
	var size int
	// Seqs run 1..n in a whole log; a gap means events is not one, and
	// what was derived from it must not be carried on from.
	whole := len(events) == 0 || events[len(events)-1].Seq == uint64(len(events))
	if whole {
		d, size = cs.extend(c.SessionID, key, events)
	} else {
		cs.takeDerivation(c.SessionID, key)
	}
	if d == nil {
		var err error
		if d, err = derive(c.Agent.System, events); err != nil {
			return nil, err
		}
		size = len(c.Agent.System) + logSize(events)
	}
	if whole {
		cs.keep(c.SessionID, key, func(k *kept) { k.d, k.dBytes = d, size })
	}
	mc := *d.mc
	return &mc, nil
}

// takeDerivation removes the session's derivation from the cache and
// returns it, with its size, when it is valid for key: the caller extends
// it (which changes it in place) and keeps it again.
func (cs *Contexts) takeDerivation(id string, key contextKey) (*derivation, int) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	el, ok := cs.byID[id]
	if !ok {
		return nil, 0
	}
	k := el.Value.(*kept)
	d, size := k.d, k.dBytes
	k.d, k.dBytes = nil, 0
	if k.key != key || d == nil {
		return nil, 0
	}
	return d, size
}

// keep updates the session's entry, starting it afresh when it was kept
// for another key, and makes it the most recently used.
func (cs *Contexts) keep(id string, key contextKey, update func(*kept)) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	var k *kept
	if el, ok := cs.byID[id]; ok {
		k = el.Value.(*kept)
		cs.lru.MoveToFront(el)
	} else {
		k = &kept{session: id}
		cs.byID[id] = cs.lru.PushFront(k)
	}
	if k.key != key {
		cs.bytes -= k.bytes
		*k = kept{session: id, key: key}
	}
	update(k)
	// The view runs from the turn's horizon: a walk of what the turn reads.
	cs.bytes -= k.bytes
	k.bytes = k.dBytes + logSize(k.view)
	cs.bytes += k.bytes
	cs.trim()
}

// trim drops the least recently used entries until the rest are within
// the bounds; an entry larger than the whole byte bound goes too, and the
// next step reads and derives afresh.
func (cs *Contexts) trim() {
	for cs.lru.Len() > 0 && (cs.lru.Len() > cs.max || cs.bytes > cs.maxBytes) {
		el := cs.lru.Back()
		k := el.Value.(*kept)
		cs.bytes -= k.bytes
		cs.lru.Remove(el)
		delete(cs.byID, k.session)
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
