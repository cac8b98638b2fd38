package egress

import (
	"bufio"
	"net"
	"net/http"

	"github.com/switchboardhq/switchboard/core"
)

// recovering serves h, stopping a panic in the request it serves there:
// logged once with its stack (net/http would log it at debug level
// only), it closes that request's connection, taken over or not, and no
// other; the proxy serves on.
func (p *Proxy) recovering(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hw := &hijackWatch{ResponseWriter: w}
		var err error
		defer func() {
			if err == nil {
				return
			}
			if hw.conn != nil {
				hw.conn.Close()
				return
			}
			// net/http closes the connection and logs nothing more.
			panic(http.ErrAbortHandler)
		}()
		defer core.Recover(p.log, &err, "remote_addr", r.RemoteAddr, "method", r.Method, "host", r.Host)
		h.ServeHTTP(hw, r)
	})
}

// hijackWatch remembers the connection a handler took over, for
// recovering to close.
type hijackWatch struct {
	http.ResponseWriter
	conn net.Conn
}

func (w *hijackWatch) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := w.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, http.ErrNotSupported
	}
	c, brw, err := hj.Hijack()
	w.conn = c
	return c, brw, err
}

// Unwrap lets http.ResponseController reach the server's writer.
func (w *hijackWatch) Unwrap() http.ResponseWriter { return w.ResponseWriter }
