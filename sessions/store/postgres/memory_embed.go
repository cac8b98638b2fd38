package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
)

var _ core.MemoryEmbeddings = (*Store)(nil)

// PutMemoryEmbedding saves e in one statement: only when its version is
// the file's latest and not a deletion, and never over a later version's
// row, whichever replica's put commits last.
func (s *Store) PutMemoryEmbedding(ctx context.Context, store, partition string, e core.MemoryEmbedding) error {
	if err := record.CheckMemoryEmbedding(partition, e); err != nil {
		return fmt.Errorf("put memory embedding: %w", err)
	}
	id, err := s.memoryStoreID(ctx, store, partition)
	if err != nil {
		return fmt.Errorf("put memory embedding: %w", err)
	}
	body, err := record.MemoryEmbeddingBody(e)
	if err != nil {
		return err
	}
	_, err = s.poolFor(ctx).Exec(ctx, `INSERT INTO memory_embeddings (store_id, partition, path, version, model, body)
		SELECT $1, $2, $3, $4, $5, $6
		FROM (SELECT version, deleted FROM memory_versions
			WHERE store_id = $1 AND partition = $2 AND path = $3 ORDER BY version DESC LIMIT 1) latest
		WHERE latest.version = $4 AND NOT latest.deleted
		ON CONFLICT (store_id, partition, path) DO UPDATE
			SET version = EXCLUDED.version, model = EXCLUDED.model, body = EXCLUDED.body
			WHERE memory_embeddings.version <= EXCLUDED.version`, id, partition, e.Path, e.Version, e.Model, body)
	if err != nil {
		return fmt.Errorf("put memory embedding: %w", err)
	}
	return nil
}

// MemoryEmbeddings lists the partition's embeddings in path order.
func (s *Store) MemoryEmbeddings(ctx context.Context, store, partition string) ([]core.MemoryEmbedding, error) {
	id, err := s.memoryStoreID(ctx, store, partition)
	if err != nil {
		return nil, fmt.Errorf("memory embeddings: %w", err)
	}
	rows, err := s.poolFor(ctx).Query(ctx, `SELECT body FROM memory_embeddings
		WHERE store_id = $1 AND partition = $2 ORDER BY path`, id, partition)
	if err != nil {
		return nil, fmt.Errorf("memory embeddings: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (core.MemoryEmbedding, error) {
		var body []byte
		if err := r.Scan(&body); err != nil {
			return core.MemoryEmbedding{}, err
		}
		return record.DecodeMemoryEmbedding(body)
	})
	if err != nil {
		return nil, fmt.Errorf("memory embeddings: %w", err)
	}
	return out, nil
}
