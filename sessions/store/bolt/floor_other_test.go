//go:build !linux

package bolt

import "os"

// datasync is a full sync where fdatasync is not available.
func datasync(f *os.File) error { return f.Sync() }
