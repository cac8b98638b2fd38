package bolt

import (
	"context"
	"fmt"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
	"go.etcd.io/bbolt"
)

// bucketAttachments holds the bytes of attachments by id.
const bucketAttachments = "attachments"

var _ core.AttachmentStore = (*Store)(nil)

// PutAttachment stores data under a new id.
func (s *Store) PutAttachment(ctx context.Context, a core.Attachment, data []byte) (core.Attachment, error) {
	if err := ctxErr(ctx); err != nil {
		return a, err
	}
	a = record.NewAttachment(a, data)
	err := s.db.Update(func(tx *bbolt.Tx) error {
		return bkt(tx, bucketAttachments).Put([]byte(a.ID), nonNilBytes(data))
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
	var out []byte
	err := s.db.View(func(tx *bbolt.Tx) error {
		v := bkt(tx, bucketAttachments).Get([]byte(id))
		if v == nil {
			return fmt.Errorf("attachment %s: %w", id, core.ErrNotFound)
		}
		// bbolt's memory is only valid inside the transaction.
		out = append([]byte{}, v...)
		return nil
	})
	return out, err
}

// nonNilBytes is data, or an empty slice for nil: bbolt stores an empty
// value only from a non-nil slice.
func nonNilBytes(data []byte) []byte {
	if data == nil {
		return []byte{}
	}
	return data
}
