package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
	"go.etcd.io/bbolt"
)

// memoryPrefix is the start of the keys of a partition's versions, or,
// with path, of a file's: store id ‖ partition ‖ 0x00 [‖ path ‖ 0x00].
// Store ids have a fixed length, partitions and paths never hold 0x00.
func memoryPrefix(storeID, partition string, path ...string) []byte {
	k := append(append([]byte(storeID), partition...), 0)
	for _, p := range path {
		k = append(append(k, p...), 0)
	}
	return k
}

func memoryKey(storeID, partition, path string, version int) []byte {
	return binary.BigEndian.AppendUint32(memoryPrefix(storeID, partition, path), uint32(version))
}

// decodeMemoryVersion reads a memory_versions value: its seq, then the
// version's JSON.
func decodeMemoryVersion(v []byte) (int64, *core.MemoryVersion, error) {
	if len(v) < 8 {
		return 0, nil, fmt.Errorf("memory version of %d bytes is truncated", len(v))
	}
	out, err := record.Decode[core.MemoryVersion]("memory version", v[8:])
	if err != nil {
		return 0, nil, err
	}
	return int64(binary.BigEndian.Uint64(v[:8])), out, nil
}

// eachMemoryVersion walks the versions under prefix in key order: by
// partition, path, then version.
func eachMemoryVersion(tx *bbolt.Tx, prefix []byte, fn func(k []byte, seq int64, v *core.MemoryVersion) error) error {
	c := bkt(tx, bucketMemoryVersions).Cursor()
	for k, raw := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, raw = c.Next() {
		seq, v, err := decodeMemoryVersion(raw)
		if err != nil {
			return fmt.Errorf("memory version %q: %w", k, err)
		}
		if err := fn(k, seq, v); err != nil {
			return err
		}
	}
	return nil
}

