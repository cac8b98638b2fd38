package egress

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// connect tunnels an allowed CONNECT, or terminates it when a credential
// is bound to the host.
func (p *Proxy) connect(w http.ResponseWriter, r *http.Request, c Client, host string, port int) {
	hostport := net.JoinHostPort(host, strconv.Itoa(port))
	cred, se := p.credentialFor(r.Context(), c, hostport)
	if se != nil {
		p.outOfScope(w, c, core.EgressBody{Host: host, Port: port, Method: r.Method}, se)
		return
	}
	if cred != "" {
		p.terminate(w, c, host, port, cred)
		return
	}
	up, err := p.dial(r.Context(), "tcp", hostport)
	if err != nil {
		p.upstreamFailed(w, c, core.EgressBody{Host: host, Port: port, Method: r.Method}, err)
		return
	}
	conn := p.hijack(w)
	if conn == nil {
		up.Close()
		return
	}
	p.decide(c, core.EgressBody{Host: host, Port: port, Method: r.Method, Decision: core.EgressAllowed})
	if _, err := io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		conn.Close()
		up.Close()
		return
	}
	p.track(up)
	go p.pipe(conn, up)
}

// hijack takes the client connection over, tracked so that Close cuts it.
func (p *Proxy) hijack(w http.ResponseWriter) net.Conn {
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "switchboard egress: cannot tunnel", http.StatusInternalServerError)
		return nil
	}
	raw, brw, err := hj.Hijack()
	if err != nil {
		return nil
	}
	// The server's header deadline must not cut a long tunnel.
	_ = raw.SetDeadline(time.Time{})
	var conn net.Conn = raw
	if brw.Reader.Buffered() > 0 {
		// A client that sent its first bytes (a TLS hello) without
		// waiting for the 200: they are in the server's buffer.
		conn = &bufferedConn{Conn: raw, r: brw.Reader}
	}
	if !p.track(conn) {
		return nil
	}
	return conn
}

// bufferedConn reads what the server had buffered before the connection.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

func (c *bufferedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Conn.Close()
}

// track registers a connection for Close; false (and the connection
// closed) when the proxy is closing.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	c.Close()
}

// pipe copies both ways until both directions end. A panic breaks this
// tunnel only.
func (p *Proxy) pipe(a, b net.Conn) {
	defer p.untrack(a)
	defer p.untrack(b)
	defer core.Recover(p.log, nil, "remote_addr", a.RemoteAddr().String())
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		// A broken direction (a panic too) breaks the tunnel.
		broken := true
		defer func() {
			if broken {
				a.Close()
				b.Close()
			}
			done <- struct{}{}
		}()
		defer core.Recover(p.log, nil, "remote_addr", a.RemoteAddr().String())
		_, err := io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok && err == nil {
			// Half-close, so the other side sees the end of this direction.
			_ = cw.CloseWrite()
			broken = false
		}
	}
	go cp(a, b)
	go cp(b, a)
	<-done
	<-done
}
