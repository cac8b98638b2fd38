package bolt

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.etcd.io/bbolt"
)

// mappedKB is the resident size of the database's mapping
// (/proc/self/smaps).
func mappedKB(t *testing.T, s *Store) int {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := strconv.FormatUint(uint64(s.db.Info().Data), 16) + "-"
	sc := bufio.NewScanner(f)
	in := false // in the mapping's block: its Rss line follows its header
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, want) {
			in = true
		}
		if in && strings.HasPrefix(line, "Rss:") {
			kb, err := strconv.Atoi(strings.Fields(line)[1])
			if err != nil {
				t.Fatal(err)
			}
			return kb
		}
	}
	t.Fatalf("no mapping at %s in /proc/self/smaps", want)
	return 0
}

// TestReleaseMapped: the pages reads fault into the database's mapping
// leave the resident set, and reads afterwards see the same data.
func TestReleaseMapped(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "mapped.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const n, size = 1024, 4096
	value := func(i int) []byte { return bytes.Repeat([]byte{byte(i)}, size) }
	if err := s.db.Update(func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte("mapped_test"))
		if err != nil {
			return err
		}
		for i := range n {
			if err := b.Put([]byte(fmt.Sprintf("%06d", i)), value(i)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	readAll := func() {
		t.Helper()
		if err := s.db.View(func(tx *bbolt.Tx) error {
			b := tx.Bucket([]byte("mapped_test"))
			for i := range n {
				if v := b.Get([]byte(fmt.Sprintf("%06d", i))); !bytes.Equal(v, value(i)) {
					return fmt.Errorf("value %d: %d bytes, not what was written", i, len(v))
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	readAll()
	before := mappedKB(t, s)
	if before < n*size/1024 {
		t.Fatalf("the mapping holds %d kB after reading %d kB", before, n*size/1024)
	}
	if err := s.ReleaseMapped(); err != nil {
		t.Fatal(err)
	}
	// The store's own background work may fault a few pages back in.
	if after := mappedKB(t, s); after > before/10 {
		t.Fatalf("the mapping holds %d kB after release, %d kB before", after, before)
	}
	readAll()
}
