package bolt

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/diskfloor"
	"github.com/switchboardhq/switchboard/sessions/store/storetest"
)

const benchWriters = 64

// benchBody is an agent.message body of about 200 bytes.
func benchBody() core.MessageBody {
	return core.MessageBody{Text: strings.Repeat("lorem ipsum ", 16)[:190]}
}

// runWriters runs benchWriters goroutines that each do b.N writes, so one
// op is one write by every writer, and reports events per second; it
// returns that rate.
func runWriters(b *testing.B, write func(w, i int) error) float64 {
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
	rate := float64(benchWriters*b.N) / elapsed.Seconds()
	b.ReportMetric(rate, "events/s")
	return rate
}

// BenchmarkAppend64 appends through Store.Append from 64 goroutines, one
// session each, every commit fsync'd. In the same run, on the same disk,
// it measures the floors (diskfloor): one writer's 4 KiB write+fdatasync
// loop, and 64 writers' 4 KiB records group-committed by one syncer; and
// reports the store's rate over the group floor.
func BenchmarkAppend64(b *testing.B) {
	dir := b.TempDir()
	s, err := Open(filepath.Join(dir, "bench.db"), Options{})
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
	before := s.db.Stats().TxStats
	runWriters(b, func(w, _ int) error {
		_, err := s.Append(ctx, ids[w], core.AppendRequest{TurnID: "turn_bench", Events: []core.Event{ev}})
		return err
	})
	after := s.db.Stats().TxStats
	// bbolt's writes per event: one per dirty page (with its overflow)
	// and one per commit's meta page, the scattered writes each commit
	// makes before its two syncs.
	b.ReportMetric(float64(after.GetWrite()-before.GetWrite())/float64(benchWriters*b.N), "writes/event")
	single, err := diskfloor.Single(filepath.Join(dir, "floor-single"), 500*time.Millisecond, 100)
	if err != nil {
		b.Fatal(err)
	}
	group, err := diskfloor.GroupRate(filepath.Join(dir, "floor-group"), benchWriters, benchWriters*b.N)
	if err != nil {
		b.Fatal(err)
	}
	// The baseline is the 64-writer floor; the single writer's is beside
	// it for what one sync costs on this disk.
	b.ReportMetric(group, "baseline-events/s")
	b.ReportMetric(single, "floor1-events/s")
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
