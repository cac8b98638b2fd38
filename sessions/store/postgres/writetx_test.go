package postgres

import (
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/switchboardhq/switchboard/core"
)

// TestWriteTxCommitsWithItsTail: the COMMIT goes with the tail, so what
// a write's open batch, its body and its tail wrote is kept all together
// or not at all, and the connection goes back to the pool out of any
// transaction.
func TestWriteTxCommitsWithItsTail(t *testing.T) {
	s, _ := openTest(t, Options{})
	ctx := t.Context()
	if _, err := s.pool.Exec(ctx, `CREATE TABLE writetx_probe (k text PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	kept := func() []string {
		t.Helper()
		rows, err := s.pool.Query(ctx, `SELECT k FROM writetx_probe ORDER BY k`)
		if err != nil {
			t.Fatal(err)
		}
		keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return keys
	}
	// write inserts prefix-open with the BEGIN, prefix-run in the
	// transaction, and tail's statements after it.
	write := func(prefix string, tail func(*pgx.Batch), run func(pgx.Tx) error) error {
		return s.writeTx(ctx, "", txBody{
			open: func(b *pgx.Batch) { b.Queue(`INSERT INTO writetx_probe VALUES ($1)`, prefix+"-open") },
			run: func(tx pgx.Tx, b *pgx.Batch) ([]core.Change, error) {
				if _, err := tx.Exec(ctx, `INSERT INTO writetx_probe VALUES ($1)`, prefix+"-run"); err != nil {
					return nil, err
				}
				if run != nil {
					if err := run(tx); err != nil {
						return nil, err
					}
				}
				tail(b)
				return nil, nil
			},
		})
	}
	tailOf := func(keys ...string) func(*pgx.Batch) {
		return func(b *pgx.Batch) {
			for _, k := range keys {
				b.Queue(`INSERT INTO writetx_probe VALUES ($1)`, k)
			}
		}
	}

	t.Run("a write is kept whole", func(t *testing.T) {
		if err := write("a", tailOf("a-tail1", "a-tail2"), nil); err != nil {
			t.Fatal(err)
		}
		if got, want := kept(), []string{"a-open", "a-run", "a-tail1", "a-tail2"}; !slices.Equal(got, want) {
			t.Fatalf("kept %v, want %v", got, want)
		}
	})
	t.Run("a tail statement that fails keeps nothing", func(t *testing.T) {
		// The second insert of a-tail1 breaks the key: the statement after
		// it and the COMMIT never run.
		err := write("b", tailOf("b-tail1", "a-tail1", "b-tail2"), nil)
		if err == nil {
			t.Fatal("a duplicate key in the tail was written")
		}
		if got, want := kept(), []string{"a-open", "a-run", "a-tail1", "a-tail2"}; !slices.Equal(got, want) {
			t.Fatalf("kept %v, want %v", got, want)
		}
	})
	t.Run("a transaction an ignored error aborted does not commit", func(t *testing.T) {
		err := write("c", tailOf(), func(tx pgx.Tx) error {
			_, _ = tx.Exec(ctx, `SELECT 1/0`) // the body goes on regardless
			return nil
		})
		if err == nil {
			t.Fatal("an aborted transaction reported a commit")
		}
		if got, want := kept(), []string{"a-open", "a-run", "a-tail1", "a-tail2"}; !slices.Equal(got, want) {
			t.Fatalf("kept %v, want %v", got, want)
		}
	})
	t.Run("connections go back idle", func(t *testing.T) {
		// One that a write left in its transaction would be closed by the
		// pool at its release, and the next write would dial anew.
		dialed := s.pool.Stat().NewConnsCount()
		for i := range 20 {
			if err := write("d"+string(rune('a'+i)), tailOf(), nil); err != nil {
				t.Fatal(err)
			}
		}
		if got := s.pool.Stat().NewConnsCount() - dialed; got > 1 {
			t.Fatalf("20 writes one after another dialed %d connections", got)
		}
		if got := len(kept()); got != 4+40 {
			t.Fatalf("kept %d rows, want 44", got)
		}
	})
}
