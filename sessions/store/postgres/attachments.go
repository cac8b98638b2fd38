package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
)

var _ core.AttachmentStore = (*Store)(nil)

// PutAttachment stores data under a new id.
func (s *Store) PutAttachment(ctx context.Context, a core.Attachment, data []byte) (core.Attachment, error) {
	if err := ctxErr(ctx); err != nil {
		return a, err
	}
	a = record.NewAttachment(a, data)
	err := s.do(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO attachments (id, data) VALUES ($1, $2)`, a.ID, nonNil(data))
		return err
	})
	if err != nil {
		return a, fmt.Errorf("store attachment %q: %w", a.Name, err)
	}
	return a, nil
}

// GetAttachment returns an attachment's bytes.
func (s *Store) GetAttachment(ctx context.Context, id string) ([]byte, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	var data []byte
	err := s.poolFor(ctx).QueryRow(ctx, `SELECT data FROM attachments WHERE id = $1`, id).Scan(&data)
	if noRow(err) {
		return nil, fmt.Errorf("attachment %s: %w", id, core.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("attachment %s: %w", id, err)
	}
	if data == nil {
		data = []byte{}
	}
	return data, nil
}
