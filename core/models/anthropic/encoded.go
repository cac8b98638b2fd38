package anthropic

import (
	"bytes"
	"container/list"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"sync"
	"unsafe"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/switchboardhq/switchboard/core"
)

// encodedMessages keeps messages as the request body carries them, so a
// conversation sent again with a message more (the next step, the next
// turn) encodes only what is new instead of its whole history. It is
// keyed by what a message says, not where it is, and bounded by bytes:
// the least recently used go first. Safe for concurrent use.
//
// A message is found first by where its strings are (place): a turn
// sends the messages it derived again, the same values, so most are found
// without reading their text, which would make every request cost the
// whole conversation. Only a message not found there is hashed by what it
// says (key).
type encodedMessages struct {
	max  int
	seed maphash.Seed

	mu      sync.Mutex
	total   int
	lru     *list.List // of *encodedMessage, most recent first
	byKey   map[uint64]*list.Element
	byPlace map[uint64]*list.Element
	// hashed counts the messages hashed by what they say.
	hashed int
}

type encodedMessage struct {
	key   uint64
	place uint64
	msg   core.Message
	// raw is the message's JSON; nil when the request leaves it out (it
	// has no content the API takes).
	raw []byte
}

func newEncodedMessages(maxBytes int) *encodedMessages {
	return &encodedMessages{max: maxBytes, seed: maphash.MakeSeed(), lru: list.New(),
		byKey: map[uint64]*list.Element{}, byPlace: map[uint64]*list.Element{}}
}

// encodeAll returns each message's JSON, nil where the request leaves
// one out. The messages found where they are take one lock for all.
func (c *encodedMessages) encodeAll(msgs []core.Message) ([][]byte, error) {
	out := make([][]byte, len(msgs))
	if c == nil || c.max <= 0 {
		for i, m := range msgs {
			raw, err := encodeMessage(m)
			if err != nil {
				return nil, fmt.Errorf("message %d: %w", i, err)
			}
			out[i] = raw
		}
		return out, nil
	}
	places := make([]uint64, len(msgs))
	for i := range msgs {
		places[i] = c.place(msgs[i])
	}
	var missed []int
	c.mu.Lock()
	for i := range msgs {
		// Equal strings at one place compare at once (same pointer).
		if el, ok := c.byPlace[places[i]]; ok {
			if e := el.Value.(*encodedMessage); sameMessage(e.msg, msgs[i]) {
				c.lru.MoveToFront(el)
				out[i] = e.raw
				continue
			}
		}
		missed = append(missed, i)
	}
	c.mu.Unlock()
	for _, i := range missed {
		raw, err := c.encodeElsewhere(msgs[i], places[i])
		if err != nil {
			return nil, fmt.Errorf("message %d: %w", i, err)
		}
		out[i] = raw
	}
	return out, nil
}

// encodeElsewhere returns the JSON of a message not found at its place:
// an equal copy's, found by what it says, or a new encoding.
func (c *encodedMessages) encodeElsewhere(m core.Message, place uint64) ([]byte, error) {
	key := c.hash(m)
	c.mu.Lock()
	c.hashed++
	if el, ok := c.byKey[key]; ok {
		if e := el.Value.(*encodedMessage); sameMessage(e.msg, m) {
			// Kept from now on as m, found where m is.
			c.unplace(e, el)
			e.msg, e.place = m, place
			c.byPlace[place] = el
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
	c.put(&encodedMessage{key: key, place: place, msg: m, raw: raw})
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
		c.remove(el)
	}
	if el, ok := c.byPlace[e.place]; ok {
		c.remove(el)
	}
	el := c.lru.PushFront(e)
	c.byKey[e.key], c.byPlace[e.place] = el, el
	c.total += size
	for c.total > c.max {
		c.remove(c.lru.Back())
	}
}

// remove drops an entry and its keys; c.mu is held.
func (c *encodedMessages) remove(el *list.Element) {
	e := el.Value.(*encodedMessage)
	c.total -= e.size()
	c.lru.Remove(el)
	if c.byKey[e.key] == el {
		delete(c.byKey, e.key)
	}
	c.unplace(e, el)
}

// unplace drops e's place key if it still leads to e; c.mu is held.
func (c *encodedMessages) unplace(e *encodedMessage, el *list.Element) {
	if c.byPlace[e.place] == el {
		delete(c.byPlace, e.place)
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

// place covers where a message's strings are and what its bytes say:
// strings never change, so while an entry keeps its message alive, equal
// addresses and lengths mean equal strings; byte slices may be written
// in place, so they are hashed whole (tool inputs are small, images rare).
func (c *encodedMessages) place(m core.Message) uint64 {
	var h maphash.Hash
	h.SetSeed(c.seed)
	var w [16]byte
	str := func(s string) {
		binary.LittleEndian.PutUint64(w[:8], uint64(uintptr(unsafe.Pointer(unsafe.StringData(s)))))
		binary.LittleEndian.PutUint64(w[8:], uint64(len(s)))
		h.Write(w[:])
	}
	byt := func(b []byte) {
		binary.LittleEndian.PutUint64(w[:8], uint64(len(b)))
		h.Write(w[:8])
		h.Write(b)
	}
	h.WriteString(string(m.Role))
	for _, b := range m.Content {
		h.WriteString(string(b.Type))
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
