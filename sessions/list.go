package sessions

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/switchboardhq/switchboard/sessions/record"

	"github.com/switchboardhq/switchboard/core"
	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

func matchSession(f core.SessionFilter, sess *core.Session) bool {
	return (f.Status == "" || sess.Status == f.Status) &&
		(f.AgentID == "" || sess.Agent.ID == f.AgentID)
}

// ListSessions pages through sessions in id order. An OriginKey filter is
// answered from the external-key index; the other filters scan from the
// cursor, which a page bounds.
func (s *Store) ListSessions(ctx context.Context, f core.SessionFilter) ([]*core.Session, bool, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, false, err
	}
	limit := record.ClampLimit(f.Limit)
	out := []*core.Session{}
	more := false
	err := s.db.View(func(tx *bolt.Tx) error {
		if f.OriginKey != "" {
			sid := bkt(tx, bucketSessionKeys).Get([]byte(f.OriginKey))
			if sid == nil || string(sid) <= f.After {
				return nil
			}
			sess, err := loadSession(tx, string(sid))
			if err != nil {
				return err
			}
			if matchSession(f, sess) {
				out = append(out, sess)
			}
			return nil
		}
		c := bkt(tx, bucketSessions).Cursor()
		k, v := c.Seek([]byte(f.After))
		if k != nil && f.After != "" && string(k) == f.After {
			k, v = c.Next()
		}
		for ; k != nil; k, v = c.Next() {
			var sess core.Session
			if err := json.Unmarshal(v, &sess); err != nil {
				return fmt.Errorf("decode session %s: %w", k, err)
			}
			if !matchSession(f, &sess) {
				continue
			}
			if len(out) == limit {
				more = true
				return nil
			}
			out = append(out, &sess)
		}
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("list sessions: %w", err)
	}
	return out, more, nil
}

// Archive makes the session read-only: it drops the queued inputs, the wake
// and any lease, since an archived session is never visited again.
func (s *Store) Archive(ctx context.Context, id string) (*core.Session, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	// Archiving twice must not cost a write.
	cur, err := s.GetSession(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("archive: %w", err)
	}
	if cur.Status == core.StatusArchived {
		return cur, nil
	}
	var out *core.Session
	err = s.commit.write(func(tx *bolt.Tx) ([]core.Change, error) {
		sess, err := loadSession(tx, id)
		if err != nil {
			return nil, err
		}
		out = sess
		if sess.Status == core.StatusArchived {
			return nil, nil
		}
		before := sess.Status
		if err := s.setStatus(tx, sess, core.StatusArchived); err != nil {
			return nil, err
		}
		sess.UpdatedAt = s.clock()
		if err := bkt(tx, bucketPending).DeleteBucket([]byte(id)); err != nil && !errors.Is(err, berrors.ErrBucketNotFound) {
			return nil, fmt.Errorf("drop pending inputs: %w", err)
		}
		if err := clearWake(tx, id); err != nil {
			return nil, err
		}
		if err := bkt(tx, bucketLeases).Delete([]byte(id)); err != nil {
			return nil, err
		}
		return []core.Change{changeOf(sess, before, core.Change{})}, saveSession(tx, sess)
	})
	if err != nil {
		return nil, fmt.Errorf("archive: %w", err)
	}
	return out, nil
}

// CountByStatus reads the counts every status change maintains.
func (s *Store) CountByStatus(ctx context.Context) (map[core.Status]int, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	out := map[core.Status]int{}
	err := s.db.View(func(tx *bolt.Tx) error {
		return bkt(tx, bucketStatusCounts).ForEach(func(k, v []byte) error {
			if len(v) != 8 {
				return fmt.Errorf("status count %s: %d bytes", k, len(v))
			}
			out[core.Status(k)] = int(binary.BigEndian.Uint64(v))
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("count sessions: %w", err)
	}
	return out, nil
}
