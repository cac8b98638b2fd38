package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
)

var _ core.AttachTokenStore = (*Store)(nil)

const attachTokenSQL = `SELECT body FROM attach_tokens WHERE id = $1`

func putAttachToken(ctx context.Context, tx pgx.Tx, t *core.AttachToken) error {
	raw, err := record.Encode("attach token", t.ID, t)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `INSERT INTO attach_tokens (id, session_id, body) VALUES ($1, $2, $3)
		ON CONFLICT (id) DO UPDATE SET body = EXCLUDED.body`, t.ID, t.SessionID, raw)
	return err
}

// changeAttachToken runs change under the session's lock and logs the
// events it returns, in one transaction. archived tells change the
// session's log is closed (it then returns no events).
func (s *Store) changeAttachToken(ctx context.Context, what, sessionID string, change func(tx pgx.Tx, archived bool) ([]record.LogEvent, error)) error {
	var reads appendReads
	err := s.writeTx(ctx, sessionID, txBody{
		run: func(tx pgx.Tx, tail *pgx.Batch) ([]core.Change, error) {
			b := &pgx.Batch{}
			reads.queue(b, sessionID, core.AppendRequest{})
			if err := tx.SendBatch(ctx, b).Close(); err != nil {
				return nil, err
			}
			_, err := reads.check(sessionID, 0)
			archived := errors.Is(err, core.ErrArchived)
			if err != nil && !archived {
				return nil, err
			}
			events, err := change(tx, archived)
			if err != nil || events == nil {
				return nil, err
			}
			_, changes, err := s.appendTx(ctx, tx, tail, sessionID, core.AppendRequest{}, events, &reads)
			return changes, err
		},
	})
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// CreateAttachToken saves a new token and logs it.
func (s *Store) CreateAttachToken(ctx context.Context, in core.AttachToken) (*core.AttachToken, error) {
	t, events, err := record.NewAttachToken(in, s.clock())
	if err != nil {
		return nil, err
	}
	err = s.changeAttachToken(ctx, "create attach token", t.SessionID, func(tx pgx.Tx, archived bool) ([]record.LogEvent, error) {
		if archived {
			return nil, fmt.Errorf("session %s: %w", t.SessionID, core.ErrArchived)
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM attach_tokens WHERE id = $1`, t.ID).Scan(&n); err != nil {
			return nil, err
		}
		if n > 0 {
			return nil, fmt.Errorf("attach token %s exists: %w", t.ID, core.ErrConflict)
		}
		return events, putAttachToken(ctx, tx, t)
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// GetAttachToken returns a token.
func (s *Store) GetAttachToken(ctx context.Context, id string) (*core.AttachToken, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	return getBody[core.AttachToken](ctx, s.poolFor(ctx), "attach token", id, attachTokenSQL, id)
}

// ListAttachTokens returns the session's tokens, oldest first.
func (s *Store) ListAttachTokens(ctx context.Context, sessionID string) ([]*core.AttachToken, error) {
	if _, err := s.GetSession(ctx, sessionID); err != nil {
		return nil, fmt.Errorf("list attach tokens: %w", err)
	}
	rows, err := s.poolFor(ctx).Query(ctx, `SELECT body FROM attach_tokens WHERE session_id = $1 ORDER BY id`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("list attach tokens: %w", err)
	}
	out, err := collect(rows, record.DecodeAttachToken)
	if err != nil {
		return nil, fmt.Errorf("list attach tokens: %w", err)
	}
	return out, nil
}

// RevokeAttachToken revokes one of the session's tokens and logs it.
func (s *Store) RevokeAttachToken(ctx context.Context, sessionID, id, by string) (*core.AttachToken, error) {
	var out *core.AttachToken
	err := s.changeAttachToken(ctx, "revoke attach token", sessionID, func(tx pgx.Tx, archived bool) ([]record.LogEvent, error) {
		t, err := getBody[core.AttachToken](ctx, tx, "attach token", id, attachTokenSQL+` FOR UPDATE`, id)
		if err == nil && t.SessionID != sessionID {
			err = fmt.Errorf("session %s has no attach token %s: %w", sessionID, id, core.ErrNotFound)
		}
		if err != nil {
			return nil, err
		}
		out = t
		events, err := record.RevokeAttachToken(t, by, s.clock())
		if err != nil || events == nil {
			return nil, err
		}
		if err := putAttachToken(ctx, tx, t); err != nil || archived {
			return nil, err
		}
		return events, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// TouchAttachToken records the token's last use.
func (s *Store) TouchAttachToken(ctx context.Context, id string, at core.Time) error {
	err := s.do(ctx, func(tx pgx.Tx) error {
		t, err := getBody[core.AttachToken](ctx, tx, "attach token", id, attachTokenSQL+` FOR UPDATE`, id)
		if err != nil {
			return err
		}
		t.LastUsedAt = at.Ptr()
		return putAttachToken(ctx, tx, t)
	})
	if err != nil {
		return fmt.Errorf("touch attach token: %w", err)
	}
	return nil
}
