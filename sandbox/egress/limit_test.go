package egress

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// twoClients identifies 127.0.0.1 and 127.0.0.2 as two sessions'
// sandboxes, and counts the lookups.
type twoClients struct {
	policy  Policy
	lookups atomic.Int64
}

func (c *twoClients) Client(_ context.Context, a netip.Addr) (Client, error) {
	c.lookups.Add(1)
	switch a {
	case netip.MustParseAddr("127.0.0.1"):
		return Client{Session: "ses_a", Name: "ses_a", Policy: c.policy}, nil
	case netip.MustParseAddr("127.0.0.2"):
		return Client{Session: "ses_b", Name: "ses_b", Policy: c.policy}, nil
	}
	return Client{}, fmt.Errorf("%s is no sandbox", a)
}

// echoUpstream is a TCP server that echoes, counting the connections it
// accepted.
func echoUpstream(t *testing.T) (addr string, accepted *atomic.Int64) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	accepted = &atomic.Int64{}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	return ln.Addr().String(), accepted
}

// TestOneSandboxCannotExhaustTheProxy: past its cap, a sandbox's new
// connections are refused at accept (no lookup, no upstream dial), and
// another sandbox is served as before.
func TestOneSandboxCannotExhaustTheProxy(t *testing.T) {
	const max, flood = 50, 5000
	up, accepted := echoUpstream(t)
	ca, err := LoadOrCreateCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	clients := &twoClients{policy: Policy{Hosts: []string{up}}}
	p, err := New(Config{CA: ca, Clients: clients, AllowPrivate: true, MaxConnsPerClient: max})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go p.Serve(ln)
	t.Cleanup(func() { p.Close() })
	proxy := ln.Addr().String()

	var mu sync.Mutex
	var held []net.Conn
	t.Cleanup(func() {
		for _, c := range held {
			c.Close()
		}
	})
	// connect opens a tunnel from src and returns the proxy's status.
	connect := func(src string) (int, net.Conn) {
		t.Helper()
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 10 * time.Second}
		c, err := d.Dial("tcp", proxy)
		if err != nil {
			t.Fatalf("dial from %s: %v", src, err)
		}
		mu.Lock()
		held = append(held, c)
		mu.Unlock()
		fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", up, up)
		resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: http.MethodConnect})
		if err != nil {
			return 0, c
		}
		resp.Body.Close()
		return resp.StatusCode, c
	}

	for i := range max {
		if code, _ := connect("127.0.0.1"); code != 200 {
			t.Fatalf("tunnel %d under the cap: status %d", i, code)
		}
	}
	// The upstream counts its accepts on its own goroutine.
	for deadline := time.Now().Add(30 * time.Second); accepted.Load() < max; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("upstream accepted %d of %d tunnels", accepted.Load(), max)
		}
	}
	lookups := clients.lookups.Load()
	for i := range flood {
		if code, _ := connect("127.0.0.1"); code != http.StatusServiceUnavailable {
			t.Fatalf("connection %d past the cap: status %d, want 503", i+1, code)
		}
	}
	if n := clients.lookups.Load() - lookups; n != 0 {
		t.Errorf("%d client lookups for refused connections", n)
	}

	// Another sandbox is served while the first is at its cap.
	code, c := connect("127.0.0.2")
	if code != 200 {
		t.Fatalf("the other sandbox's tunnel: status %d", code)
	}
	fmt.Fprint(c, "ping\n")
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || line != "ping\n" {
		t.Fatalf("the other sandbox's tunnel echoed %q, %v", line, err)
	}
	if n := accepted.Load(); n != max+1 {
		t.Errorf("upstream accepted %d connections, want %d: refused ones were dialed", n, max+1)
	}

	// A closed tunnel gives its slot back.
	mu.Lock()
	held[0].Close()
	mu.Unlock()
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, _ := connect("127.0.0.1")
		if code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no slot given back after a tunnel closed: status %d", code)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
