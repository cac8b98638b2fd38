package bolt

import (
	"context"
	"fmt"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
	"go.etcd.io/bbolt"
)

// SetSessionLimits merges l into the session's own limits; a turn a
// session budget paused is queued to run again (record.SetLimits).
func (s *Store) SetSessionLimits(ctx context.Context, sessionID string, l core.Limits, actor core.Actor) (*core.Session, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	if err := l.Validate(); err != nil {
		return nil, err
	}
	var out *core.Session
	err := s.commit.write(func(tx *bbolt.Tx) ([]core.Change, error) {
		sess, err := loadWritable(tx, sessionID)
		if err != nil {
			return nil, err
		}
		before := sess.Status
		resume, err := record.SetLimits(sess, l, actor)
		if err != nil {
			return nil, err
		}
		sess.UpdatedAt = s.clock()
		if err := saveSession(tx, sess); err != nil {
			return nil, err
		}
		if resume == nil {
			out = sess
			return []core.Change{changeOf(sess, before, core.Change{})}, nil
		}
		_, changes, err := s.appendTx(tx, sessionID, core.AppendRequest{}, resume)
		if err != nil {
			return nil, err
		}
		if err := scheduleWake(tx, sessionID, s.clock().Time); err != nil {
			return nil, err
		}
		out, err = loadSession(tx, sessionID)
		return changes, err
	})
	if err != nil {
		return nil, fmt.Errorf("set session limits: %w", err)
	}
	return out, nil
}
