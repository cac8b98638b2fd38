package bolt

import (
	"bytes"
	"context"
	"fmt"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
	"go.etcd.io/bbolt"
)

var _ core.MemoryStores = (*Store)(nil)

// Memory bucket names; doc.go describes what each holds.
const (
	bucketMemoryStores     = "memory_stores"
	bucketMemoryStoreNames = "memory_store_names"
	bucketMemoryVersions   = "memory_versions"
	bucketMemoryContents   = "memory_contents"
)

var memoryStores = named[core.MemoryStore]{
	kind: "memory store", records: bucketMemoryStores, names: bucketMemoryStoreNames,
	id: func(m *core.MemoryStore) string { return m.ID }, name: func(m *core.MemoryStore) string { return m.Name },
}

// CreateMemoryStore saves a new memory store under a unique name.
func (s *Store) CreateMemoryStore(ctx context.Context, in *core.MemoryStore) (*core.MemoryStore, error) {
	m, err := record.NewMemoryStore(in, s.clock())
	if err != nil {
		return nil, err
	}
	out, err := writeOne(ctx, s, "create memory store", func(tx *bbolt.Tx) (*core.MemoryStore, error) { return memoryStores.create(tx, m) })
	if err == nil {
		s.log.Debug("memory store created", "memory_store_id", out.ID)
	}
	return out, err
}

// GetMemoryStore returns the memory store with this id or name.
func (s *Store) GetMemoryStore(ctx context.Context, idOrName string) (*core.MemoryStore, error) {
	return viewOne(ctx, s, "get memory store", func(tx *bbolt.Tx) (*core.MemoryStore, error) { return memoryStores.get(tx, idOrName) })
}

// ListMemoryStores pages through memory stores in id order.
func (s *Store) ListMemoryStores(ctx context.Context, after string, limit int) ([]*core.MemoryStore, bool, error) {
	list, more, err := listPage(ctx, s, bucketMemoryStores, after, limit, memoryStores.decode)
	if err != nil {
		return nil, false, fmt.Errorf("list memory stores: %w", err)
	}
	return list, more, nil
}

// UpdateMemoryStore applies update inside the write transaction; the id
// and created_at stay.
func (s *Store) UpdateMemoryStore(ctx context.Context, idOrName string, update func(*core.MemoryStore) error) (*core.MemoryStore, error) {
	return writeOne(ctx, s, "update memory store "+idOrName, func(tx *bbolt.Tx) (*core.MemoryStore, error) {
		cur, err := memoryStores.get(tx, idOrName)
		if err != nil {
			return nil, err
		}
		next, err := memoryStores.get(tx, cur.ID) // a copy update may change freely
		if err != nil {
			return nil, err
		}
		if err := record.UpdateMemoryStore(cur, next, update, s.clock()); err != nil {
			return nil, err
		}
		return memoryStores.update(tx, cur, next)
	})
}

// DeleteMemoryStore deletes the store and every version of its files, in
// one transaction, unless the latest version of an agent names it.
func (s *Store) DeleteMemoryStore(ctx context.Context, idOrName string) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	n := 0
	err := s.db.Update(func(tx *bbolt.Tx) error {
		m, err := memoryStores.get(tx, idOrName)
		if err != nil {
			return err
		}
		var users []string
		err = bkt(tx, bucketAgents).ForEach(func(_, v []byte) error {
			a, err := decodeAgent(v)
			if err == nil && record.NamesMemoryStore(a, m.ID) {
				users = append(users, a.Name)
			}
			return err
		})
		if err != nil {
			return err
		}
		if err := record.MemoryStoreInUse(m.ID, users); err != nil {
			return err
		}
		// Collected first: bbolt cursors must not walk a bucket while it
		// is being deleted from.
		var keys [][]byte
		prefix := []byte(m.ID)
		c := bkt(tx, bucketMemoryVersions).Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			keys = append(keys, bytes.Clone(k))
		}
		n = len(keys)
		if err := deleteMemoryVersions(tx, keys); err != nil {
			return err
		}
		if err := deleteMemoryEmbeddings(tx, prefix); err != nil {
			return err
		}
		return memoryStores.delete(tx, m)
	})
	if err != nil {
		return fmt.Errorf("delete memory store: %w", err)
	}
	s.log.Debug("memory store deleted", "memory_store", idOrName, "versions", n)
	return nil
}
