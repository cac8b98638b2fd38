// Package httpserver runs the gateway's HTTP server with the limits that
// keep clients from holding it: a total deadline for reading a request's
// headers and body (set once, not reset per byte, so a trickle is cut) and
// a shorter one for the headers alone, an idle timeout for keep-alive
// connections, a cap on open connections (past it, a connection not in a
// handler makes way for the new one, silent ones first, so sockets that
// never finish a request keep no one out; when all are at work, new ones
// wait in the kernel's backlog, holding no file descriptor), and a
// shutdown that ends event streams first.
//
// The read deadline covers reading the request only (net/http lifts it
// once the body is read), so a handler that works longer is not cut. A
// handler that outlives the request on purpose, an event stream, clears it
// itself through http.ResponseController, not relying on that, and
// watches Draining to end when the server stops.
package httpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/settings"
	"github.com/switchboardhq/switchboard/core/web"
)

// Options are the HTTP server's settings.
func Options() []settings.Option {
	return []settings.Option{
		{Env: "SWITCHBOARD_READ_TIMEOUT_SECONDS", Flag: "read-timeout-seconds", Default: "30", Usage: "longest reading a request's headers and body may take, in all"},
		{Env: "SWITCHBOARD_HEADER_TIMEOUT_SECONDS", Flag: "header-timeout-seconds", Default: "10", Usage: "longest reading a request's headers may take, from the connection's first moment (a silent connection is closed after it)"},
		{Env: "SWITCHBOARD_IDLE_TIMEOUT_SECONDS", Flag: "idle-timeout-seconds", Default: "120", Usage: "close a keep-alive connection idle this long"},
		{Env: "SWITCHBOARD_TRUSTED_PROXIES", Flag: "trusted-proxies", Usage: "addresses and prefixes of the reverse proxies in front of the gateway, comma-separated: only from them is X-Forwarded-For believed for the client's address (failed sign-ins are counted by it)"},
		{Env: "SWITCHBOARD_MAX_CONNECTIONS", Flag: "max-connections", Default: strconv.Itoa(DefaultMaxConnections), Usage: "open HTTP connections at most; past it a connection not in a handler (one that never sent a whole request first, then the longest idle) is closed for the new one, and only when all are at work do more wait to be accepted"},
	}
}

// DefaultMaxConnections leaves room under a common file limit of 4096 for
// the store, the sandboxes and the egress proxy.
const DefaultMaxConnections = 2048

// Config is what a Server runs with.
type Config struct {
	// ReadTimeout bounds reading a request, headers and body together;
	// HeaderTimeout its headers (0: ReadTimeout).
	ReadTimeout   time.Duration
	HeaderTimeout time.Duration
	// IdleTimeout closes keep-alive connections idle this long.
	IdleTimeout time.Duration
	// MaxConnections caps the connections open at once.
	MaxConnections int
	// TrustedProxies are the reverse proxies whose X-Forwarded-For names
	// the client (web.Client).
	TrustedProxies web.TrustedProxies
}

// Load checks the values of Options.
func Load(v settings.Values) (Config, error) {
	var c Config
	var err error
	if c.ReadTimeout, err = v.Duration("SWITCHBOARD_READ_TIMEOUT_SECONDS"); err != nil {
		return c, err
	}
	if c.HeaderTimeout, err = v.Duration("SWITCHBOARD_HEADER_TIMEOUT_SECONDS"); err != nil {
		return c, err
	}
	if c.IdleTimeout, err = v.Duration("SWITCHBOARD_IDLE_TIMEOUT_SECONDS"); err != nil {
		return c, err
	}
	if c.MaxConnections, err = v.Int("SWITCHBOARD_MAX_CONNECTIONS", 1); err != nil {
		return c, err
	}
	if c.TrustedProxies, err = web.ParseTrustedProxies(v["SWITCHBOARD_TRUSTED_PROXIES"]); err != nil {
		return c, fmt.Errorf("SWITCHBOARD_TRUSTED_PROXIES: %w", err)
	}
	return c, nil
}

// shutdownGrace is how long a request still reading its body at shutdown
// has to finish it.
const shutdownGrace = 200 * time.Millisecond

// Server is the gateway's HTTP server.
type Server struct {
	cfg   Config
	srv   *http.Server
	lim   *limitListener // set by Serve, before the first connection
	grace time.Duration  // newConnGrace; tests change it
	drain chan struct{}
	once  sync.Once

	mu      sync.Mutex
	reading map[*http.ResponseController]struct{} // requests reading their body
}

// New serves h with cfg's limits.
func New(cfg Config, h http.Handler, log *slog.Logger) *Server {
	s := &Server{cfg: cfg, grace: newConnGrace, drain: make(chan struct{}), reading: map[*http.ResponseController]struct{}{}}
	// Every request is foreground work (core.Foreground); whatever a
	// handler starts to outlive it derives from another context.
	base := core.Foreground(context.WithValue(context.Background(), drainKey{}, (<-chan struct{})(s.drain)))
	s.srv = &http.Server{
		Handler: s.track(h),
		// ReadTimeout bounds headers and body together, ReadHeaderTimeout
		// the headers alone: a connection that says nothing is closed
		// after it.
		ReadHeaderTimeout: cfg.HeaderTimeout,
		ReadTimeout:       cfg.ReadTimeout,
		IdleTimeout:       cfg.IdleTimeout,
		BaseContext:       func(net.Listener) context.Context { return base },
		ConnContext:       func(ctx context.Context, c net.Conn) context.Context { return context.WithValue(ctx, connKey{}, c) },
		ConnState: func(c net.Conn, st http.ConnState) {
			if s.lim != nil {
				s.lim.connState(c, st)
			}
		},
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	return s
}

// Serve accepts connections on ln, at most Config.MaxConnections open at
// once, until Shutdown.
func (s *Server) Serve(ln net.Listener) error {
	s.lim = newLimitListener(ln, s.cfg.MaxConnections, s.grace)
	err := s.srv.Serve(s.lim)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown stops accepting, tells the event streams to end (they send a
// last comment and return), gives requests still reading their body a
// moment, and waits for the handlers at work until ctx ends; then it
// closes what is left.
func (s *Server) Shutdown(ctx context.Context) error {
	s.once.Do(func() { close(s.drain) })
	s.mu.Lock()
	for rc := range s.reading {
		_ = rc.SetReadDeadline(time.Now().Add(shutdownGrace))
	}
	s.mu.Unlock()
	err := s.srv.Shutdown(ctx)
	if err != nil {
		_ = s.srv.Close()
		return fmt.Errorf("http shutdown: %w", err)
	}
	return nil
}

type drainKey struct{}

// Draining is closed when the server that took the request is shutting
// down; nil (never closed) for a request that came another way.
func Draining(ctx context.Context) <-chan struct{} {
	ch, _ := ctx.Value(drainKey{}).(<-chan struct{})
	return ch
}

// track keeps track of the requests still reading their body, which a
// shutdown cuts short. (net/http itself lifts the read deadline once a
// request is read: it bounds a client sending, not a handler working.)
func (s *Server) track(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.lim != nil {
			defer s.lim.serving(r.Context())()
		}
		r = r.WithContext(web.WithClient(r.Context(), s.cfg.TrustedProxies.ClientOf(r)))
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		s.mu.Lock()
		s.reading[rc] = struct{}{}
		s.mu.Unlock()
		done := func() {
			s.mu.Lock()
			delete(s.reading, rc)
			s.mu.Unlock()
		}
		r.Body = &watchedBody{ReadCloser: r.Body, read: done}
		defer done()
		next.ServeHTTP(w, r)
	})
}

// watchedBody calls read once, when the body has been read to its end.
type watchedBody struct {
	io.ReadCloser
	read func()
	once sync.Once
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) {
		b.once.Do(b.read)
	}
	return n, err
}
