package anthropic

import (
	"bytes"
	"container/list"
	"encoding/binary"
	"hash/maphash"
	"sync"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/switchboardhq/switchboard/core"
)

// encodedMessages keeps messages as the request body carries them, so a
// conversation sent again with a message more (the next step, the next
// turn) encodes only what is new instead of its whole history. It is
// keyed by what a message says, not where it is, and bounded by bytes:
// the least recently used go first. Safe for concurrent use.
type encodedMessages struct {
	max  int
	seed maphash.Seed

	mu    sync.Mutex
	total int
	lru   *list.List // of *encodedMessage, most recent first
	byKey map[uint64]*list.Element
}

type encodedMessage struct {
	key uint64
	msg core.Message
	// raw is the message's JSON; nil when the request leaves it out (it
	// has no content the API takes).
	raw []byte
}

func newEncodedMessages(maxBytes int) *encodedMessages {
	return &encodedMessages{max: maxBytes, seed: maphash.MakeSeed(), lru: list.New(), byKey: map[uint64]*list.Element{}}
}

// encode returns m's JSON, nil when the request leaves m out.
func (c *encodedMessages) encode(m core.Message) ([]byte, error) {
	if c == nil || c.max <= 0 {
		return encodeMessage(m)
	}
	key := c.hash(m)
	c.mu.Lock()
	if el, ok := c.byKey[key]; ok {
		if e := el.Value.(*encodedMessage); sameMessage(e.msg, m) {
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
	c.put(&encodedMessage{key: key, msg: m, raw: raw})
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

// size is what an entry holds: its encoding and the message it keeps to
// compare against (whose text, inputs and images it keeps alive).
func (e *encodedMessage) size() int {
	n := len(e.raw) + 64
	for _, b := range e.msg.Content {
		n += len(b.Text) + len(b.Input) + len(b.Output) + len(b.Data) + len(b.ToolUseID) + len(b.Name) + 64
	}
	return n
}

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

// hash covers every field of a message that message reads.
func (c *encodedMessages) hash(m core.Message) uint64 {
	var h maphash.Hash
	h.SetSeed(c.seed)
	str := func(s string) {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.WriteString(s)
	}
	byt := func(b []byte) {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
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
	return h.Sum64()
}

// sameMessage reports whether a and b say the same to the API: the
// fields message reads are equal.
func sameMessage(a, b core.Message) bool {
	if a.Role != b.Role || len(a.Content) != len(b.Content) {
		return false
	}
	for i := range a.Content {
		x, y := &a.Content[i], &b.Content[i]
		if x.Type != y.Type || x.Text != y.Text || x.ToolUseID != y.ToolUseID || x.Name != y.Name ||
			!bytes.Equal(x.Input, y.Input) || x.Output != y.Output || x.IsError != y.IsError ||
			x.MediaType != y.MediaType || !bytes.Equal(x.Data, y.Data) {
			return false
		}
	}
	return true
}

// requestBody is the streaming request for p (without its messages) and
// the messages' JSON: what the SDK would send for p with them, built from
// the kept encodings. "stream" leads, so setting it (the SDK does, for a
// stream) finds it at once.
func requestBody(p sdk.MessageNewParams, msgs [][]byte) ([]byte, error) {
	p.Messages = nil
	rest, err := p.MarshalJSON()
	if err != nil {
		return nil, err
	}
	size := len(rest) + 32
	for _, m := range msgs {
		size += len(m) + 1
	}
	buf := make([]byte, 0, size)
	buf = append(buf, `{"stream":true,"messages":[`...)
	for i, m := range msgs {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, m...)
	}
	buf = append(buf, ']')
	if inner := bytes.TrimSpace(rest); len(inner) > 2 {
		buf = append(buf, ',')
		buf = append(buf, inner[1:]...)
	} else {
		buf = append(buf, '}')
	}
	return buf, nil
}
