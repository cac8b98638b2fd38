package bolt

import (
	"context"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
	"go.etcd.io/bbolt"
)

// SetSessionLimits merges l into the session's own limits; a turn a
// session budget paused is queued to run again (record.SetLimits).
func (s *Store) SetSessionLimits(ctx context.Context, sessionID string, l core.Limits, actor core.Actor) (*core.Session, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	return writeSession(ctx, s, "set session limits", func(tx *bbolt.Tx) (*core.Session, []core.Change, error) {
		sess, err := loadWritable(tx, sessionID)
		if err != nil {
			return nil, nil, err
		}
		before := sess.Status
		resume, err := record.SetLimits(sess, l, actor)
		if err != nil {
			return nil, nil, err
		}
		sess.UpdatedAt = s.clock()
		if err := saveSession(tx, sess); err != nil {
			return nil, nil, err
		}
		if resume == nil {
			return sess, []core.Change{changeOf(sess, before, core.Change{})}, nil
		}
		_, changes, err := s.appendTx(tx, sessionID, core.AppendRequest{}, resume)
		if err != nil {
			return nil, nil, err
		}
		if err := scheduleWake(tx, sessionID, s.clock().Time); err != nil {
			return nil, nil, err
		}
		sess, err = loadSession(tx, sessionID)
		return sess, changes, err
	})
}
