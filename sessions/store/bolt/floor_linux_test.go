package bolt

import (
	"os"
	"syscall"
)

// datasync flushes f's data without its metadata, as bbolt does on Linux.
func datasync(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }
