package core

import (
	"crypto/rand"
	"encoding/binary"
	"strings"
	"sync"
	"time"
)

// ID prefixes. An id is prefix + "_" + 26 characters of lowercase Crockford
// base32 over 48 bits of millisecond time and 80 random bits, so ids of one
// kind sort by creation time (list pages use them as cursors).
const (
	PrefixAgent   = "agt"
	PrefixSession = "ses"
	PrefixEvent   = "evt"
	PrefixTurn    = "turn"
)

const crockford = "0123456789abcdefghjkmnpqrstvwxyz"

// lastID is the last id this process made. An id made in the same
// millisecond (or after the clock stepped back) follows it by a random
// step, so that the ids one process makes sort in the order it made them,
// as lists that promise oldest first need, and not only by millisecond.
// It is process state by nature, as the clock and the random source are.
var lastID struct {
	sync.Mutex
	b [16]byte
}

// NewID returns a new time-ordered id with the given prefix.
func NewID(prefix string) string {
	var b, r [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(time.Now().UnixMilli())<<16)
	if _, err := rand.Read(r[:]); err != nil {
		panic("core: crypto/rand failed: " + err.Error())
	}
	copy(b[6:], r[6:])
	lastID.Lock()
	if string(b[:6]) <= string(lastID.b[:6]) {
		b = lastID.b
		addID(&b, uint64(binary.BigEndian.Uint32(r[:4]))+1)
	}
	lastID.b = b
	lastID.Unlock()
	return encodeID(prefix, b)
}

// addID adds n to b read as one big-endian 128-bit number; a carry out of
// the random bits moves the time on by a millisecond, which keeps the
// order.
func addID(b *[16]byte, n uint64) {
	hi, lo := binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])
	sum := lo + n
	if sum < lo {
		hi++
	}
	binary.BigEndian.PutUint64(b[:8], hi)
	binary.BigEndian.PutUint64(b[8:], sum)
}

// HasPrefix reports whether id has the given kind prefix.
func HasPrefix(id, prefix string) bool {
	return len(id) == len(prefix)+27 && strings.HasPrefix(id, prefix+"_")
}
