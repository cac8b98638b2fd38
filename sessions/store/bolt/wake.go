package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"go.etcd.io/bbolt"
)

// wakeKey orders the wake queue by due time, then session id.
func wakeKey(sessionID string, at time.Time) []byte {
	return append(u64(unixNanos(at)), sessionID...)
}

func wakeTime(k []byte) time.Time {
	return time.Unix(0, int64(binary.BigEndian.Uint64(k[:8]))).UTC()
}

// scheduleWake keeps the earlier of the session's current wake and at; the
// per-session index makes that a point lookup instead of a queue scan.
func scheduleWake(tx *bbolt.Tx, sessionID string, at time.Time) error {
	return putWake(tx, sessionID, at, false)
}

// putWake writes the session's wake at at; unless move is set, an earlier
// wake already there stays.
func putWake(tx *bbolt.Tx, sessionID string, at time.Time, move bool) error {
	index := bkt(tx, bucketWakeIndex)
	wakes := bkt(tx, bucketWakes)
	k := wakeKey(sessionID, at)
	if old := index.Get([]byte(sessionID)); old != nil {
		if bytes.Equal(old, k) || (!move && bytes.Compare(old, k) < 0) {
			return nil
		}
		if err := wakes.Delete(old); err != nil {
			return err
		}
	}
	if err := wakes.Put(k, nil); err != nil {
		return err
	}
	return index.Put([]byte(sessionID), k)
}

func clearWake(tx *bbolt.Tx, sessionID string) error {
	index := bkt(tx, bucketWakeIndex)
	old := index.Get([]byte(sessionID))
	if old == nil {
		return nil
	}
	if err := bkt(tx, bucketWakes).Delete(old); err != nil {
		return err
	}
	return index.Delete([]byte(sessionID))
}

// ScheduleWake asks for a visit at or after at; an earlier request wins.
// Archived sessions are never visited, so they refuse.
func (s *Store) ScheduleWake(ctx context.Context, sessionID string, at time.Time) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	err := s.commit.do(func(tx *bbolt.Tx) error {
		if _, err := loadWritable(tx, sessionID); err != nil {
			return err
		}
		return scheduleWake(tx, sessionID, at)
	})
	if err != nil {
		return fmt.Errorf("schedule wake: %w", err)
	}
	return nil
}

// MoveWake replaces the session's wake with at, later or earlier.
func (s *Store) MoveWake(ctx context.Context, sessionID string, at time.Time, epoch uint64) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	err := s.commit.do(func(tx *bbolt.Tx) error {
		if _, err := loadWritable(tx, sessionID); err != nil {
			return err
		}
		if err := checkEpoch(tx, sessionID, epoch); err != nil {
			return err
		}
		return putWake(tx, sessionID, at, true)
	})
	if err != nil {
		return fmt.Errorf("move wake: %w", err)
	}
	return nil
}

// DueWakes returns, earliest first, up to limit (0: all) sessions whose
// wake is due at now. It leaves them scheduled; the runtime clears a wake
// once it has visited.
func (s *Store) DueWakes(ctx context.Context, now time.Time, limit int) ([]string, error) {
	due := unixNanos(now)
	return viewOne(ctx, s, "due wakes", func(tx *bbolt.Tx) ([]string, error) {
		out := []string{}
		c := bkt(tx, bucketWakes).Cursor()
		for k, _ := c.First(); len(k) > 8 && binary.BigEndian.Uint64(k[:8]) <= due && (limit <= 0 || len(out) < limit); k, _ = c.Next() {
			out = append(out, string(k[8:]))
		}
		return out, nil
	})
}

// NextWake returns the earliest scheduled wake.
func (s *Store) NextWake(ctx context.Context) (time.Time, bool, error) {
	at, err := viewOne(ctx, s, "next wake", func(tx *bbolt.Tx) (time.Time, error) {
		if k, _ := bkt(tx, bucketWakes).Cursor().First(); len(k) > 8 {
			return wakeTime(k), nil
		}
		return time.Time{}, nil
	})
	return at, !at.IsZero(), err
}

// ClearWake removes the session's wake, if any.
func (s *Store) ClearWake(ctx context.Context, sessionID string, epoch uint64) error {
	_, err := s.clearWake(ctx, sessionID, epoch, false)
	return err
}

// ClearWakeUnlessQueued removes the session's wake unless inputs are
// queued on it, looked for in the transaction that would remove it.
func (s *Store) ClearWakeUnlessQueued(ctx context.Context, sessionID string, epoch uint64) (bool, error) {
	return s.clearWake(ctx, sessionID, epoch, true)
}

// clearWake removes the session's wake; with unlessQueued, only when no
// input is queued on it, and queued reports whether one is.
func (s *Store) clearWake(ctx context.Context, sessionID string, epoch uint64, unlessQueued bool) (queued bool, err error) {
	if err := ctxErr(ctx); err != nil {
		return false, err
	}
	// Clearing nothing, or finding inputs, must not cost an fsync.
	scheduled := false
	look := func(tx *bbolt.Tx) error {
		if unlessQueued {
			first, err := firstQueued(tx, sessionID)
			if queued = first != nil; err != nil {
				return err
			}
		}
		scheduled = bkt(tx, bucketWakeIndex).Get([]byte(sessionID)) != nil
		return nil
	}
	if err := s.db.View(look); err != nil || queued || !scheduled {
		if err != nil {
			return false, fmt.Errorf("clear wake: %w", err)
		}
		return queued, nil
	}
	if err := s.commit.do(func(tx *bbolt.Tx) error {
		if err := checkEpoch(tx, sessionID, epoch); err != nil {
			return err
		}
		// Again in the write: an input queued since the look keeps its wake.
		if err := look(tx); err != nil || queued {
			return err
		}
		return clearWake(tx, sessionID)
	}); err != nil {
		return false, fmt.Errorf("clear wake: %w", err)
	}
	return queued, nil
}

// OpenTurns returns the leases: sessions with a turn started and not
// completed, and who started it.
func (s *Store) OpenTurns(ctx context.Context) (map[string]string, error) {
	return viewOne(ctx, s, "open turns", func(tx *bbolt.Tx) (map[string]string, error) {
		out := map[string]string{}
		return out, bkt(tx, bucketLeases).ForEach(func(k, v []byte) error {
			out[string(k)] = string(v)
			return nil
		})
	})
}
