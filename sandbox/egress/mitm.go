package egress

import (
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"strconv"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/usage"
)

// terminate answers a CONNECT to a host a credential is bound to, then
// serves the client's requests itself over TLS, with a certificate for the
// host from the deployment's CA, injecting the credential into each.
func (p *Proxy) terminate(w http.ResponseWriter, c Client, host string, port int, cred string) {
	p.serveTLS(w, host, p.injector(c, host, port, cred))
}

// local serves a request for a host the gateway answers itself: plain,
// or over TLS the proxy terminates.
func (p *Proxy) local(w http.ResponseWriter, r *http.Request, c Client, host string, port int, h http.Handler) {
	p.decide(c, core.EgressBody{Host: host, Port: port, Method: r.Method, Decision: core.EgressAllowed, Reason: "served by the gateway"})
	served := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(core.WithSandboxSession(r.Context(), c.Session)))
	})
	if r.Method == http.MethodConnect {
		p.serveTLS(w, host, served)
		return
	}
	served.ServeHTTP(w, r)
}

// serveTLS answers a CONNECT, then serves the client's requests over TLS
// with h, with a certificate for host from the deployment's CA.
func (p *Proxy) serveTLS(w http.ResponseWriter, host string, h http.Handler) {
	conn := p.hijack(w)
	if conn == nil {
		return
	}
	if _, err := io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		p.untrack(conn)
		return
	}
	tlsConn := tls.Server(conn, &tls.Config{
		// Whatever name the client asks for, it gets the CONNECT's host:
		// that is where its requests go.
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return p.cfg.CA.Leaf(host) },
		NextProtos:     []string{"http/1.1"},
		MinVersion:     tls.VersionTLS12,
	})
	srv := &http.Server{
		Handler:           p.recovering(h),
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(p.log.Handler(), slog.LevelDebug),
	}
	go func() {
		defer p.untrack(conn)
		defer core.Recover(p.log, nil, "host", host)
		_ = srv.Serve(newOneConnListener(tlsConn))
	}()
}

// injector forwards each request of a terminated tunnel to host:port with
// the credential in place of whatever authentication the sandbox sent.
func (p *Proxy) injector(c Client, host string, port int, cred string) http.Handler {
	hostport := net.JoinHostPort(host, strconv.Itoa(port))
	authority := hostport
	if port == 443 {
		authority = host
	}
	metered := core.HostAllowed(c.Policy.Metered, host, port)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A tunnel opened before the session moved away is fenced too.
		if metered && p.fenced(w, r, c, host, port) {
			return
		}
		b := core.EgressBody{Host: host, Port: port, Method: r.Method, CredentialID: cred}
		// Resolved per request: an oauth token refreshed meanwhile is used.
		name, value, err := p.cfg.Credentials.Header(credentialContext(r.Context(), c), cred, hostport)
		if se := (*core.ScopeError)(nil); errors.As(err, &se) {
			// Rescoped since the tunnel opened.
			p.outOfScope(w, c, b, se)
			return
		}
		if err != nil {
			b.Decision, b.Reason = core.EgressDenied, "the credential could not be resolved"
			p.decide(c, b)
			p.log.Warn("egress credential unusable", "client", c.Name, "credential_id", cred, "err", err)
			http.Error(w, "switchboard egress: the credential bound to this host could not be resolved", http.StatusBadGateway)
			return
		}
		rp := &httputil.ReverseProxy{
			Rewrite: func(pr *httputil.ProxyRequest) {
				pr.Out.URL.Scheme, pr.Out.URL.Host, pr.Out.Host = "https", authority, authority
				// The sandbox's own credentials never reach the upstream
				// beside (or instead of) the vault's.
				pr.Out.Header.Del("Authorization")
				pr.Out.Header.Del("Proxy-Authorization")
				pr.Out.Header.Del(name)
				pr.Out.Header.Set(name, value)
			},
			Transport: p.transport,
			ModifyResponse: func(resp *http.Response) error {
				b.Decision = core.EgressInjected
				p.decide(c, b)
				if p.cfg.Meter != nil && c.Session != "" && metered {
					resp.Body = usage.Meter(resp.Body, resp.Header.Get("Content-Type"), func(model string, u core.Usage) {
						p.cfg.Meter(c.Session, model, u)
					})
				}
				return nil
			},
			ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) { p.upstreamFailed(w, c, b, err) },
			ErrorLog:     slog.NewLogLogger(p.log.Handler(), slog.LevelDebug),
		}
		rp.ServeHTTP(w, r)
	})
}

// forward passes a plain proxy request (an absolute URL) on as is: a
// credential is never injected where it would travel in clear text.
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request, c Client, host string, port int) {
	b := core.EgressBody{Host: host, Port: port, Method: r.Method}
	rp := &httputil.ReverseProxy{
		// The absolute URL is the target; hop-by-hop headers (the
		// Proxy-* ones among them) are already gone.
		Rewrite:   func(*httputil.ProxyRequest) {},
		Transport: p.transport,
		ModifyResponse: func(*http.Response) error {
			b.Decision = core.EgressAllowed
			p.decide(c, b)
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) { p.upstreamFailed(w, c, b, err) },
		ErrorLog:     slog.NewLogLogger(p.log.Handler(), slog.LevelDebug),
	}
	rp.ServeHTTP(w, r)
}

// oneConnListener hands one connection to an http.Server, then blocks
// until that connection is closed, so Serve returns when it is done.
type oneConnListener struct {
	conn net.Conn
	once sync.Once
	done chan struct{}
}

func newOneConnListener(c net.Conn) *oneConnListener {
	return &oneConnListener{conn: c, done: make(chan struct{})}
}

func (l *oneConnListener) Accept() (net.Conn, error) {
	var c net.Conn
	l.once.Do(func() { c = &notifyConn{Conn: l.conn, done: l.done} })
	if c != nil {
		return c, nil
	}
	<-l.done
	return nil, net.ErrClosed
}

func (l *oneConnListener) Close() error   { return nil }
func (l *oneConnListener) Addr() net.Addr { return l.conn.LocalAddr() }

// notifyConn closes done when the server closes the connection.
type notifyConn struct {
	net.Conn
	once sync.Once
	done chan struct{}
}

func (c *notifyConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { close(c.done) })
	return err
}
