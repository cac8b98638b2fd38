package anthropic

import (
	"container/list"
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/switchboardhq/switchboard/core"
)

// lastRequests keeps the last request of each conversation a caller names
// (core.ModelRequest.Conversation): its messages as they were and their
// encodings. The next request of a conversation repeats most of them, and
// a message with the role and the very blocks (the same array, as long)
// the kept one had is taken as encoded then: no hash over its text, no
// lookup among the encoded messages. A request so costs what it adds, not
// its history.
//
// That rests on the caller's promise (core.ModelRequest.Conversation) not
// to change a sent message's blocks in place: a message it adds to gets
// new blocks, as appending past a full array does. The kept messages hold
// their blocks, so an array cannot be freed and reused for others.
//
// The body of the last request is kept too: the next one writes only what
// follows the messages it repeats, in the same array.
//
// It holds at most max conversations and about maxBytes of encodings,
// bodies and blocks, dropping the least recently used. Safe for
// concurrent use: a request takes its conversation's entry and puts back
// its own once sent, so two requests of one conversation at once only
// miss.
type lastRequests struct {
	max, maxBytes int

	mu     sync.Mutex
	bytes  int
	lru    *list.List // of *lastRequest, most recent first
	byName map[string]*list.Element

	// reused counts the messages taken as their conversation sent them.
	reused atomic.Int64
}

type lastRequest struct {
	name string
	msgs []core.Message
	// raw[i] is the encoding of msgs[i]; nil when the request leaves it
	// out.
	raw [][]byte
	// same is how many leading messages the request repeats from its
	// conversation's last one, as that one sent them.
	same int
	// body is what the request sends (build) and ends[i] where in it the
	// messages through msgs[i] end. Kept, they are the last request's,
	// built on by the next (nil when it was not sent whole).
	body []byte
	ends []int
	// size is what the entry holds: encodeAll counts the messages, keep
	// the body beside them.
	size int
}

// messageSize and blockSize are what a kept message and the blocks it
// holds take beside the bytes they refer to.
const (
	messageSize = int(unsafe.Sizeof(core.Message{}))
	blockSize   = int(unsafe.Sizeof(core.Block{}))
)

func newLastRequests(max, maxBytes int) *lastRequests {
	return &lastRequests{max: max, maxBytes: maxBytes, lru: list.New(), byName: map[string]*list.Element{}}
}

// take removes and returns the conversation's last request; nil when none
// is kept (or name is empty).
func (l *lastRequests) take(name string) *lastRequest {
	if l == nil || name == "" {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	el, ok := l.byName[name]
	if !ok {
		return nil
	}
	r := el.Value.(*lastRequest)
	l.lru.Remove(el)
	delete(l.byName, name)
	l.bytes -= r.size
	return r
}

// put keeps r as its conversation's last request.
func (l *lastRequests) put(r *lastRequest) {
	if l == nil || r.name == "" || r.size > l.maxBytes {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if el, ok := l.byName[r.name]; ok {
		l.bytes -= el.Value.(*lastRequest).size
		l.lru.Remove(el)
	}
	l.byName[r.name] = l.lru.PushFront(r)
	l.bytes += r.size
	for l.bytes > l.maxBytes || l.lru.Len() > l.max {
		el := l.lru.Back()
		old := el.Value.(*lastRequest)
		l.bytes -= old.size
		l.lru.Remove(el)
		delete(l.byName, old.name)
	}
}

// encodeAll returns the request of msgs in its conversation (name; none
// when empty): the encodings of msgs (raw; nil for a message the request
// leaves out), those the conversation's last request sent as they are
// taken from it, the others through encoded; how many leading messages
// are so taken (same); and the last request's body, to build on
// (lastRequest.build). The conversation keeps nothing until keep.
func (l *lastRequests) encodeAll(name string, msgs []core.Message, encoded *encodedMessages) (*lastRequest, error) {
	var last *lastRequest
	if l != nil {
		last = l.take(name)
	}
	next := &lastRequest{name: name}
	if last != nil {
		// The taken entry is this request's own from now on.
		next.msgs, next.raw, next.body, next.ends = last.msgs[:0], last.raw[:0], last.body, last.ends
	}
	reused, leading := 0, true
	for i, m := range msgs {
		var raw []byte
		if last != nil && i < len(last.msgs) && sameMessage(last.msgs[i], m) {
			raw = last.raw[i]
			reused++
		} else {
			var err error
			if raw, err = encoded.encode(m); err != nil {
				return nil, fmt.Errorf("message %d: %w", i, err)
			}
			leading = false
		}
		if leading {
			next.same++
		}
		next.msgs, next.raw = append(next.msgs, m), append(next.raw, raw)
		next.size += len(raw) + messageSize + len(m.Content)*blockSize
	}
	if l != nil {
		l.reused.Add(int64(reused))
	}
	// What the entry held past the end of this request would stay pinned.
	clear(next.msgs[len(next.msgs):cap(next.msgs)])
	clear(next.raw[len(next.raw):cap(next.raw)])
	return next, nil
}

// keep makes r its conversation's last request, with its body when it
// was sent whole (sent): until then nothing else may write into it.
func (l *lastRequests) keep(r *lastRequest, sent bool) {
	if l == nil || r.name == "" {
		return
	}
	if !sent {
		r.body, r.ends = nil, nil
	}
	// What encodeAll counted of the messages, and the body beside them.
	r.size += cap(r.body) + 8*cap(r.ends)
	l.put(r)
}

// sameMessage reports whether b is a as it was sent: the same role and
// the same blocks, by reference.
func sameMessage(a, b core.Message) bool {
	return a.Role == b.Role && len(a.Content) == len(b.Content) &&
		(len(a.Content) == 0 || unsafe.SliceData(a.Content) == unsafe.SliceData(b.Content))
}
