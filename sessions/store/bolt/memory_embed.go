package bolt

import (
	"bytes"
	"context"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
	"go.etcd.io/bbolt"
)

var _ core.MemoryEmbeddings = (*Store)(nil)

// bucketMemoryEmbeddings holds each memory file's embedding; doc.go
// describes it.
const bucketMemoryEmbeddings = "memory_embeddings"

// PutMemoryEmbedding saves e when its version is the file's latest and
// no later version's embedding is saved.
func (s *Store) PutMemoryEmbedding(ctx context.Context, store, partition string, e core.MemoryEmbedding) error {
	if err := record.CheckMemoryEmbedding(partition, e); err != nil {
		return err
	}
	raw, err := record.MemoryEmbeddingBody(e)
	if err != nil {
		return err
	}
	_, err = writeOne(ctx, s, "put memory embedding", func(tx *bbolt.Tx) (struct{}, error) {
		st, err := memoryStores.get(tx, store)
		if err != nil {
			return struct{}{}, err
		}
		var latest *core.MemoryVersion
		err = eachMemoryVersion(tx, memoryPrefix(st.ID, partition, e.Path), func(_ []byte, _ int64, v *core.MemoryVersion) error {
			latest = v
			return nil
		})
		if err != nil || latest == nil || latest.Deleted || latest.Version != e.Version {
			return struct{}{}, err
		}
		k := memoryPrefix(st.ID, partition, e.Path)
		if old := bkt(tx, bucketMemoryEmbeddings).Get(k); old != nil {
			if prev, err := record.DecodeMemoryEmbedding(old); err == nil && prev.Version > e.Version {
				return struct{}{}, nil
			}
		}
		return struct{}{}, bkt(tx, bucketMemoryEmbeddings).Put(k, raw)
	})
	return err
}

// MemoryEmbeddings lists the partition's embeddings in path order.
func (s *Store) MemoryEmbeddings(ctx context.Context, store, partition string) ([]core.MemoryEmbedding, error) {
	return viewMemory(ctx, s, "memory embeddings", store, partition, nil, func(tx *bbolt.Tx, st *core.MemoryStore) ([]core.MemoryEmbedding, error) {
		out := []core.MemoryEmbedding{}
		prefix := memoryPrefix(st.ID, partition)
		c := bkt(tx, bucketMemoryEmbeddings).Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			e, err := record.DecodeMemoryEmbedding(v)
			if err != nil {
				return nil, err
			}
			out = append(out, e)
		}
		return out, nil
	})
}

// deleteMemoryEmbeddings deletes the embeddings under prefix: a store's,
// or one file's.
func deleteMemoryEmbeddings(tx *bbolt.Tx, prefix []byte) error {
	b := bkt(tx, bucketMemoryEmbeddings)
	var keys [][]byte
	c := b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		keys = append(keys, bytes.Clone(k))
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}
