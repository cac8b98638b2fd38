package bolt

import (
	"bytes"
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
	a = record.NewAttachment(a, data)
	return a, s.updateTx(ctx, fmt.Sprintf("store attachment %q", a.Name), func(tx *bbolt.Tx) error {
		return bkt(tx, bucketAttachments).Put([]byte(a.ID), nonNilBytes(data))
	})
}

// GetAttachment returns an attachment's bytes.
func (s *Store) GetAttachment(ctx context.Context, id string) ([]byte, error) {
	return viewOne(ctx, s, "", func(tx *bbolt.Tx) ([]byte, error) {
		v := bkt(tx, bucketAttachments).Get([]byte(id))
		if v == nil {
			return nil, fmt.Errorf("attachment %s: %w", id, core.ErrNotFound)
		}
		// bbolt's memory is only valid inside the transaction.
		return bytes.Clone(v), nil
	})
}

// nonNilBytes is data, or an empty slice for nil: bbolt stores an empty
// value only from a non-nil slice.
func nonNilBytes(data []byte) []byte {
	if data == nil {
		return []byte{}
	}
	return data
}
