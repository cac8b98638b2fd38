package bolt

import (
	"bytes"
	"sync"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
	"go.etcd.io/bbolt"
)

// Bounds of the records decodedRecords keep: an installation for each
// workspace, organization or team the gateway serves, and the
// destinations whose deliveries are under way.
const (
	maxDecodedInstallations = 4096
	maxDecodedDestinations  = 4096
)

// decodedRecords keeps records of one kind decoded for reads that find
// the same ones again and again: an installation for every webhook and
// every event a sink renders, a destination for every delivery a stream
// sends ahead of its records. As hotSessions does, an entry is trusted
// only while the stored bytes are the ones it was decoded from: a write
// leaves other bytes, and the entry is missed, so no write path has to
// invalidate it. Each read gets a clone, its own to change.
type decodedRecords[T any, P interface {
	*T
	Clone() *T
}] struct {
	what string // the kind, for decoding errors
	max  int

	mu      sync.Mutex
	entries map[string]decodedRecord[T]
}

type decodedRecord[T any] struct {
	raw []byte
	rec *T
}

// read returns record id, whose bytes stored finds in tx.
func (d *decodedRecords[T, P]) read(tx *bbolt.Tx, id string, stored func(*bbolt.Tx, string) ([]byte, error)) (*T, error) {
	raw, err := stored(tx, id)
	if err != nil {
		return nil, err
	}
	return d.decoded(id, raw)
}

// decoded returns the record id stored as raw, raw being a transaction's
// bytes.
func (d *decodedRecords[T, P]) decoded(id string, raw []byte) (*T, error) {
	if rec, ok := d.cached(id, raw); ok {
		return P(rec).Clone(), nil
	}
	return d.decode(id, raw)
}

// shared is decoded without the clone, for a caller that only reads the
// record and keeps nothing of it: the entry it may return is every
// reader's.
func (d *decodedRecords[T, P]) shared(id string, raw []byte) (*T, error) {
	if rec, ok := d.cached(id, raw); ok {
		return rec, nil
	}
	return d.decode(id, raw)
}

// cached returns the entry of id when it was decoded from raw.
func (d *decodedRecords[T, P]) cached(id string, raw []byte) (*T, bool) {
	d.mu.Lock()
	e, ok := d.entries[id]
	d.mu.Unlock()
	if ok && bytes.Equal(e.raw, raw) {
		return e.rec, true
	}
	return nil, false
}

// decode decodes raw, keeps a clone as id's entry and returns the record.
func (d *decodedRecords[T, P]) decode(id string, raw []byte) (*T, error) {
	rec, err := record.Decode[T](d.what, raw)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.entries == nil {
		d.entries = make(map[string]decodedRecord[T])
	}
	makeRoom(d.entries, id, d.max)
	// raw is the transaction's, valid only while it is open.
	d.entries[id] = decodedRecord[T]{raw: bytes.Clone(raw), rec: P(rec).Clone()}
	return rec, nil
}

type (
	decodedInstallations = decodedRecords[core.Installation, *core.Installation]
	decodedDestinations  = decodedRecords[core.Destination, *core.Destination]
)
