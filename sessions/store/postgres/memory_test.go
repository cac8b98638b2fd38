package postgres

import (
	"errors"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
)

// TestMemoryChangesTakeTurns: a change waits for the partition another
// replica is changing, then decides on what that one committed: here a
// file that leaves no room for its own under the partition's limit.
func TestMemoryChangesTakeTurns(t *testing.T) {
	ctx := t.Context()
	a, dsn := openTest(t, Options{})
	b, name := replica(t, dsn)
	m, err := a.CreateMemoryStore(ctx, &core.MemoryStore{Name: "notes", Limits: core.MemoryLimits{MaxPartitionBytes: 10}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.ChangeMemory(ctx, core.MemoryChange{Store: m.ID, Partition: "p", Op: core.MemoryOpWrite, Path: "x.md"}); err != nil {
		t.Fatal(err)
	}

	// Replica a's change, by hand: the partition's row held, a 6-byte
	// file written.
	tx, err := a.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT 1 FROM memory_partitions WHERE store_id = $1 AND partition = 'p' FOR UPDATE`, m.ID); err != nil {
		t.Fatal(err)
	}
	went := make(chan struct{})
	var bErr error
	go func() {
		defer close(went)
		_, bErr = b.ChangeMemory(ctx, core.MemoryChange{Store: m.ID, Partition: "p", Op: core.MemoryOpWrite, Path: "b.md", Content: "bbbbbb"})
	}()
	waitForLockWait(t, a, name, went)
	v := core.MemoryVersion{Store: m.ID, Partition: "p", Path: "a.md", Version: 1, Op: core.MemoryOpWrite, Size: 6, CreatedAt: a.clock()}
	body, err := record.MemoryVersionBody(v)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO memory_versions (store_id, partition, path, version, seq, deleted, size, body, content)
		VALUES ($1, 'p', 'a.md', 1, 2, false, 6, $2, 'aaaaaa')`, m.ID, body); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `UPDATE memory_partitions SET last_seq = 2 WHERE store_id = $1 AND partition = 'p'`, m.ID); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	<-went
	if !errors.Is(bErr, core.ErrInvalid) {
		t.Fatalf("replica b's change after a's = %v, want ErrInvalid (the partition is full)", bErr)
	}
	if _, err := b.MemoryHistory(ctx, m.ID, "p", "b.md"); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("b.md after the refusal: %v", err)
	}
	got, err := b.MemoryFile(ctx, m.ID, "p", "a.md", 0)
	if err != nil || got.Content != "aaaaaa" {
		t.Fatalf("a.md = %+v, %v", got, err)
	}
}
