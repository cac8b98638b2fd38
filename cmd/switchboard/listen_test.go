package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestListenWritesTheAddressBound: with port 0 serve listens on a free
// port, writes it to <data dir>/addr in place of an earlier run's, and
// takes it as the default public URL; a public URL that is set stays.
func TestListenWritesTheAddressBound(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "addr")
	if err := os.WriteFile(path, []byte("127.0.0.1:1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := &serveConfig{addr: "127.0.0.1:0", dataDir: dir}
	ln, err := listen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimSpace(string(b))
	if addr != ln.Addr().String() || strings.HasSuffix(addr, ":0") || cfg.publicURL != "http://"+addr {
		t.Fatalf("addr file %q, listening on %s, public URL %q", b, ln.Addr(), cfg.publicURL)
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial the address written: %v", err)
	}
	c.Close()
	if left, _ := filepath.Glob(filepath.Join(dir, ".addr-*")); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}

	cfg = &serveConfig{addr: "127.0.0.1:0", dataDir: t.TempDir(), publicURL: "https://sb.example.com"}
	ln2, err := listen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer ln2.Close()
	if cfg.publicURL != "https://sb.example.com" {
		t.Fatalf("public URL %q replaced", cfg.publicURL)
	}
}
