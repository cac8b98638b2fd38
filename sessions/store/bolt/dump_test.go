package bolt

import (
	"errors"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/dump"
)

// TestDumpCoversBuckets: every bucket is dumped or said to be left out,
// and no bucket is both.
func TestDumpCoversBuckets(t *testing.T) {
	for _, b := range allBuckets {
		in, out := slices.Contains(dumped, b), undumped[b] != ""
		if in == out {
			t.Errorf("bucket %s: dumped %v, left out %v: want exactly one", b, in, out)
		}
	}
	for _, b := range append(slices.Clone(dumped), slices.Collect(maps.Keys(undumped))...) {
		if !slices.Contains(allBuckets, b) {
			t.Errorf("bucket %s is listed but not a bucket", b)
		}
	}
}

// TestOpenReadOnly: a read-only open needs an existing file, waits for no
// writer (a serving process holds the file: ErrLocked), shares the file
// with other readers, dumps, and refuses writes.
func TestOpenReadOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "switchboard.db")
	ro := Options{ReadOnly: true, LockTimeout: 50 * time.Millisecond}
	if _, err := Open(path, ro); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("read-only open of no file = %v, want ErrNotExist", err)
	}
	w, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.CreateAgent(t.Context(), &core.Agent{Name: "a", Model: "anthropic/x", System: "s"}); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path, ro); !errors.Is(err, core.ErrLocked) {
		t.Fatalf("read-only open beside a writer = %v, want ErrLocked", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r1, err := Open(path, ro)
	if err != nil {
		t.Fatal(err)
	}
	defer r1.Close()
	r2, err := Open(path, ro)
	if err != nil {
		t.Fatalf("a second reader: %v", err)
	}
	defer r2.Close()
	var kinds []string
	if err := r2.Dump(t.Context(), func(r dump.Record) error { kinds = append(kinds, r.Kind()); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(kinds, []string{"agents", "agent versions"}) {
		t.Fatalf("dumped %v", kinds)
	}
	if _, err := r1.CreateAgent(t.Context(), &core.Agent{Name: "b", Model: "anthropic/x", System: "s"}); err == nil {
		t.Fatal("a read-only store wrote")
	}
}
