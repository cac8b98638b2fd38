package anthropic

import (
	"container/list"
	"encoding/binary"
	"hash/maphash"
	"sync"

	"github.com/switchboardhq/switchboard/core"
)

// encodedMessages keeps messages as the request body carries them, so a
// conversation sent again with a message more (the next step, the next
// turn) encodes only what is new instead of its whole history. It is
// keyed by what a message says, not where it is, and bounded by bytes:
// the least recently used go first. Safe for concurrent use.
//
// A message is found by a 64-bit hash of every field the request reads,
// under a seed chosen per process, and its shape (role, blocks, bytes)
// must match too; the message itself is not kept to compare against, so
// finding one costs a pass over it rather than two, and an entry holds
// only its encoding. Two messages of one shape that differ share a key
// with a chance of 2^-64, and the seed keeps anyone from making them.
type encodedMessages struct {
	max  int
	seed maphash.Seed

	mu    sync.Mutex
	total int
	lru   *list.List // of *encodedMessage, most recent first
	byKey map[uint64]*list.Element
}

type encodedMessage struct {
	key   uint64
	shape messageShape
	// raw is the message's JSON; nil when the request leaves it out (it
	// has no content the API takes).
	raw []byte
}

// messageShape is what an entry checks beside its key.
type messageShape struct {
	role          core.Role
	blocks, bytes int
}

// entryOverhead approximates an entry's bookkeeping beside its encoding.
const entryOverhead = 128

func newEncodedMessages(maxBytes int) *encodedMessages {
	return &encodedMessages{max: maxBytes, seed: maphash.MakeSeed(), lru: list.New(), byKey: map[uint64]*list.Element{}}
}

// encode returns m's JSON, nil when the request leaves m out.
func (c *encodedMessages) encode(m core.Message) ([]byte, error) {
	if c == nil || c.max <= 0 {
		return encodeMessage(m)
	}
	key, shape := c.hash(m)
	c.mu.Lock()
	if el, ok := c.byKey[key]; ok {
		if e := el.Value.(*encodedMessage); e.shape == shape {
			c.lru.MoveToFront(el)
			c.mu.Unlock()
			return e.raw, nil
		}
	}
	c.mu.Unlock()
	raw, err := encodeMessage(m)
	if err != nil {
		return nil, err
	}
	c.put(&encodedMessage{key: key, shape: shape, raw: raw})
	return raw, nil
}

func (c *encodedMessages) put(e *encodedMessage) {
	size := e.size()
	if size > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[e.key]; ok {
		c.total -= el.Value.(*encodedMessage).size()
		c.lru.Remove(el)
	}
	c.byKey[e.key] = c.lru.PushFront(e)
	c.total += size
	for c.total > c.max {
		el := c.lru.Back()
		old := el.Value.(*encodedMessage)
		c.total -= old.size()
		c.lru.Remove(el)
		delete(c.byKey, old.key)
	}
}

// size is what an entry holds.
func (e *encodedMessage) size() int { return len(e.raw) + entryOverhead }

// encodeMessage is m as the SDK encodes it in a request; nil when the
// request leaves it out.
func encodeMessage(m core.Message) ([]byte, error) {
	mp, err := message(m)
	if err != nil {
		return nil, err
	}
	// The API refuses a message with no content; a turn of only empty
	// text has nothing to say anyway.
	if len(mp.Content) == 0 {
		return nil, nil
	}
	return mp.MarshalJSON()
}

// hash covers every field of a message that message reads; the shape
// is counted on the way.
func (c *encodedMessages) hash(m core.Message) (uint64, messageShape) {
	var h maphash.Hash
	h.SetSeed(c.seed)
	shape := messageShape{role: m.Role, blocks: len(m.Content)}
	length := func(n int) {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(n))
		h.Write(b[:])
		shape.bytes += n
	}
	str := func(s string) {
		length(len(s))
		h.WriteString(s)
	}
	byt := func(b []byte) {
		length(len(b))
		h.Write(b)
	}
	str(string(m.Role))
	for _, b := range m.Content {
		str(string(b.Type))
		str(b.Text)
		str(b.ToolUseID)
		str(b.Name)
		byt(b.Input)
		str(b.Output)
		if b.IsError {
			h.WriteByte(1)
		} else {
			h.WriteByte(0)
		}
		str(b.MediaType)
		byt(b.Data)
	}
	return h.Sum64(), shape
}
