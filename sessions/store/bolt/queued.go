package bolt

import (
	"fmt"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
	"go.etcd.io/bbolt"
)

// Queued inputs of every session are in one bucket, queue, keyed by
// session id ‖ 0x00 ‖ the bucket's NextSequence, for the reason log_tails
// exists (logtail.go): a queue of its own per session put a leaf, its
// branches and the parent's page holding its header into every commit
// that queued to it. Files of schema 1 kept a nested bucket per session
// in pending; Open moves them into queue (movePending).
const (
	bucketQueue = "queue"
	// bucketPending is schema 1's queue, read only from a file opened
	// read-only before any binary of schema 2 opened it for writing.
	bucketPending = "pending"
)

// enqueue stores an input at the end of the session's queue.
func enqueue(tx *bbolt.Tx, sessionID string, v []byte) error {
	queue := bkt(tx, bucketQueue)
	pos, err := queue.NextSequence()
	if err != nil {
		return fmt.Errorf("queue of %s: %w", sessionID, err)
	}
	if err := queue.Put(seqKey(sessionID, pos), v); err != nil {
		return fmt.Errorf("queue of %s: %w", sessionID, err)
	}
	return nil
}

// eachQueued calls fn with each queued input of the session, in queue
// order, until fn returns false or an error.
func eachQueued(tx *bbolt.Tx, sessionID string, fn positionFunc) error {
	if queue := bkt(tx, bucketQueue); queue != nil {
		return eachSeqKey(queue, sessionID, 0, fn)
	}
	// A file of schema 1 opened read-only.
	if pending := bkt(tx, bucketPending).Bucket([]byte(sessionID)); pending != nil {
		_, err := eachPosition(pending, "queue of "+sessionID, 0, fn)
		return err
	}
	return nil
}

// firstQueued returns the session's first queued input as stored, nil
// when none waits.
func firstQueued(tx *bbolt.Tx, sessionID string) ([]byte, error) {
	var first []byte
	err := eachQueued(tx, sessionID, func(_ uint64, v []byte) (bool, error) {
		first = v
		return false, nil
	})
	return first, err
}

func pendingEmpty(tx *bbolt.Tx, sessionID string) bool {
	first, err := firstQueued(tx, sessionID)
	return err == nil && first == nil
}

// takeInputs removes the queued inputs up to and including the first
// interrupt, so the harness can stop at it, and returns them in order.
func takeInputs(tx *bbolt.Tx, sessionID string) ([]core.Event, error) {
	var out []core.Event
	var keys [][]byte
	err := eachQueued(tx, sessionID, func(pos uint64, v []byte) (bool, error) {
		e, err := record.DecodeEvent("pending input", v)
		if err != nil {
			return false, err
		}
		out = append(out, *e)
		keys = append(keys, seqKey(sessionID, pos))
		return e.Type != core.TypeUserInterrupt, nil
	})
	if err != nil {
		return nil, err
	}
	return out, deleteQueued(tx, sessionID, keys)
}

// dropQueued deletes every queued input of the session.
func dropQueued(tx *bbolt.Tx, sessionID string) error {
	var keys [][]byte
	if err := eachQueued(tx, sessionID, func(pos uint64, _ []byte) (bool, error) {
		keys = append(keys, seqKey(sessionID, pos))
		return true, nil
	}); err != nil {
		return err
	}
	return deleteQueued(tx, sessionID, keys)
}

func deleteQueued(tx *bbolt.Tx, sessionID string, keys [][]byte) error {
	queue := bkt(tx, bucketQueue)
	for _, k := range keys {
		if err := queue.Delete(k); err != nil {
			return fmt.Errorf("queue of %s: %w", sessionID, err)
		}
	}
	return nil
}

// movePending moves the queues of a file of schema 1, a nested bucket
// per session in pending, into queue, each in its order, and deletes
// pending.
func movePending(tx *bbolt.Tx) error {
	pending := bkt(tx, bucketPending)
	if pending == nil {
		return nil
	}
	err := pending.ForEachBucket(func(id []byte) error {
		_, err := eachPosition(pending.Bucket(id), "queue of "+string(id), 0, func(_ uint64, v []byte) (bool, error) {
			return true, enqueue(tx, string(id), v)
		})
		return err
	})
	if err != nil {
		return fmt.Errorf("move queued inputs: %w", err)
	}
	return tx.DeleteBucket([]byte(bucketPending))
}
