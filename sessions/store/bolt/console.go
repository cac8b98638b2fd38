package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
	"go.etcd.io/bbolt"
)

var _ core.ConsoleStore = (*Store)(nil)

// Console bucket names; doc.go describes what each holds.
const (
	bucketConsoleSessions     = "console_sessions"
	bucketConsoleSessionTimes = "console_session_times"
	bucketConsoleFailures     = "console_failures"
	bucketConsoleFailureTimes = "console_failure_times"
)

// consoleAddress is the prefix of an address's keys in console_failures.
func consoleAddress(address string) []byte { return append([]byte(address), 0) }

// getConsoleSession reads the sign-in with id, expired or not.
func getConsoleSession(tx *bbolt.Tx, id string) (*core.ConsoleSession, error) {
	v := bkt(tx, bucketConsoleSessions).Get([]byte(id))
	if v == nil {
		return nil, fmt.Errorf("console sign-in %s: %w", id, core.ErrNotFound)
	}
	cs, err := decode[core.ConsoleSession](v)
	if err != nil {
		return nil, fmt.Errorf("decode console sign-in %s: %w", id, err)
	}
	return cs, nil
}

// CreateConsoleSession saves a sign-in; an existing id is core.ErrConflict.
func (s *Store) CreateConsoleSession(ctx context.Context, in *core.ConsoleSession) error {
	cs, v, err := record.NewConsoleSession(in)
	if err != nil {
		return err
	}
	return s.updateTx(ctx, "create console sign-in", func(tx *bbolt.Tx) error {
		sessions := bkt(tx, bucketConsoleSessions)
		if sessions.Get([]byte(cs.ID)) != nil {
			return fmt.Errorf("console sign-in %s exists: %w", cs.ID, core.ErrConflict)
		}
		if err := sessions.Put([]byte(cs.ID), v); err != nil {
			return err
		}
		return bkt(tx, bucketConsoleSessionTimes).Put(append(u64(unixNanos(cs.ExpiresAt)), cs.ID...), nil)
	})
}

// GetConsoleSession returns the sign-in with id; core.ErrNotFound when
// there is none or it expired at now.
func (s *Store) GetConsoleSession(ctx context.Context, id string, now time.Time) (*core.ConsoleSession, error) {
	if err := record.ConsoleText("id", id); err != nil {
		return nil, fmt.Errorf("get console sign-in: %w", err)
	}
	return viewOne(ctx, s, "get console sign-in", func(tx *bbolt.Tx) (*core.ConsoleSession, error) {
		cs, err := getConsoleSession(tx, id)
		if err != nil {
			return nil, err
		}
		return record.LiveConsoleSession(cs, now)
	})
}

