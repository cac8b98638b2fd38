package bolt

import (
	"bytes"
	"context"
	"fmt"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
	"go.etcd.io/bbolt"
)

const (
	bucketAttachTokens          = "attach_tokens"         // token id → the token (JSON)
	bucketAttachTokensBySession = "attach_tokens_by_sess" // session id + token id → nil
)

var _ core.AttachTokenStore = (*Store)(nil)

func getAttachToken(tx *bbolt.Tx, id string) (*core.AttachToken, error) {
	v := bkt(tx, bucketAttachTokens).Get([]byte(id))
	if v == nil {
		return nil, fmt.Errorf("attach token %s: %w", id, core.ErrNotFound)
	}
	return record.DecodeAttachToken(v)
}

func putAttachToken(tx *bbolt.Tx, t *core.AttachToken) error {
	v, err := record.Encode("attach token", t.ID, t)
	if err != nil {
		return err
	}
	return bkt(tx, bucketAttachTokens).Put([]byte(t.ID), v)
}

// CreateAttachToken saves a new token and logs it.
func (s *Store) CreateAttachToken(ctx context.Context, in core.AttachToken) (*core.AttachToken, error) {
	t, events, err := record.NewAttachToken(in, s.clock())
	if err != nil {
		return nil, err
	}
	return writeSession(ctx, s, "create attach token", func(tx *bbolt.Tx) (*core.AttachToken, []core.Change, error) {
		if _, err := loadWritable(tx, t.SessionID); err != nil {
			return nil, nil, err
		}
		if bkt(tx, bucketAttachTokens).Get([]byte(t.ID)) != nil {
			return nil, nil, fmt.Errorf("attach token %s exists: %w", t.ID, core.ErrConflict)
		}
		if err := putAttachToken(tx, t); err != nil {
			return nil, nil, err
		}
		if err := bkt(tx, bucketAttachTokensBySession).Put([]byte(t.SessionID+t.ID), nil); err != nil {
			return nil, nil, err
		}
		_, changes, err := s.appendTx(tx, t.SessionID, core.AppendRequest{}, events)
		return t, changes, err
	})
}

// GetAttachToken returns a token.
func (s *Store) GetAttachToken(ctx context.Context, id string) (*core.AttachToken, error) {
	return viewOne(ctx, s, "", func(tx *bbolt.Tx) (*core.AttachToken, error) { return getAttachToken(tx, id) })
}

// ListAttachTokens returns the session's tokens, oldest first (ids sort
// by creation).
func (s *Store) ListAttachTokens(ctx context.Context, sessionID string) ([]*core.AttachToken, error) {
	return viewOne(ctx, s, "list attach tokens", func(tx *bbolt.Tx) ([]*core.AttachToken, error) {
		if err := sessionExists(tx, sessionID); err != nil {
			return nil, err
		}
		out := []*core.AttachToken{}
		prefix := []byte(sessionID)
		c := bkt(tx, bucketAttachTokensBySession).Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			t, err := getAttachToken(tx, string(k[len(prefix):]))
			if err != nil {
				return nil, err
			}
			out = append(out, t)
		}
		return out, nil
	})
}

// RevokeAttachToken revokes one of the session's tokens and logs it.
func (s *Store) RevokeAttachToken(ctx context.Context, sessionID, id, by string) (*core.AttachToken, error) {
	return writeSession(ctx, s, "revoke attach token", func(tx *bbolt.Tx) (*core.AttachToken, []core.Change, error) {
		t, err := getAttachToken(tx, id)
		if err == nil && t.SessionID != sessionID {
			err = fmt.Errorf("session %s has no attach token %s: %w", sessionID, id, core.ErrNotFound)
		}
		if err != nil {
			return nil, nil, err
		}
		sess, err := loadSession(tx, sessionID)
		if err != nil {
			return nil, nil, err
		}
		events, err := record.RevokeAttachToken(t, by, s.clock())
		if err != nil || events == nil {
			return t, nil, err
		}
		if err := putAttachToken(tx, t); err != nil {
			return nil, nil, err
		}
		if sess.Status == core.StatusArchived {
			return t, nil, nil
		}
		_, changes, err := s.appendTx(tx, sessionID, core.AppendRequest{}, events)
		return t, changes, err
	})
}

// TouchAttachToken records the token's last use.
func (s *Store) TouchAttachToken(ctx context.Context, id string, at core.Time) error {
	return s.updateTx(ctx, "touch attach token", func(tx *bbolt.Tx) error {
		t, err := getAttachToken(tx, id)
		if err != nil {
			return err
		}
		t.LastUsedAt = at.Ptr()
		return putAttachToken(tx, t)
	})
}
