package bolt

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/dump"
	"go.etcd.io/bbolt"
)

// TestLogTail appends batches that fill a tail, reach it exactly, cross
// it, and carry events too large for it, and after each append reads the
// whole log, windows of it, each event by seq, a dump and a fork: every
// reader sees the log the appends wrote, whichever bucket holds it.
func TestLogTail(t *testing.T) {
	large := strings.Repeat("x", tailValueMax)
	tests := []struct {
		name    string
		batches []int // events per append; a negative count ends in a large event
	}{
		{"one at a time", slices.Repeat([]int{1}, 3*tailEvents+5)},
		{"reaching the bound exactly", []int{tailEvents - 1, 1, tailEvents - 1, 1}},
		{"crossing the bound", []int{tailEvents - 3, 5, 2, tailEvents, 1}},
		{"a batch larger than a tail", []int{3, 2*tailEvents + 1, 4}},
		{"large events", []int{5, -1, -3, 2, -1, tailEvents - 1, -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := fresh(t)
			ctx := t.Context()
			res, err := s.CreateSession(ctx, core.NewSession{})
			if err != nil {
				t.Fatal(err)
			}
			id := res.Session.ID
			var want []string
			for i, n := range tt.batches {
				var batch []core.Event
				for j := range max(n, -n) {
					text := fmt.Sprintf("event %d", len(want)+j+1)
					if n < 0 && j == -n-1 {
						text += large
					}
					batch = append(batch, core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorAgent, core.MessageBody{Text: text}))
				}
				if _, err := s.Append(ctx, id, core.AppendRequest{TurnID: "turn_1", Events: batch}); err != nil {
					t.Fatal(err)
				}
				for _, e := range batch {
					want = append(want, string(e.Body))
				}
				checkTailLayout(t, s, id, len(want))
				checkLogged(t, s, id, want, fmt.Sprintf("after append %d", i+1))
			}
			done, err := s.Append(ctx, id, core.AppendRequest{TurnID: "turn_1", Events: []core.Event{turnCompleted()}})
			if err != nil {
				t.Fatal(err)
			}
			forked, err := s.ForkSession(ctx, core.Fork{From: id, AtSeq: done[0].Seq})
			if err != nil {
				t.Fatal(err)
			}
			checkLogged(t, s, forked.ID, want, "the fork")
		})
	}
}

func turnCompleted() core.Event {
	return core.NewEvent(core.TypeTurnCompleted, core.LevelInternal, core.ActorSystem, core.TurnCompletedBody{YieldReason: core.ReasonCompleted})
}