// DeleteConsoleSession signs out; deleting nothing is not an error.
func (s *Store) DeleteConsoleSession(ctx context.Context, id string) error {
	if err := record.ConsoleText("id", id); err != nil {
		return fmt.Errorf("delete console sign-in: %w", err)
	}
	return s.updateTx(ctx, "delete console sign-in", func(tx *bbolt.Tx) error {
		cs, err := getConsoleSession(tx, id)
		if errors.Is(err, core.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := bkt(tx, bucketConsoleSessionTimes).Delete(append(u64(unixNanos(cs.ExpiresAt)), id...)); err != nil {
			return err
		}
		return bkt(tx, bucketConsoleSessions).Delete([]byte(id))
	})
}

// ReserveSignIn counts a sign-in attempt from address at now unless
// address has limit counted since now-window; bbolt's one writer at a
// time makes the check and the count one step. A refused attempt writes
// nothing.
func (s *Store) ReserveSignIn(ctx context.Context, address string, now time.Time, window time.Duration, limit int) (bool, error) {
	from, to, err := record.FailureWindow(address, now, window)
	if err != nil {
		return false, fmt.Errorf("reserve sign-in: %w", err)
	}
	// Attempts stamped after now count too: another request's clock read
	// may be later than this one's and its attempt counted first.
	latest := time.Unix(0, math.MaxInt64)
	full, err := viewOne(ctx, s, "reserve sign-in", func(tx *bbolt.Tx) (bool, error) { return countFailures(tx, address, from, latest) >= limit, nil })
	if err != nil || full {
		return false, err
	}
	return writeOne(ctx, s, "reserve sign-in", func(tx *bbolt.Tx) (bool, error) {
		if countFailures(tx, address, from, latest) >= limit {
			return false, nil
		}
		failures := bkt(tx, bucketConsoleFailures)
		seq, err := failures.NextSequence()
		if err != nil {
			return false, err
		}
		at := binary.BigEndian.AppendUint64(u64(unixNanos(to)), seq)
		if err := failures.Put(append(consoleAddress(address), at...), nil); err != nil {
			return false, err
		}
		return true, bkt(tx, bucketConsoleFailureTimes).Put(append(at, address...), nil)
	})
}

// ReleaseSignIn uncounts one attempt counted for address at now.
func (s *Store) ReleaseSignIn(ctx context.Context, address string, now time.Time) error {
	if err := record.ConsoleText("address", address); err != nil {
		return fmt.Errorf("release sign-in: %w", err)
	}
	prefix := append(consoleAddress(address), u64(unixNanos(record.ConsoleTime(now)))...)
	return s.updateTx(ctx, "release sign-in", func(tx *bbolt.Tx) error {
		failures := bkt(tx, bucketConsoleFailures)
		k, _ := failures.Cursor().Seek(prefix)
		if k == nil || !bytes.HasPrefix(k, prefix) {
			return nil
		}
		k = bytes.Clone(k)
		if err := failures.Delete(k); err != nil {
			return err
		}
		at := k[len(consoleAddress(address)):]
		return bkt(tx, bucketConsoleFailureTimes).Delete(append(bytes.Clone(at), address...))
	})
}

// SignInFailures counts the attempts address has counted in
// (now-window, now].
func (s *Store) SignInFailures(ctx context.Context, address string, now time.Time, window time.Duration) (int, error) {
	from, to, err := record.FailureWindow(address, now, window)
	if err != nil {
		return 0, fmt.Errorf("sign-in failures: %w", err)
	}
	return viewOne(ctx, s, "sign-in failures", func(tx *bbolt.Tx) (int, error) { return countFailures(tx, address, from, to), nil })
}

// countFailures walks address's failures made in (from, to] only.
func countFailures(tx *bbolt.Tx, address string, from, to time.Time) int {
	prefix := consoleAddress(address)
	lo, hi := unixNanos(from), unixNanos(to)
	n := 0
	c := bkt(tx, bucketConsoleFailures).Cursor()
	for k, _ := c.Seek(append(bytes.Clone(prefix), u64(lo+1)...)); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		if len(k) < len(prefix)+8 || binary.BigEndian.Uint64(k[len(prefix):]) > hi {
			break
		}
		n++
	}
	return n
}

// SweepConsole deletes the sign-ins expired at before (they are no
// longer live then) and the failures made before it, both to the
// millisecond, and returns how many records went. It walks the time
// indexes only as far as before.
func (s *Store) SweepConsole(ctx context.Context, before time.Time) (int, error) {
	limit := unixNanos(record.ConsoleTime(before))
	n, err := writeOne(ctx, s, "sweep console", func(tx *bbolt.Tx) (int, error) {
		times, sessions := bkt(tx, bucketConsoleSessionTimes), bkt(tx, bucketConsoleSessions)
		expired := keysUntil(times, func(t uint64) bool { return t <= limit })
		for _, k := range expired {
			if err := times.Delete(k); err != nil {
				return 0, err
			}
			if err := sessions.Delete(k[8:]); err != nil {
				return 0, err
			}
		}
		times, failures := bkt(tx, bucketConsoleFailureTimes), bkt(tx, bucketConsoleFailures)
		old := keysUntil(times, func(t uint64) bool { return t < limit })
		for _, k := range old {
			if len(k) < 16 {
				return 0, fmt.Errorf("console failure time key of %d bytes is truncated", len(k))
			}
			if err := times.Delete(k); err != nil {
				return 0, err
			}
			if err := failures.Delete(append(consoleAddress(string(k[16:])), k[:16]...)); err != nil {
				return 0, err
			}
		}
		return len(expired) + len(old), nil
	})
	if n > 0 {
		s.log.Debug("swept console records", "count", n, "before", before)
	}
	return n, err
}
