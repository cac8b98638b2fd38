package bolt

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/switchboardhq/switchboard/sessions/store/record"

	"github.com/switchboardhq/switchboard/core"
	"go.etcd.io/bbolt"
)

var _ core.SinkStore = (*Store)(nil)

// Sink bucket names; doc.go describes what each holds.
const (
	bucketSinkPositions = "sink_positions"
	bucketSinkActive    = "sink_active"
)

// sinkKey is sink ‖ 0x00 ‖ session id; sink names never contain 0x00, so
// a prefix scan on sink ‖ 0x00 lists one sink's sessions.
func sinkKey(sink, sessionID string) []byte {
	k := make([]byte, 0, len(sink)+1+len(sessionID))
	return append(append(append(k, sink...), 0), sessionID...)
}

// SinkPosition returns a sink's position in a session's log; zero when
// none was saved.
func (s *Store) SinkPosition(ctx context.Context, sink, sessionID string) (core.SinkPosition, error) {
	if err := record.ValidSink(sink, sessionID); err != nil {
		return core.SinkPosition{}, err
	}
	return viewOne(ctx, s, "sink position", func(tx *bbolt.Tx) (core.SinkPosition, error) {
		return record.DecodeSinkPosition(bkt(tx, bucketSinkPositions).Get(sinkKey(sink, sessionID)))
	})
}

// SaveSinkPosition stores a sink's position for the holder of claim c
// (fsync'd before it returns).
func (s *Store) SaveSinkPosition(ctx context.Context, sink, sessionID string, c core.Claim, p core.SinkPosition) error {
	v, err := record.EncodeSinkPosition(sink, sessionID, p)
	if err != nil {
		return err
	}
	k := sinkKey(sink, sessionID)
	return s.commitTx(ctx, "save sink position", func(tx *bbolt.Tx) error {
		if err := checkSinkClaim(tx, k, c); err != nil {
			return err
		}
		return bkt(tx, bucketSinkPositions).Put(k, v)
	})
}

// ReleaseSink unmarks a session the sink has rendered up to rendered,
// unless something was logged after it. It shares the group commit: a
// sink releases a session after each turn, and a commit of its own would
// hold the writer, and its syncs, from the acks and appends waiting. A
// session the sink never marked (it only acknowledged inputs, no turn has
// started) is released by a read: a write that changes nothing would
// still wait for a commit.
func (s *Store) ReleaseSink(ctx context.Context, sink, sessionID string, rendered uint64) (bool, error) {
	if err := record.ValidSink(sink, sessionID); err != nil {
		return false, err
	}
	k := sinkKey(sink, sessionID)
	marked, err := viewOne(ctx, s, "release sink", func(tx *bbolt.Tx) (bool, error) {
		return bkt(tx, bucketSinkActive).Get(k) != nil, nil
	})
	if err != nil {
		return false, err
	}
	if !marked {
		return true, nil
	}
	return commitOne(ctx, s, "release sink", func(tx *bbolt.Tx) (bool, error) {
		b := bkt(tx, bucketSinkActive)
		if b.Get(k) == nil {
			return true, nil
		}
		sess, err := loadSession(tx, sessionID)
		switch {
		case errors.Is(err, core.ErrNotFound):
		case err != nil:
			return false, err
		case sess.LastSeq > rendered:
			return false, nil
		}
		return true, b.Delete(k)
	})
}

// ActiveSinkSessions lists the sessions a sink is marked active on, in id
// order.
func (s *Store) ActiveSinkSessions(ctx context.Context, sink string) ([]string, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	out := []string{}
	prefix := sinkKey(sink, "")
	err := s.db.View(func(tx *bbolt.Tx) error {
		c := bkt(tx, bucketSinkActive).Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			out = append(out, string(k[len(prefix):]))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("active sink sessions: %w", err)
	}
	return out, nil
}
