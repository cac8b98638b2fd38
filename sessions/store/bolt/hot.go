package bolt

import (
	"bytes"
	"fmt"
	"maps"
	"sync"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
	"go.etcd.io/bbolt"
)

// maxHotSessions bounds the records hotSessions keeps: about one per
// session with a turn running, each the size of its JSON twice.
const maxHotSessions = 1024

// hotSessions keeps the session records appends and queued inputs wrote,
// decoded, so that the next write to a session (a running turn logs
// event after event; a thread's replies queue on it) does not decode its
// JSON again. An entry is trusted only while the stored bytes are the
// ones it was written as: any other write to the record (another write
// path, a batch rolled back, a restart) leaves other bytes, and the entry
// is missed, so no write path has to invalidate it.
//
// An entry's record belongs to the cache: take hands it over (the entry
// goes), so whoever took it may change it freely.
type hotSessions struct {
	mu      sync.Mutex
	entries map[string]hotSession
}

type hotSession struct {
	raw  []byte
	sess *core.Session
}

// keptLocked is the record kept for raw under id, or nil; h.mu is held.
func (h *hotSessions) keptLocked(id string, raw []byte) *core.Session {
	e, ok := h.entries[id]
	if !ok || !bytes.Equal(e.raw, raw) {
		return nil
	}
	return e.sess
}

// take returns the record stored as raw under id, or nil.
func (h *hotSessions) take(id string, raw []byte) *core.Session {
	h.mu.Lock()
	defer h.mu.Unlock()
	sess := h.keptLocked(id, raw)
	if sess != nil {
		delete(h.entries, id)
	}
	return sess
}

// status is the status of the record stored as raw under id, if kept.
func (h *hotSessions) status(id string, raw []byte) (core.Status, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	sess := h.keptLocked(id, raw)
	if sess == nil {
		return "", false
	}
	return sess.Status, true
}

// metadata is a copy of the metadata of the record stored as raw under
// id, if kept: a delivery's envelope carries it, and the sessions whose
// events are being delivered are the ones appending.
func (h *hotSessions) metadata(id string, raw []byte) (map[string]string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	sess := h.keptLocked(id, raw)
	if sess == nil {
		return nil, false
	}
	return maps.Clone(sess.Metadata), true
}

// put keeps sess, stored as raw; the caller must not change either after.
func (h *hotSessions) put(sess *core.Session, raw []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.entries == nil {
		h.entries = make(map[string]hotSession)
	}
	makeRoom(h.entries, sess.ID, maxHotSessions)
	h.entries[sess.ID] = hotSession{raw: raw, sess: sess}
}

// makeRoom makes room in m, bounded to max entries, for an entry under
// id: one other goes when it is full (any one: a map's order is random).
func makeRoom[V any](m map[string]V, id string, max int) {
	if _, ok := m[id]; ok || len(m) < max {
		return
	}
	for other := range m {
		delete(m, other)
		return
	}
}

// loadHot is loadWritable through the cache: the record it returns is
// the caller's to change.
func (h *hotSessions) loadHot(tx *bbolt.Tx, id string) (*core.Session, error) {
	raw := bkt(tx, bucketSessions).Get([]byte(id))
	if raw == nil {
		return nil, fmt.Errorf("session %s: %w", id, core.ErrNotFound)
	}
	sess := h.take(id, raw)
	if sess == nil {
		var err error
		if sess, err = record.Decode[core.Session]("session", raw); err != nil {
			return nil, err
		}
	}
	if sess.Status == core.StatusArchived {
		return nil, fmt.Errorf("session %s: %w", id, core.ErrArchived)
	}
	return sess, nil
}

// read is loadSession through the cache: a record kept for the bytes
// stored is copied, not decoded. The copy is the caller's.
func (h *hotSessions) read(tx *bbolt.Tx, id string) (*core.Session, error) {
	raw := bkt(tx, bucketSessions).Get([]byte(id))
	if raw == nil {
		return nil, fmt.Errorf("session %s: %w", id, core.ErrNotFound)
	}
	if sess := h.copyOf(id, raw); sess != nil {
		return sess, nil
	}
	return record.Decode[core.Session]("session", raw)
}

// copyOf is a copy of the record stored as raw under id, or nil. It is
// made under the lock: once taken, a record is its taker's to change.
func (h *hotSessions) copyOf(id string, raw []byte) *core.Session {
	h.mu.Lock()
	defer h.mu.Unlock()
	if sess := h.keptLocked(id, raw); sess != nil {
		return sess.Clone()
	}
	return nil
}

// checkWritable refuses, as loadWritable does, a session that is unknown
// or archived, without decoding a record the cache keeps.
func (h *hotSessions) checkWritable(tx *bbolt.Tx, id string) error {
	raw := bkt(tx, bucketSessions).Get([]byte(id))
	if raw == nil {
		return fmt.Errorf("session %s: %w", id, core.ErrNotFound)
	}
	st, ok := h.status(id, raw)
	if !ok {
		_, err := loadWritable(tx, id)
		return err
	}
	if st == core.StatusArchived {
		return fmt.Errorf("session %s: %w", id, core.ErrArchived)
	}
	return nil
}
