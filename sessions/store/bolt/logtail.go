package bolt

import (
	"fmt"
	"math"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
	"go.etcd.io/bbolt"
)

// A session's newest events wait in log_tails, one bucket shared by every
// session, before they move to the session's own bucket in logs. bbolt
// copies each page on the path from a changed leaf to the root, so an
// append straight to a long log writes its leaf and every branch above it
// (three pages once a log passes about 1,500 events), and a commit that
// appends to 64 sessions writes that for each. In the shared bucket the
// sessions' tails share their branches: such a commit writes about a page
// a session. The append that would make a tail tailEvents long moves it,
// its own events after it, into the session's log: a leaf and its
// branches once per tailEvents events.
const (
	bucketLogTails = "log_tails"
	// tailEvents bounds a tail, so reading one stays a short walk.
	tailEvents = 32
	// tailValueMax is the largest event a tail takes. A larger one has
	// overflow pages of its own, which a move would write a second time,
	// so its append moves the tail and logs straight to the session's log.
	tailValueMax = 2048
)

// logEvents writes events, seq order and after every logged one, to the
// session's log: into its tail, or with its tail into its log bucket.
func logEvents(tx *bbolt.Tx, sessionID string, events []core.Event) error {
	if len(events) == 0 {
		return nil
	}
	encoded := make([][]byte, len(events))
	direct := false
	for i := range events {
		encoded[i] = record.EncodeEvent(&events[i])
		direct = direct || len(encoded[i]) > tailValueMax
	}
	tails := bkt(tx, bucketLogTails)
	held := 0
	if k, _ := tails.Cursor().Seek(seqKey(sessionID, 0)); k != nil {
		if first, ok := seqOf(k, sessionID); ok {
			if first >= events[0].Seq {
				return fmt.Errorf("log tail of %s holds seq %d, not before %d", sessionID, first, events[0].Seq)
			}
			held = int(events[0].Seq - first)
		}
	}
	if !direct && held+len(events) < tailEvents {
		for i, e := range events {
			if err := tails.Put(seqKey(sessionID, e.Seq), encoded[i]); err != nil {
				return fmt.Errorf("log tail of %s: %w", sessionID, err)
			}
		}
		return nil
	}
	log, err := bkt(tx, bucketLogs).CreateBucketIfNotExists([]byte(sessionID))
	if err != nil {
		return fmt.Errorf("log of %s: %w", sessionID, err)
	}
	log.FillPercent = 1 // keys only ever grow; pack the pages
	if held > 0 {
		if err := moveTail(tails, log, sessionID); err != nil {
			return err
		}
	}
	for i, e := range events {
		if err := log.Put(u64(e.Seq), encoded[i]); err != nil {
			return fmt.Errorf("log of %s: %w", sessionID, err)
		}
	}
	return nil
}

// moveTail moves the session's tail into its log bucket.
func moveTail(tails, log *bbolt.Bucket, sessionID string) error {
	var keys [][]byte
	c := tails.Cursor()
	for k, v := c.Seek(seqKey(sessionID, 0)); k != nil; k, v = c.Next() {
		seq, ok := seqOf(k, sessionID)
		if !ok {
			break
		}
		if err := log.Put(u64(seq), v); err != nil {
			return fmt.Errorf("log of %s: %w", sessionID, err)
		}
		keys = append(keys, seqKey(sessionID, seq)) // k is the page's, which the deletes change
	}
	for _, k := range keys {
		if err := tails.Delete(k); err != nil {
			return fmt.Errorf("log tail of %s: %w", sessionID, err)
		}
	}
	return nil
}

// eachLogged calls fn with each logged event of the session with seq >
// after, in seq order, until fn returns false or an error. A file of an
// earlier release, opened read-only, has no log_tails.
func eachLogged(tx *bbolt.Tx, sessionID string, after uint64, fn positionFunc) error {
	if after == math.MaxUint64 {
		return nil
	}
	if log := bkt(tx, bucketLogs).Bucket([]byte(sessionID)); log != nil {
		if whole, err := eachPosition(log, "log of "+sessionID, after+1, fn); err != nil || !whole {
			return err
		}
	}
	if tails := bkt(tx, bucketLogTails); tails != nil {
		return eachSeqKey(tails, sessionID, after+1, fn)
	}
	return nil
}

// loggedEvent returns the stored event seq of the session, nil when there
// is none.
func loggedEvent(tx *bbolt.Tx, sessionID string, seq uint64) []byte {
	if tails := bkt(tx, bucketLogTails); tails != nil {
		if v := tails.Get(seqKey(sessionID, seq)); v != nil {
			return v
		}
	}
	if log := bkt(tx, bucketLogs).Bucket([]byte(sessionID)); log != nil {
		return log.Get(u64(seq))
	}
	return nil
}
