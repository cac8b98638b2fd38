//go:build !linux

package bolt

// ReleaseMapped does nothing here; on Linux (mapped_linux.go) it takes the
// database file's mapped pages out of the process's resident set.
func (s *Store) ReleaseMapped() error { return nil }
