package bolt

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/switchboardhq/switchboard/core"
	"go.etcd.io/bbolt"
)

// maxDecodedInstallations bounds the records decodedInstallations keeps:
// one per workspace, organization or team the gateway serves.
const maxDecodedInstallations = 4096

// decodedInstallations keeps installation records decoded for the reads
// that find one for every webhook and every event a sink renders. As
// hotSessions does, an entry is trusted only while the stored bytes are
// the ones it was decoded from: a write leaves other bytes, and the entry
// is missed, so no write path has to invalidate it. Each read gets a
// clone, its own to change.
type decodedInstallations struct {
	mu      sync.Mutex
	entries map[string]decodedInstallation
}

type decodedInstallation struct {
	raw []byte
	in  *core.Installation
}

// get reads installation id in tx.
func (d *decodedInstallations) get(tx *bbolt.Tx, id string) (*core.Installation, error) {
	raw := bkt(tx, bucketInstallations).Get([]byte(id))
	if raw == nil {
		return nil, fmt.Errorf("installation %q: %w", id, core.ErrNotFound)
	}
	d.mu.Lock()
	e, ok := d.entries[id]
	d.mu.Unlock()
	if ok && bytes.Equal(e.raw, raw) {
		return e.in.Clone(), nil
	}
	in, err := decodeInstallation(raw)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.entries == nil {
		d.entries = make(map[string]decodedInstallation)
	}
	makeRoom(d.entries, id, maxDecodedInstallations)
	// raw is the transaction's, valid only while it is open.
	d.entries[id] = decodedInstallation{raw: bytes.Clone(raw), in: in.Clone()}
	return in, nil
}
