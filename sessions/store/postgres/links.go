package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
)

// originKeyLockClass is the class of the advisory locks on origin keys.
const originKeyLockClass int32 = 0x53_57_4f_4b // "SWOK"

// lockOriginKey takes the transaction's advisory lock on an origin key,
// so a link's add and a session's create on the same key take turns.
func lockOriginKey(ctx context.Context, tx pgx.Tx, key string) error {
	_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, $2)`, originKeyLockClass, lockKey(key))
	return err
}

// keyRoutesTo is the session an origin key routes to: its external key
// or one of its links; "" for none.
func keyRoutesTo(ctx context.Context, q querier, key string) (string, error) {
	var id string
	err := q.QueryRow(ctx, `SELECT id FROM sessions WHERE external_key = $1
		UNION ALL SELECT session_id FROM session_links WHERE key = $1 LIMIT 1`, key).Scan(&id)
	if noRow(err) {
		return "", nil
	}
	return id, err
}

// AddLink routes key to the session as well.
func (s *Store) AddLink(ctx context.Context, sessionID string, l core.LinkBody) (*core.Session, error) {
	key := l.Key
	return s.changeLink(ctx, sessionID, key, func(tx pgx.Tx, sess *core.Session) ([]record.LogEvent, error) {
		switch owner, err := keyRoutesTo(ctx, tx, key); {
		case err != nil:
			return nil, err
		case owner == sess.ID:
			return nil, nil
		case owner != "":
			return nil, fmt.Errorf("key %q already routes to session %s: %w", key, owner, core.ErrConflict)
		}
		events, err := record.AddLink(sess, l, s.clock())
		if err != nil {
			return nil, err
		}
		_, err = tx.Exec(ctx, `INSERT INTO session_links (key, session_id) VALUES ($1, $2)`, key, sess.ID)
		return events, err
	})
}

// RemoveLink stops routing key to the session.
func (s *Store) RemoveLink(ctx context.Context, sessionID, key, by string) (*core.Session, error) {
	return s.changeLink(ctx, sessionID, key, func(tx pgx.Tx, sess *core.Session) ([]record.LogEvent, error) {
		events, err := record.RemoveLink(sess, key, by)
		if err != nil {
			return nil, err
		}
		_, err = tx.Exec(ctx, `DELETE FROM session_links WHERE key = $1 AND session_id = $2`, key, sess.ID)
		return events, err
	})
}

// changeLink applies change to the session's links under the key's lock
// and the session's, and logs its event, in one transaction.
func (s *Store) changeLink(ctx context.Context, sessionID, key string, change func(pgx.Tx, *core.Session) ([]record.LogEvent, error)) (*core.Session, error) {
	if _, err := core.KeyProvider(key); err != nil {
		return nil, err
	}
	var out *core.Session
	var reads appendReads
	err := s.writeTx(ctx, sessionID, txBody{
		run: func(tx pgx.Tx, tail *pgx.Batch) ([]core.Change, error) {
			if err := lockOriginKey(ctx, tx, key); err != nil {
				return nil, err
			}
			b := &pgx.Batch{}
			reads.queue(b, sessionID, core.AppendRequest{})
			if err := tx.SendBatch(ctx, b).Close(); err != nil {
				return nil, err
			}
			r, err := reads.check(sessionID, 0)
			if err != nil {
				return nil, err
			}
			events, err := change(tx, r.sess)
			if err != nil || events == nil {
				out = r.sess
				return nil, err
			}
			out = r.sess
			_, changes, err := s.appendTx(ctx, tx, tail, sessionID, core.AppendRequest{}, events, &reads)
			return changes, err
		},
	})
	if err != nil {
		return nil, fmt.Errorf("link: %w", err)
	}
	return out, nil
}
