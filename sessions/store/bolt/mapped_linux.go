package bolt

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"go.etcd.io/bbolt"
)

// ReleaseMapped takes the pages of the database file that reads have
// faulted into the process's memory map out of its resident set. bbolt
// reads through a shared, read-only mapping of the whole file, so every
// page a read touched stays counted in the process's RSS until the map is
// redone (the file outgrew it): after many sessions, most of the file.
// The pages stay in the kernel's page cache; a later read maps its page
// again without reading the disk. Meant for a quiet moment (core/memtrim).
// Elsewhere than Linux (mapped_other.go) it does nothing.
func (s *Store) ReleaseMapped() error {
	// A read transaction holds bbolt's map lock: the file cannot be
	// mapped anew (and the range given to another mapping) meanwhile.
	return s.db.View(func(*bbolt.Tx) error {
		base := s.db.Info().Data
		size, err := mappingSize(base)
		if err != nil || size == 0 {
			return err
		}
		if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, base, size, syscall.MADV_DONTNEED); errno != 0 {
			return fmt.Errorf("release the mapped database: %w", errno)
		}
		return nil
	})
}

// mappingSize is the length of the mapping of this process that starts
// at base (/proc/self/maps); 0 without a /proc to read.
func mappingSize(base uintptr) (uintptr, error) {
	f, err := os.Open("/proc/self/maps")
	if os.IsNotExist(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("find the mapped database: %w", err)
	}
	defer f.Close()
	want := strconv.FormatUint(uint64(base), 16)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rng, _, _ := strings.Cut(sc.Text(), " ")
		start, end, ok := strings.Cut(rng, "-")
		if !ok || start != want {
			continue
		}
		e, err := strconv.ParseUint(end, 16, 64)
		if err != nil {
			return 0, fmt.Errorf("find the mapped database: %q: %w", rng, err)
		}
		return uintptr(e) - base, nil
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("find the mapped database: %w", err)
	}
	return 0, fmt.Errorf("find the mapped database: no mapping at %#x", base)
}
