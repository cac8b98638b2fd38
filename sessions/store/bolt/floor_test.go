package bolt

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// floorRecord is the size of what one floor write makes durable: a page,
// more than an appended event and its session record take.
const floorRecord = 4 << 10

// syncFloors measures, in dir, what the disk allows without any store:
// one writer doing write+datasync in a loop, and writers handing records
// to one syncer that writes a batch and datasyncs it once, events
// records in all (events/s each).
func syncFloors(b *testing.B, dir string, events int) (single, group float64) {
	b.Helper()
	single = floorSingle(b, filepath.Join(dir, "floor-single"))
	group = floorGroup(b, filepath.Join(dir, "floor-group"), events)
	return single, group
}

func floorFile(b *testing.B, path string) *os.File {
	b.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	return f
}

// floorSingle syncs records one at a time for at least half a second
// and 100 records, long enough for a stable rate.
func floorSingle(b *testing.B, path string) float64 {
	b.Helper()
	f := floorFile(b, path)
	buf := make([]byte, floorRecord)
	start := time.Now()
	n := 0
	for ; n < 100 || time.Since(start) < 500*time.Millisecond; n++ {
		if _, err := f.Write(buf); err != nil {
			b.Fatal(err)
		}
		if err := datasync(f); err != nil {
			b.Fatal(err)
		}
	}
	return float64(n) / time.Since(start).Seconds()
}

// floorGroup is the group commit the store's committer does, without
// the store: benchWriters writers hand events records in all to one
// syncer, which writes what is waiting and datasyncs once per batch.
func floorGroup(b *testing.B, path string, events int) float64 {
	b.Helper()
	f := floorFile(b, path)
	type handed struct {
		buf  []byte
		done chan struct{}
	}
	// failed is the syncer's first error, read once every writer is
	// answered.
	var failed error
	queue := make(chan handed, benchWriters)
	go func() {
		var batch []handed
		for h := range queue {
			batch = append(batch[:0], h)
		drain:
			for {
				select {
				case h, ok := <-queue:
					if !ok {
						break drain
					}
					batch = append(batch, h)
				default:
					break drain
				}
			}
			for _, h := range batch {
				if _, err := f.Write(h.buf); err != nil && failed == nil {
					failed = err
				}
			}
			if err := datasync(f); err != nil && failed == nil {
				failed = err
			}
			for _, h := range batch {
				h.done <- struct{}{}
			}
		}
	}()
	defer close(queue)
	per := max(1, events/benchWriters)
	var wg sync.WaitGroup
	start := time.Now()
	for range benchWriters {
		wg.Go(func() {
			h := handed{buf: make([]byte, floorRecord), done: make(chan struct{}, 1)}
			for range per {
				queue <- h
				<-h.done
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if failed != nil {
		b.Fatal(failed)
	}
	return float64(per*benchWriters) / elapsed.Seconds()
}
