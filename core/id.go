package core

import (
	"crypto/rand"
	"encoding/binary"
	"strings"
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

// NewID returns a new time-ordered id with the given prefix.
func NewID(prefix string) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(time.Now().UnixMilli())<<16)
	if _, err := rand.Read(b[6:]); err != nil {
		panic("core: crypto/rand failed: " + err.Error())
	}
	return encodeID(prefix, b)
}

// HasPrefix reports whether id has the given kind prefix.
func HasPrefix(id, prefix string) bool {
	return len(id) == len(prefix)+27 && strings.HasPrefix(id, prefix+"_")
}
