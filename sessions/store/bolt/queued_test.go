package bolt

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"go.etcd.io/bbolt"
)

// TestQueuesMoveFromSchemaOne: a file whose queues are nested buckets in
// pending, as schema 1 kept them, opens with every queue in queue, each
// in its order, and no pending bucket; read-only, before that, it reads
// them where they are.
func TestQueuesMoveFromSchemaOne(t *testing.T) {
	path := filepath.Join(t.TempDir(), "switchboard.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{}
	var ids []string
	for range 3 {
		res, err := s.CreateSession(t.Context(), core.NewSession{})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.Session.ID)
	}
	// Rewrite the file as schema 1 had it: queues in pending, no queue.
	err = s.db.Update(func(tx *bbolt.Tx) error {
		if err := tx.DeleteBucket([]byte(bucketQueue)); err != nil {
			return err
		}
		pending, err := tx.CreateBucket([]byte(bucketPending))
		if err != nil {
			return err
		}
		for n, id := range ids[:2] {
			b, err := pending.CreateBucket([]byte(id))
			if err != nil {
				return err
			}
			for i := range n + 2 {
				text := fmt.Sprintf("%s input %d", id, i)
				body, _ := json.Marshal(core.MessageBody{Text: text})
				e := core.NewInput(core.TypeUserMessage, body)
				v, _ := json.Marshal(e)
				// Positions as NextSequence gave them, with a gap a taken
				// input left.
				if err := b.Put(u64(uint64(2*i+1)), v); err != nil {
					return err
				}
				want[id] = append(want[id], text)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	ro, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	checkQueues(t, ro, ids, want, "read-only, before the move")
	if err := ro.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checkQueues(t, s, ids, want, "after the move")
	if err := s.db.View(func(tx *bbolt.Tx) error {
		if bkt(tx, bucketPending) != nil {
			return fmt.Errorf("pending is still there")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// The moved queue goes on where it was.
	res, err := s.QueueInputs(t.Context(), ids[0], core.QueueRequest{Inputs: []core.Event{message("after")}})
	if err != nil || len(res.Inputs) != 1 {
		t.Fatalf("queue after the move: %+v, %v", res, err)
	}
	want[ids[0]] = append(want[ids[0]], "after")
	checkQueues(t, s, ids, want, "after another input")
}

func checkQueues(t *testing.T, s *Store, ids []string, want map[string][]string, when string) {
	t.Helper()
	for _, id := range ids {
		pending, err := s.Pending(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range pending {
			var m core.MessageBody
			if err := json.Unmarshal(e.Body, &m); err != nil {
				t.Fatal(err)
			}
			got = append(got, m.Text)
		}
		if !slices.Equal(got, want[id]) {
			t.Errorf("%s: queue of %s is %q, want %q", when, id, got, want[id])
		}
	}
}

// TestQueueKeysKeepSessionsApart: taking, reading and dropping the queue
// of a session whose id is a prefix of another's leaves the other's as it
// was.
func TestQueueKeysKeepSessionsApart(t *testing.T) {
	s := fresh(t)
	ids := []string{"ses_a", "ses_a1", "ses_"}
	err := s.db.Update(func(tx *bbolt.Tx) error {
		for _, id := range ids {
			for range 2 {
				if err := enqueue(tx, id, []byte(`{"type":"user.message","body":{"text":"`+id+`"}}`)); err != nil {
					return err
				}
			}
		}
		if taken, err := takeInputs(tx, "ses_a"); err != nil || len(taken) != 2 {
			return fmt.Errorf("took %d inputs of ses_a, %v", len(taken), err)
		}
		return dropQueued(tx, "ses_")
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.db.View(func(tx *bbolt.Tx) error {
		for id, n := range map[string]int{"ses_a": 0, "ses_a1": 2, "ses_": 0} {
			got := 0
			if err := eachQueued(tx, id, func(_ uint64, v []byte) (bool, error) {
				got++
				return true, nil
			}); err != nil {
				return err
			}
			if got != n {
				return fmt.Errorf("queue of %s holds %d, want %d", id, got, n)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
