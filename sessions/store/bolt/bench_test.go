package bolt

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/storetest"
	"go.etcd.io/bbolt"
)

const benchWriters = 64

// benchBody is an agent.message body of about 200 bytes.
func benchBody() core.MessageBody {
	return core.MessageBody{Text: strings.Repeat("lorem ipsum ", 16)[:190]}
}

// runWriters runs benchWriters goroutines that each do b.N writes, so one
// op is one write by every writer, and reports events per second.
func runWriters(b *testing.B, write func(w, i int) error) {
	b.Helper()
	var wg sync.WaitGroup
	errs := make([]error, benchWriters)
	b.ResetTimer()
	start := time.Now()
	for w := range benchWriters {
		wg.Go(func() {
			for i := range b.N {
				if err := write(w, i); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	for _, err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(benchWriters*b.N)/elapsed.Seconds(), "events/s")
}

// BenchmarkAppend64 appends through Store.Append from 64 goroutines, one
// session each, every commit fsync'd.
func BenchmarkAppend64(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), "bench.db"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := b.Context()
	ids := make([]string, benchWriters)
	for w := range ids {
		res, err := s.CreateSession(ctx, core.NewSession{})
		if err != nil {
			b.Fatal(err)
		}
		ids[w] = res.Session.ID
	}
	ev := core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorAgent, benchBody())
	runWriters(b, func(w, _ int) error {
		_, err := s.Append(ctx, ids[w], core.AppendRequest{TurnID: "turn_bench", Events: []core.Event{ev}})
		return err
	})
}

// BenchmarkBoltBatchBaseline is the floor Append is measured against: raw
// db.Batch puts of records the size of a logged event, same writers, same
// disk, no store logic.
func BenchmarkBoltBatchBaseline(b *testing.B) {
	db, err := bbolt.Open(filepath.Join(b.TempDir(), "baseline.db"), 0o600, &bbolt.Options{Timeout: time.Second, FreelistType: bbolt.FreelistMapType})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ev := core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorAgent, benchBody())
	ev.ID, ev.SessionID, ev.TurnID, ev.CreatedAt = core.NewID(core.PrefixEvent), core.NewID(core.PrefixSession), "turn_bench", core.Now()
	record, err := core.EncodeJSON(&ev)
	if err != nil {
		b.Fatal(err)
	}
	names := make([][]byte, benchWriters)
	err = db.Update(func(tx *bbolt.Tx) error {
		for w := range names {
			names[w] = []byte(fmt.Sprintf("w%02d", w))
			if _, err := tx.CreateBucket(names[w]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	runWriters(b, func(w, i int) error {
		return db.Batch(func(tx *bbolt.Tx) error {
			return tx.Bucket(names[w]).Put(u64(uint64(i+1)), record)
		})
	})
}

// BenchmarkListSessions lists a page of 100 out of 10,000 sessions by
// each filter (storetest.BenchList).
func BenchmarkListSessions(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), "bench.db"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	storetest.BenchList(b, s)
}
