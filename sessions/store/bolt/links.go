package bolt

import (
	"context"
	"fmt"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
	"go.etcd.io/bbolt"
)

// Links share the session_keys bucket with origin keys: claim-or-create,
// SessionByKey and the origin_key filter find a linked session as they
// find an origin's, in the same transaction.

// AddLink routes key to the session as well.
func (s *Store) AddLink(ctx context.Context, sessionID string, l core.LinkBody) (*core.Session, error) {
	key := l.Key
	return s.changeLink(ctx, sessionID, key, func(tx *bbolt.Tx, sess *core.Session) ([]record.LogEvent, error) {
		keys := bkt(tx, bucketSessionKeys)
		switch owner := keys.Get([]byte(key)); {
		case owner != nil && string(owner) == sess.ID:
			return nil, nil
		case owner != nil:
			return nil, fmt.Errorf("key %q already routes to session %s: %w", key, owner, core.ErrConflict)
		}
		events, err := record.AddLink(sess, l, s.clock())
		if err != nil {
			return nil, err
		}
		return events, keys.Put([]byte(key), []byte(sess.ID))
	})
}

// RemoveLink stops routing key to the session.
func (s *Store) RemoveLink(ctx context.Context, sessionID, key, by string) (*core.Session, error) {
	return s.changeLink(ctx, sessionID, key, func(tx *bbolt.Tx, sess *core.Session) ([]record.LogEvent, error) {
		events, err := record.RemoveLink(sess, key, by)
		if err != nil {
			return nil, err
		}
		return events, bkt(tx, bucketSessionKeys).Delete([]byte(key))
	})
}

// changeLink applies change to the session's links and logs its event,
// in one transaction.
func (s *Store) changeLink(ctx context.Context, sessionID, key string, change func(*bbolt.Tx, *core.Session) ([]record.LogEvent, error)) (*core.Session, error) {
	if _, err := core.KeyProvider(key); err != nil {
		return nil, err
	}
	return writeSession(ctx, s, "link", func(tx *bbolt.Tx) (*core.Session, []core.Change, error) {
		sess, err := loadWritable(tx, sessionID)
		if err != nil {
			return nil, nil, err
		}
		events, err := change(tx, sess)
		if err != nil || events == nil {
			return sess, nil, err
		}
		if err := saveSession(tx, sess); err != nil {
			return nil, nil, err
		}
		_, changes, err := s.appendTx(tx, sessionID, core.AppendRequest{}, events)
		if err != nil {
			return nil, nil, err
		}
		sess, err = loadSession(tx, sessionID)
		return sess, changes, err
	})
}