// checkTailLayout holds the buckets to what logEvents promises: the log
// bucket holds seq 1 to m, the tail m+1 to n, fewer than tailEvents of
// them, and no event larger than tailValueMax.
func checkTailLayout(t *testing.T, s *Store, id string, n int) {
	t.Helper()
	var logged, tail []uint64
	err := s.db.View(func(tx *bbolt.Tx) error {
		if log := bkt(tx, bucketLogs).Bucket([]byte(id)); log != nil {
			if err := log.ForEach(func(k, _ []byte) error {
				logged = append(logged, binary.BigEndian.Uint64(k))
				return nil
			}); err != nil {
				return err
			}
		}
		return bkt(tx, bucketLogTails).ForEach(func(k, v []byte) error {
			seq, ok := seqOf(k, id)
			if !ok {
				return fmt.Errorf("tail key %x is not of session %s", k, id)
			}
			if len(v) > tailValueMax {
				return fmt.Errorf("tail holds seq %d of %d bytes", seq, len(v))
			}
			tail = append(tail, seq)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(tail) >= tailEvents {
		t.Errorf("tail holds %d events, want fewer than %d", len(tail), tailEvents)
	}
	all := append(logged, tail...)
	for i, seq := range all {
		if seq != uint64(i+1) {
			t.Fatalf("log bucket %v then tail %v: want seq 1 to %d in order", logged, tail, n)
		}
	}
	if len(all) != n {
		t.Fatalf("log bucket and tail hold %d events, want %d", len(all), n)
	}
}

// checkLogged reads the session's log through Events (whole, and windows
// across the tail's start), delivery's lookup by seq, and Dump.
func checkLogged(t *testing.T, s *Store, id string, want []string, when string) {
	t.Helper()
	ctx := t.Context()
	texts := func(evs []core.Event) []string {
		var out []string
		for _, e := range evs {
			if e.Type == core.TypeAgentMessage {
				out = append(out, string(e.Body))
			}
		}
		return out
	}
	all, err := s.Events(ctx, id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := texts(all); !slices.Equal(got, want) {
		t.Fatalf("%s: Events holds %d messages, want %d", when, len(got), len(want))
	}
	for after := range uint64(len(want)) {
		window, err := s.Events(ctx, id, after, 3)
		if err != nil {
			t.Fatal(err)
		}
		if got := texts(window); !slices.Equal(got, want[after:min(after+3, uint64(len(want)))]) {
			t.Fatalf("%s: Events after %d, limit 3: %d messages, want %d", when, after, len(got), min(3, uint64(len(want))-after))
		}
	}
	err = s.db.View(func(tx *bbolt.Tx) error {
		for seq := range uint64(len(want)) {
			if loggedEvent(tx, id, seq+1) == nil {
				return fmt.Errorf("%s: no event at seq %d", when, seq+1)
			}
		}
		if loggedEvent(tx, id, uint64(len(all))+1) != nil {
			return fmt.Errorf("%s: an event after the last seq", when)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var dumped []uint64
	if err := s.Dump(ctx, func(r dump.Record) error {
		if e, ok := r.(dump.Event); ok && e.SessionID == id {
			dumped = append(dumped, e.Seq)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for i, seq := range dumped {
		if seq != uint64(i+1) {
			t.Fatalf("%s: dumped seqs %v", when, dumped)
		}
	}
	if len(dumped) != len(all) {
		t.Fatalf("%s: dumped %d events, want %d", when, len(dumped), len(all))
	}
}

// TestTailKeysKeepSessionsApart: a session whose id is a prefix of
// another's reads its own tail only, whatever the other holds.
func TestTailKeysKeepSessionsApart(t *testing.T) {
	s := fresh(t)
	ids := []string{"ses_a", "ses_a1", "ses_", "ses_b"}
	err := s.db.Update(func(tx *bbolt.Tx) error {
		for n, id := range ids {
			var events []core.Event
			for seq := range uint64(n + 2) {
				e := core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorAgent, core.MessageBody{Text: id})
				e.Seq = seq + 1
				events = append(events, e)
			}
			if err := logEvents(tx, id, events); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.db.View(func(tx *bbolt.Tx) error {
		for n, id := range ids {
			var seqs []uint64
			if err := eachLogged(tx, id, 0, func(seq uint64, v []byte) (bool, error) {
				if !strings.Contains(string(v), `"`+id+`"`) {
					return false, fmt.Errorf("session %s read %s", id, v)
				}
				seqs = append(seqs, seq)
				return true, nil
			}); err != nil {
				return err
			}
			if len(seqs) != n+2 || seqs[0] != 1 {
				return fmt.Errorf("session %s read seqs %v, want 1 to %d", id, seqs, n+2)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSchemaOfTheTail: a file of schema 1 opened for writing is marked 2,
// takes appends into its tails after its older events, and opened
// read-only (no log_tails bucket) still reads and dumps its logs and reads
// its queue; a file
// of a schema newer than this binary's is refused.
func TestSchemaOfTheTail(t *testing.T) {
	ro := openRelease(t, "release1", Options{ReadOnly: true})
	if evs, err := ro.Events(t.Context(), "ses_api", 0, 0); err != nil || len(evs) != 7 {
		t.Fatalf("read-only schema 1 log: %d events, %v", len(evs), err)
	}
	if pending, err := ro.Pending(t.Context(), "ses_api"); err != nil || len(pending) != 1 {
		t.Fatalf("read-only schema 1 queue: %d inputs, %v", len(pending), err)
	}
	n := 0
	if err := ro.Dump(t.Context(), func(r dump.Record) error {
		if e, ok := r.(dump.Event); ok && e.SessionID == "ses_api" {
			n++
		}
		return nil
	}); err != nil || n != 7 {
		t.Fatalf("read-only schema 1 dump: %d events, %v", n, err)
	}

	s := openRelease1(t)
	if v := schemaOf(t, s); v != schemaVersion {
		t.Fatalf("schema %d after opening a file of schema 1, want %d", v, schemaVersion)
	}
	const more = 2 * tailEvents
	for range more {
		if _, err := s.Append(t.Context(), "ses_api", core.AppendRequest{Events: []core.Event{message("more")}}); err != nil {
			t.Fatal(err)
		}
	}
	evs, err := s.Events(t.Context(), "ses_api", 0, 0)
	if err != nil || len(evs) != 7+more {
		t.Fatalf("log after appends: %d events, %v", len(evs), err)
	}
	for i, e := range evs {
		if e.Seq != uint64(i+1) {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
	}

	path := s.path
	if err := s.db.Update(func(tx *bbolt.Tx) error {
		return bkt(tx, bucketMeta).Put([]byte(metaSchemaVersion), binary.BigEndian.AppendUint32(nil, schemaVersion+1))
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if newer, err := Open(path, Options{}); err == nil || !strings.Contains(err.Error(), "newer than this binary") {
		if newer != nil {
			_ = newer.Close()
		}
		t.Fatalf("open of a newer schema: %v", err)
	}
}

func schemaOf(t *testing.T, s *Store) uint32 {
	t.Helper()
	var v uint32
	if err := s.db.View(func(tx *bbolt.Tx) error {
		v = binary.BigEndian.Uint32(bkt(tx, bucketMeta).Get([]byte(metaSchemaVersion)))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return v
}
