package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
)

// ChangeMemory makes one change in one transaction. It takes the
// partition's row first (inserting it for a partition's first change),
// and holds it to the commit: changes of one partition from any replica
// take turns, each seeing what the one before wrote, so the limits and
// IfVersion hold. The store's row is shared-locked against its delete.
func (s *Store) ChangeMemory(ctx context.Context, c core.MemoryChange) ([]core.MemoryVersion, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	if err := record.CheckMemoryChange(c); err != nil {
		return nil, err
	}
	now := s.clock()
	var out []core.MemoryVersion
	err := s.do(ctx, func(tx pgx.Tx) error {
		st, err := getMemoryStore(ctx, tx, c.Store, "FOR SHARE")
		if err != nil {
			return err
		}
		var seq int64
		err = tx.QueryRow(ctx, `INSERT INTO memory_partitions (store_id, partition, last_seq) VALUES ($1, $2, 0)
			ON CONFLICT (store_id, partition) DO UPDATE SET last_seq = memory_partitions.last_seq
			RETURNING last_seq`, st.ID, c.Partition).Scan(&seq)
		if err != nil {
			return fmt.Errorf("lock memory partition: %w", err)
		}
		rows, err := tx.Query(ctx, `SELECT path, version, deleted, size, seq FROM memory_versions
			WHERE store_id = $1 AND partition = $2`, st.ID, c.Partition)
		if err != nil {
			return err
		}
		retained, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (record.MemoryEntry, error) {
			var e record.MemoryEntry
			return e, r.Scan(&e.Path, &e.Version, &e.Deleted, &e.Size, &e.Seq)
		})
		if err != nil {
			return err
		}
		plan, err := record.PlanMemoryChange(st, c, retained, func(path string, version int) (string, error) {
			var b []byte
			err := tx.QueryRow(ctx, `SELECT content FROM memory_versions
				WHERE store_id = $1 AND partition = $2 AND path = $3 AND version = $4`, st.ID, c.Partition, path, version).Scan(&b)
			return string(b), err
		}, now)
		if err != nil {
			return err
		}
		b := &pgx.Batch{}
		for _, e := range plan.Prune {
			b.Queue(`DELETE FROM memory_versions WHERE store_id = $1 AND partition = $2 AND path = $3 AND version = $4`,
				st.ID, c.Partition, e.Path, e.Version)
		}
		for _, v := range plan.Write {
			seq++
			body, err := record.MemoryVersionBody(v)
			if err != nil {
				return err
			}
			var content []byte
			if !v.Deleted {
				content = []byte(v.Content)
			}
			b.Queue(`INSERT INTO memory_versions (store_id, partition, path, version, seq, deleted, size, body, content)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, st.ID, c.Partition, v.Path, v.Version, seq, v.Deleted, v.Size, body, content)
			if v.Deleted {
				// The embedding goes with the file; a write's stays until
				// the new version's replaces it, its version telling it is
				// stale.
				b.Queue(`DELETE FROM memory_embeddings WHERE store_id = $1 AND partition = $2 AND path = $3`, st.ID, c.Partition, v.Path)
			}
		}
		b.Queue(`UPDATE memory_partitions SET last_seq = $3 WHERE store_id = $1 AND partition = $2`, st.ID, c.Partition, seq)
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return err
		}
		out = plan.Write
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("change memory: %w", err)
	}
	return out, nil
}

// memoryStoreID resolves a memory store's id or name to its id, after
// checking the partition and paths a read names (MemoryPartitions names
// none: it passes the shared partition).
func (s *Store) memoryStoreID(ctx context.Context, store, partition string, paths ...string) (string, error) {
	if err := ctxErr(ctx); err != nil {
		return "", err
	}
	if err := record.ValidMemoryPartition(partition); err != nil {
		return "", err
	}
	for _, p := range paths {
		if err := core.ValidMemoryPath(p); err != nil {
			return "", err
		}
	}
	m, err := getMemoryStore(ctx, s.poolFor(ctx), store, "")
	if err != nil {
		return "", err
	}
	return m.ID, nil
}

// memoryVersions reads rows of (body, content) as versions.
func (s *Store) memoryVersions(ctx context.Context, sql string, args ...any) ([]core.MemoryVersion, error) {
	rows, err := s.poolFor(ctx).Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (core.MemoryVersion, error) {
		var body, content []byte
		if err := r.Scan(&body, &content); err != nil {
			return core.MemoryVersion{}, err
		}
		v, err := record.Decode[core.MemoryVersion]("memory version", body)
		if err != nil {
			return core.MemoryVersion{}, err
		}
		v.Content = string(content)
		return *v, nil
	})
}

// MemoryFiles lists the partition's files that are not deleted, by path.
func (s *Store) MemoryFiles(ctx context.Context, store, partition string, withContent bool) ([]core.MemoryVersion, error) {
	id, err := s.memoryStoreID(ctx, store, partition)
	if err != nil {
		return nil, fmt.Errorf("memory files: %w", err)
	}
	out, err := s.memoryVersions(ctx, `SELECT body, content FROM (
			SELECT DISTINCT ON (path) path, deleted, body, CASE WHEN $3 THEN content END AS content
			FROM memory_versions WHERE store_id = $1 AND partition = $2 ORDER BY path, version DESC) latest
		WHERE NOT deleted ORDER BY path`, id, partition, withContent)
	if err != nil {
		return nil, fmt.Errorf("memory files: %w", err)
	}
	return out, nil
}

// MemoryFile returns one version of a file with its content; version 0
// is the latest, not found when deleted.
func (s *Store) MemoryFile(ctx context.Context, store, partition, path string, version int) (*core.MemoryVersion, error) {
	id, err := s.memoryStoreID(ctx, store, partition, path)
	if err != nil {
		return nil, fmt.Errorf("memory file: %w", err)
	}
	out, err := s.memoryVersions(ctx, `SELECT body, content FROM memory_versions
		WHERE store_id = $1 AND partition = $2 AND path = $3 AND (version = $4 OR $4 = 0)
		ORDER BY version DESC LIMIT 1`, id, partition, path, version)
	if err == nil && (len(out) == 0 || (version == 0 && out[0].Deleted)) {
		err = fmt.Errorf("memory file %q version %d in store %s, tenant %q: %w", path, version, id, partition, core.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("memory file: %w", err)
	}
	return &out[0], nil
}

// MemoryHistory lists a file's retained versions, newest first.
func (s *Store) MemoryHistory(ctx context.Context, store, partition, path string) ([]core.MemoryVersion, error) {
	id, err := s.memoryStoreID(ctx, store, partition, path)
	if err != nil {
		return nil, fmt.Errorf("memory history: %w", err)
	}
	out, err := s.memoryVersions(ctx, `SELECT body, NULL::bytea FROM memory_versions
		WHERE store_id = $1 AND partition = $2 AND path = $3 ORDER BY version DESC`, id, partition, path)
	if err == nil && len(out) == 0 {
		err = fmt.Errorf("memory file %q in store %s, tenant %q: %w", path, id, partition, core.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("memory history: %w", err)
	}
	return out, nil
}

// MemoryPartitions lists the store's partitions in byte order.
func (s *Store) MemoryPartitions(ctx context.Context, store string) ([]string, error) {
	id, err := s.memoryStoreID(ctx, store, core.SharedPartition)
	if err != nil {
		return nil, fmt.Errorf("memory partitions: %w", err)
	}
	out, err := s.ids(ctx, `SELECT partition FROM memory_partitions WHERE store_id = $1 ORDER BY partition`, id)
	if err != nil {
		return nil, fmt.Errorf("memory partitions: %w", err)
	}
	return out, nil
}
