package bolt

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"go.etcd.io/bbolt"
)

// seqKey is session id ‖ 0x00 ‖ 8-byte big-endian n, the key of the
// buckets that hold the entries of many sessions in one tree (log_tails,
// queue). Session ids never contain 0x00, so a session's keys are one
// range, ordered by n and before those of any id its own is a prefix of.
func seqKey(sessionID string, n uint64) []byte {
	k := make([]byte, 0, len(sessionID)+9)
	return binary.BigEndian.AppendUint64(append(append(k, sessionID...), 0), n)
}

// seqOf returns the n of a seqKey of the session, false for a key of
// another session.
func seqOf(k []byte, sessionID string) (uint64, bool) {
	n := len(sessionID)
	if len(k) != n+9 || k[n] != 0 || !bytes.HasPrefix(k, []byte(sessionID)) {
		return 0, false
	}
	return binary.BigEndian.Uint64(k[n+1:]), true
}

// positionFunc is called with each entry of a log or queue: its seq or
// queue position and its stored value. It returns false to stop the walk.
type positionFunc func(pos uint64, v []byte) (bool, error)

// eachSeqKey calls fn with the session's entries of a bucket of seqKeys,
// from n on, until fn returns false or an error.
func eachSeqKey(b *bbolt.Bucket, sessionID string, from uint64, fn positionFunc) error {
	c := b.Cursor()
	for k, v := c.Seek(seqKey(sessionID, from)); k != nil; k, v = c.Next() {
		n, ok := seqOf(k, sessionID)
		if !ok {
			return nil
		}
		if more, err := fn(n, v); err != nil || !more {
			return err
		}
	}
	return nil
}

// eachPosition calls fn with the entries of a session's own bucket (its
// log, or its queue in schema 1), whose keys are 8-byte big-endian
// positions, from n on, until fn returns false or an error. It reports
// whether it walked to the end.
func eachPosition(b *bbolt.Bucket, what string, from uint64, fn positionFunc) (bool, error) {
	c := b.Cursor()
	for k, v := c.Seek(binary.BigEndian.AppendUint64(nil, from)); k != nil; k, v = c.Next() {
		if len(k) != 8 {
			return false, fmt.Errorf("%s: key of %d bytes", what, len(k))
		}
		if more, err := fn(binary.BigEndian.Uint64(k), v); err != nil || !more {
			return false, err
		}
	}
	return true, nil
}
