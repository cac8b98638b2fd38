package core

import (
	"crypto/rand"
	"encoding/binary"
	"time"
)

// NewSeqID returns an id of the NewID form whose 80 bits after the time
// are seq (64 bits) and 16 random bits, so ids made at the same
// millisecond sort in seq order. Stores use it with a persisted sequence
// for records that must list in the order they were made (deliveries).
func NewSeqID(prefix string, t time.Time, seq uint64) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(t.UnixMilli())<<16)
	binary.BigEndian.PutUint64(b[6:14], seq)
	if _, err := rand.Read(b[14:]); err != nil {
		panic("core: crypto/rand failed: " + err.Error())
	}
	return encodeID(prefix, b)
}

// encodeID writes prefix, "_" and the 26 base32 digits of b as NewID does.
func encodeID(prefix string, b [16]byte) string {
	hi := binary.BigEndian.Uint64(b[:8])
	lo := binary.BigEndian.Uint64(b[8:])
	var out [26]byte
	for i := 25; i >= 0; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return prefix + "_" + string(out[:])
}
