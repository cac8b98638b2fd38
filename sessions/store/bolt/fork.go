package bolt

import (
	"context"
	"fmt"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
	"go.etcd.io/bbolt"
)

// ForkSession makes a new session with another's log up to a turn's end
// (record.Forked), in one transaction.
func (s *Store) ForkSession(ctx context.Context, f core.Fork) (*core.Session, error) {
	f = record.PrepareFork(f)
	return writeSession(ctx, s, "fork session", func(tx *bbolt.Tx) (*core.Session, []core.Change, error) {
		src, err := loadSession(tx, f.From)
		if err != nil {
			return nil, nil, err
		}
		events, err := readLog(tx, f.From)
		if err != nil {
			return nil, nil, err
		}
		forked, copied, err := record.Forked(src, f, events, s.clock())
		if err != nil {
			return nil, nil, err
		}
		final := forked.Status
		forked.Status = core.StatusIdle
		if _, err := s.insertSession(tx, core.NewSession{Session: *forked}, forked.ID, forked.CreatedAt); err != nil {
			return nil, nil, err
		}
		if err := logEvents(tx, forked.ID, copied); err != nil {
			return nil, nil, err
		}
		if err := keepFirstText(tx, forked.ID, copied); err != nil {
			return nil, nil, err
		}
		if err := s.setStatus(tx, forked, final); err != nil {
			return nil, nil, err
		}
		return forked, []core.Change{changeOf(forked, "", core.Change{})}, saveSession(tx, forked)
	})
}

// readLog reads a session's whole log.
func readLog(tx *bbolt.Tx, id string) ([]core.Event, error) {
	var out []core.Event
	err := eachLogged(tx, id, 0, func(_ uint64, v []byte) (bool, error) {
		e, err := record.DecodeEvent("event", v)
		if err != nil {
			return false, fmt.Errorf("session %s: %w", id, err)
		}
		out = append(out, *e)
		return true, nil
	})
	return out, err
}
