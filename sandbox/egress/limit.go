package egress

import (
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"
)

// DefaultMaxConnsPerClient is how many connections one source address
// (one sandbox) may hold open at once by default.
const DefaultMaxConnsPerClient = 256

// refusal is written to a connection past its client's cap: a sandbox's
// tool sees why instead of a bare reset.
const refusal = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nConnection: close\r\nContent-Length: 65\r\n\r\nswitchboard egress: too many open connections from this sandbox\n"

// perClient caps the connections each source address holds. A connection
// past the cap is answered and closed at accept, before anything else is
// spent on it (no request read, no client lookup, no upstream dial): one
// sandbox opening thousands of connections cannot take the gateway's file
// descriptors, and the others keep theirs.
type perClient struct {
	net.Listener
	max int
	log *slog.Logger

	mu      sync.Mutex
	open    map[netip.Addr]int
	refused map[netip.Addr]time.Time // last warning, per address
}

func newPerClient(ln net.Listener, max int, log *slog.Logger) *perClient {
	return &perClient{Listener: ln, max: max, log: log, open: map[netip.Addr]int{}, refused: map[netip.Addr]time.Time{}}
}

func (l *perClient) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		addr := sourceAddr(c)
		if l.take(addr) {
			return &countedConn{Conn: c, release: func() { l.release(addr) }}, nil
		}
		// A fresh socket's send buffer is empty: this write does not wait.
		_, _ = c.Write([]byte(refusal))
		_ = c.Close()
	}
}

func (l *perClient) take(addr netip.Addr) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[addr] >= l.max {
		// Warn once a minute per address, not per connection.
		if now := time.Now(); now.Sub(l.refused[addr]) >= time.Minute {
			l.refused[addr] = now
			l.log.Warn("egress connections refused: the sandbox holds too many", "remote_addr", addr.String(), "max", l.max)
		}
		return false
	}
	l.open[addr]++
	return true
}

func (l *perClient) release(addr netip.Addr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[addr]--; l.open[addr] <= 0 {
		delete(l.open, addr)
		delete(l.refused, addr)
	}
}

// sourceAddr is the connection's remote address; connections of a kind
// without one share the zero address.
func sourceAddr(c net.Conn) netip.Addr {
	if ta, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		ap := ta.AddrPort()
		return ap.Addr().Unmap()
	}
	return netip.Addr{}
}

// countedConn gives its slot back once, at its first Close: the server's,
// or the hijacker's for a tunnel.
type countedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
