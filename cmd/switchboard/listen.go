package main

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
)

// listen listens on SWITCHBOARD_ADDR, where port 0 takes a free port, and
// writes the address bound (host:port) to <data dir>/addr for whoever
// started serve without knowing it (tests). The public URL, unless set,
// is that address. The file of an earlier run goes first; the new one is
// renamed into place, so a reader never sees a partial address.
func listen(cfg *serveConfig) (net.Listener, error) {
	path := filepath.Join(cfg.dataDir, "addr")
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("remove %s: %w", path, err)
	}
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return nil, fmt.Errorf("SWITCHBOARD_ADDR=%s: %w", cfg.addr, err)
	}
	addr := ln.Addr().String()
	if cfg.publicURL == "" {
		cfg.publicURL = "http://" + addr
	}
	if err := writeFileAtomic(path, addr+"\n"); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}

// writeFileAtomic writes content to path (mode 0600) through a temporary
// file renamed into place, so that a reader never sees part of it.
func writeFileAtomic(path, content string) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	_, err = f.WriteString(content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
