package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
)

var _ core.MemoryStores = (*Store)(nil)

// memoryStoreByIDOrName selects a memory store by id first and by name
// second (a name may not look like an id); the caller appends a locking
// clause when it writes.
const memoryStoreByIDOrName = "SELECT body FROM memory_stores WHERE id = $1 OR name = $1 ORDER BY id = $1 DESC LIMIT 1"

// getMemoryStore reads a memory store by id or name with lock ("",
// "FOR SHARE", "FOR UPDATE").
func getMemoryStore(ctx context.Context, q querier, idOrName, lock string) (*core.MemoryStore, error) {
	return getBody[core.MemoryStore](ctx, q, "memory store", idOrName, memoryStoreByIDOrName+" "+lock, idOrName)
}

func memoryStoreNameTaken(name string) error {
	return fmt.Errorf("memory store name %q is taken: %w", name, core.ErrConflict)
}

// CreateMemoryStore saves a new memory store under a unique name.
func (s *Store) CreateMemoryStore(ctx context.Context, in *core.MemoryStore) (*core.MemoryStore, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	m, err := record.NewMemoryStore(in, s.clock())
	if err != nil {
		return nil, err
	}
	raw, err := record.Encode("memory store", m.ID, m)
	if err != nil {
		return nil, fmt.Errorf("create memory store: %w", err)
	}
	err = s.do(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "INSERT INTO memory_stores (id, name, body) VALUES ($1, $2, $3)", m.ID, m.Name, raw)
		switch {
		case isUnique(err, "memory_stores_name_key"):
			return memoryStoreNameTaken(m.Name)
		case isUnique(err):
			return fmt.Errorf("memory store %s already exists: %w", m.ID, core.ErrConflict)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("create memory store: %w", err)
	}
	s.log.Debug("memory store created", "memory_store_id", m.ID)
	return record.Decode[core.MemoryStore]("memory store", raw)
}

// GetMemoryStore returns the memory store with this id or name.
func (s *Store) GetMemoryStore(ctx context.Context, idOrName string) (*core.MemoryStore, error) {
	return readOne[core.MemoryStore](ctx, s, "get memory store", "memory store", idOrName, memoryStoreByIDOrName, idOrName)
}

// ListMemoryStores pages through memory stores in id order.
func (s *Store) ListMemoryStores(ctx context.Context, after string, limit int) ([]*core.MemoryStore, bool, error) {
	return bodyPage[core.MemoryStore](ctx, s, "memory stores",
		"SELECT body FROM memory_stores WHERE id > $1 ORDER BY id LIMIT $2", after, limit)
}

// UpdateMemoryStore applies update to the locked row; the id and
// created_at stay.
func (s *Store) UpdateMemoryStore(ctx context.Context, idOrName string, update func(*core.MemoryStore) error) (*core.MemoryStore, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	var raw []byte
	err := s.do(ctx, func(tx pgx.Tx) error {
		cur, err := getMemoryStore(ctx, tx, idOrName, "FOR UPDATE")
		if err != nil {
			return err
		}
		// A copy update may change freely, maps included.
		next, err := getMemoryStore(ctx, tx, cur.ID, "")
		if err != nil {
			return err
		}
		if err := record.UpdateMemoryStore(cur, next, update, s.clock()); err != nil {
			return err
		}
		if raw, err = record.Encode("memory store", cur.ID, next); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "UPDATE memory_stores SET name = $2, body = $3 WHERE id = $1", cur.ID, next.Name, raw)
		if isUnique(err, "memory_stores_name_key") {
			return memoryStoreNameTaken(next.Name)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("update memory store %s: %w", idOrName, err)
	}
	return record.Decode[core.MemoryStore]("memory store", raw)
}

// DeleteMemoryStore deletes the store, and with it (the foreign keys'
// cascade) its partitions and every version of its files, unless the
// latest version of an agent names it. The store's row stays locked from
// the check to the delete: an agent saved meanwhile waits for its lock
// (resolveAgent), then finds the store gone.
func (s *Store) DeleteMemoryStore(ctx context.Context, idOrName string) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	err := s.do(ctx, func(tx pgx.Tx) error {
		m, err := getMemoryStore(ctx, tx, idOrName, "FOR UPDATE")
		if err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT name FROM agents
			WHERE convert_from(body, 'UTF8')::jsonb -> 'memory_stores' @> jsonb_build_array(jsonb_build_object('id', $1::text))`, m.ID)
		if err != nil {
			return err
		}
		users, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		if err := record.MemoryStoreInUse(m.ID, users); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "DELETE FROM memory_stores WHERE id = $1", m.ID)
		return err
	})
	if err != nil {
		return fmt.Errorf("delete memory store: %w", err)
	}
	return nil
}