func deleteMemoryVersions(tx *bbolt.Tx, keys [][]byte) error {
	for _, k := range keys {
		if err := bkt(tx, bucketMemoryVersions).Delete(k); err != nil {
			return err
		}
		if err := bkt(tx, bucketMemoryContents).Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// withContent fills v's content from the transaction.
func withContent(tx *bbolt.Tx, k []byte, v *core.MemoryVersion) *core.MemoryVersion {
	v.Content = string(bkt(tx, bucketMemoryContents).Get(k))
	return v
}

// ChangeMemory makes one change in one write transaction: bbolt's single
// writer holds the partition, so the limits and IfVersion hold.
func (s *Store) ChangeMemory(ctx context.Context, c core.MemoryChange) ([]core.MemoryVersion, error) {
	if err := record.CheckMemoryChange(c); err != nil {
		return nil, err
	}
	now := s.clock()
	return writeOne(ctx, s, "change memory", func(tx *bbolt.Tx) ([]core.MemoryVersion, error) {
		st, err := memoryStores.get(tx, c.Store)
		if err != nil {
			return nil, err
		}
		var retained []record.MemoryEntry
		err = eachMemoryVersion(tx, memoryPrefix(st.ID, c.Partition), func(_ []byte, seq int64, v *core.MemoryVersion) error {
			retained = append(retained, record.MemoryEntry{Path: v.Path, Version: v.Version, Deleted: v.Deleted, Size: v.Size, Seq: seq})
			return nil
		})
		if err != nil {
			return nil, err
		}
		plan, err := record.PlanMemoryChange(st, c, retained, func(path string, version int) (string, error) {
			return string(bkt(tx, bucketMemoryContents).Get(memoryKey(st.ID, c.Partition, path, version))), nil
		}, now)
		if err != nil {
			return nil, err
		}
		var pruned [][]byte
		for _, e := range plan.Prune {
			pruned = append(pruned, memoryKey(st.ID, c.Partition, e.Path, e.Version))
		}
		if err := deleteMemoryVersions(tx, pruned); err != nil {
			return nil, err
		}
		for _, v := range plan.Write {
			if err := putMemoryVersion(tx, v); err != nil {
				return nil, err
			}
		}
		return plan.Write, nil
	})
}

// putMemoryVersion writes a new version, its seq the bucket's next.
func putMemoryVersion(tx *bbolt.Tx, v core.MemoryVersion) error {
	versions := bkt(tx, bucketMemoryVersions)
	seq, err := versions.NextSequence()
	if err != nil {
		return err
	}
	raw, err := record.MemoryVersionBody(v)
	if err != nil {
		return err
	}
	k := memoryKey(v.Store, v.Partition, v.Path, v.Version)
	if err := versions.Put(k, append(u64(seq), raw...)); err != nil {
		return err
	}
	if v.Deleted {
		// The embedding goes with the file; a write's stays until the
		// new version's replaces it, its version telling it is stale.
		return bkt(tx, bucketMemoryEmbeddings).Delete(memoryPrefix(v.Store, v.Partition, v.Path))
	}
	return bkt(tx, bucketMemoryContents).Put(k, []byte(v.Content))
}

// viewMemory reads a store's files in a read transaction, after checking
// the names it is given.
func viewMemory[T any](ctx context.Context, s *Store, what, store, partition string, paths []string, fn func(tx *bbolt.Tx, st *core.MemoryStore) (T, error)) (T, error) {
	var zero T
	if err := record.ValidMemoryPartition(partition); err != nil {
		return zero, err
	}
	for _, p := range paths {
		if err := core.ValidMemoryPath(p); err != nil {
			return zero, err
		}
	}
	return viewOne(ctx, s, what, func(tx *bbolt.Tx) (T, error) {
		st, err := memoryStores.get(tx, store)
		if err != nil {
			return zero, err
		}
		return fn(tx, st)
	})
}

// MemoryFiles lists the partition's files that are not deleted, by path:
// the last version of each run of keys with one path.
func (s *Store) MemoryFiles(ctx context.Context, store, partition string, content bool) ([]core.MemoryVersion, error) {
	return viewMemory(ctx, s, "memory files", store, partition, nil, func(tx *bbolt.Tx, st *core.MemoryStore) ([]core.MemoryVersion, error) {
		out := []core.MemoryVersion{}
		var last *core.MemoryVersion
		var lastKey []byte
		flush := func() {
			if last != nil && !last.Deleted {
				if content {
					withContent(tx, lastKey, last)
				}
				out = append(out, *last)
			}
		}
		err := eachMemoryVersion(tx, memoryPrefix(st.ID, partition), func(k []byte, _ int64, v *core.MemoryVersion) error {
			if last != nil && last.Path != v.Path {
				flush()
			}
			last, lastKey = v, k
			return nil
		})
		flush()
		return out, err
	})
}

// MemoryFile returns one version of a file with its content; version 0
// is the latest, not found when deleted.
func (s *Store) MemoryFile(ctx context.Context, store, partition, path string, version int) (*core.MemoryVersion, error) {
	return viewMemory(ctx, s, "memory file", store, partition, []string{path}, func(tx *bbolt.Tx, st *core.MemoryStore) (*core.MemoryVersion, error) {
		var found *core.MemoryVersion
		var key []byte
		err := eachMemoryVersion(tx, memoryPrefix(st.ID, partition, path), func(k []byte, _ int64, v *core.MemoryVersion) error {
			if version == 0 || v.Version == version {
				found, key = v, k
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if found == nil || (version == 0 && found.Deleted) {
			return nil, fmt.Errorf("memory file %q version %d in store %s, tenant %q: %w", path, version, st.ID, partition, core.ErrNotFound)
		}
		return withContent(tx, key, found), nil
	})
}

// MemoryHistory lists a file's retained versions, newest first.
func (s *Store) MemoryHistory(ctx context.Context, store, partition, path string) ([]core.MemoryVersion, error) {
	return viewMemory(ctx, s, "memory history", store, partition, []string{path}, func(tx *bbolt.Tx, st *core.MemoryStore) ([]core.MemoryVersion, error) {
		var out []core.MemoryVersion
		err := eachMemoryVersion(tx, memoryPrefix(st.ID, partition, path), func(_ []byte, _ int64, v *core.MemoryVersion) error {
			out = append(out, *v)
			return nil
		})
		if err == nil && len(out) == 0 {
			err = fmt.Errorf("memory file %q in store %s, tenant %q: %w", path, st.ID, partition, core.ErrNotFound)
		}
		slices.Reverse(out)
		return out, err
	})
}

// MemoryPartitions lists the store's partitions in byte order, seeking
// past each partition's keys rather than walking them.
func (s *Store) MemoryPartitions(ctx context.Context, store string) ([]string, error) {
	return viewOne(ctx, s, "memory partitions", func(tx *bbolt.Tx) ([]string, error) {
		st, err := memoryStores.get(tx, store)
		if err != nil {
			return nil, err
		}
		out := []string{}
		prefix := []byte(st.ID)
		c := bkt(tx, bucketMemoryVersions).Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); {
			p, _, ok := bytes.Cut(k[len(prefix):], []byte{0})
			if !ok {
				return nil, fmt.Errorf("memory version key %q has no partition", k)
			}
			out = append(out, string(p))
			k, _ = c.Seek(append(append(bytes.Clone(prefix), p...), 1))
		}
		return out, nil
	})
}
