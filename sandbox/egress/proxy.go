package egress

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/netguard"
)

// Policy is where one client may go and with which credentials.
type Policy struct {
	// Hosts are host, host:port or *.domain[:port] patterns; none means
	// nowhere.
	Hosts []string
	// Credentials are vault credential ids, tried in order for each host:
	// the first bound to it is injected.
	Credentials []string
	// Metered are the host patterns whose responses, where a credential is
	// injected, are read for a model's token usage (Config.Meter): an ACP
	// agent's model vendor.
	Metered []string
}

// Client is who a connection comes from.
type Client struct {
	// Session is the session whose sandbox it is; empty for a client that
	// is not one (an image build), whose decisions are only logged.
	Session string
	// Name says who it is in log lines.
	Name   string
	Policy Policy
}

// Clients identifies a connection by its source address.
type Clients interface {
	Client(ctx context.Context, addr netip.Addr) (Client, error)
}

// Config sets up a Proxy.
type Config struct {
	CA      *CA
	Clients Clients
	// Credentials resolves vault credentials; nil injects none.
	Credentials core.CredentialSource
	// RootCAs verify upstream servers; nil means the system's roots.
	RootCAs *x509.CertPool
	// AllowPrivate lets upstreams be loopback, private or link-local
	// addresses (an operator's choice; the tests use it).
	AllowPrivate bool
	// PrivateHosts are host names (or address literals) an upstream may be
	// reached by at any address, a private one included: a self-managed
	// service on the operator's network, allowed by name without opening
	// every private address to every sandbox. An allowlist entry is still
	// needed.
	PrivateHosts []string
	// Record receives each decision made for a session, at most once per
	// key and few seconds (see recorder); it runs on one goroutine of its
	// own, never on a request's.
	Record func(ctx context.Context, sessionID string, body core.EgressBody)
	// Local are hosts the proxy answers itself for sessions' sandboxes,
	// whatever their allowlist, with the handler by host name: over plain
	// HTTP (an absolute URL) or a CONNECT whose TLS it terminates. The
	// request's context names the session (core.SandboxSessionFrom).
	Local map[string]http.Handler
	// Fenced, when set, says why a session's sandbox may no longer reach
	// its metered hosts and the local ones ("" when it may): its turn
	// runs on another replica now, and this replica's agent is a leftover.
	Fenced func(ctx context.Context, sessionID string) string
	// Meter, when set, is told the model usage of each response relayed
	// from a Policy.Metered host, once the response has been read.
	Meter func(sessionID, model string, u core.Usage)
	// DialTimeout bounds connecting upstream (default 10 s).
	DialTimeout time.Duration
	// MaxConnsPerClient is how many connections one source address may
	// hold open; more are refused at accept (default
	// DefaultMaxConnsPerClient).
	MaxConnsPerClient int
	Logger            *slog.Logger
}

// Proxy is the egress proxy. Serve it on a listener the sandboxes reach.
type Proxy struct {
	cfg    Config
	log    *slog.Logger
	dialer *net.Dialer
	// open dials the PrivateHosts, which the dialer's guard would refuse.
	open      *net.Dialer
	transport *http.Transport
	srv       *http.Server
	rec       *recorder

	mu     sync.Mutex
	conns  map[net.Conn]struct{} // hijacked: tunnels and terminated TLS
	checks map[string]chan struct{}
	closed bool
}

// New builds a proxy; nothing listens until Serve.
func New(cfg Config) (*Proxy, error) {
	if cfg.CA == nil || cfg.Clients == nil {
		return nil, errors.New("egress proxy: a CA and a client table are required")
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = 10 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxConnsPerClient <= 0 {
		cfg.MaxConnsPerClient = DefaultMaxConnsPerClient
	}
	d := &net.Dialer{Timeout: cfg.DialTimeout, KeepAlive: 30 * time.Second}
	if !cfg.AllowPrivate {
		d.Control = netguard.DialControl
	}
	p := &Proxy{
		cfg:    cfg,
		log:    cfg.Logger,
		dialer: d,
		open:   &net.Dialer{Timeout: cfg.DialTimeout, KeepAlive: 30 * time.Second},
		conns:  map[net.Conn]struct{}{},
		checks: map[string]chan struct{}{},
		transport: &http.Transport{
			Proxy:                 nil, // the proxy's own upstreams are reached directly
			DialContext:           nil, // set below: it needs p
			TLSClientConfig:       &tls.Config{RootCAs: cfg.RootCAs, MinVersion: tls.VersionTLS12},
			ForceAttemptHTTP2:     true,
			MaxIdleConns:          256,
			MaxIdleConnsPerHost:   16,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   cfg.DialTimeout,
			ExpectContinueTimeout: time.Second,
		},
	}
	p.transport.DialContext = p.dial
	p.rec = newRecorder(cfg.Record, p.log)
	p.srv = &http.Server{
		Handler:           p.recovering(p),
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(p.log.Handler(), slog.LevelDebug),
	}
	return p, nil
}

// dial connects upstream to addr (host:port as the sandbox named it),
// through the address guard unless the host is one of the PrivateHosts.
func (p *Proxy) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if host, _, err := net.SplitHostPort(addr); err == nil && slices.ContainsFunc(p.cfg.PrivateHosts, func(h string) bool { return strings.EqualFold(h, host) }) {
		return p.open.DialContext(ctx, network, addr)
	}
	return p.dialer.DialContext(ctx, network, addr)
}

// Serve answers connections on ln until Close, at most
// Config.MaxConnsPerClient at once from each source address.
func (p *Proxy) Serve(ln net.Listener) error {
	err := p.srv.Serve(newPerClient(ln, p.cfg.MaxConnsPerClient, p.log))
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Close stops the listener, cuts every connection (tunnels included) and
// flushes the decisions not yet recorded.
func (p *Proxy) Close() error {
	err := p.srv.Close()
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.rec.close()
	p.transport.CloseIdleConnections()
	return err
}

// CheckPath is where a direct (non-proxy) request proves that a sandbox
// reaches the proxy: CheckPath + a token from ExpectCheck.
const CheckPath = "/.well-known/switchboard-egress-check/"

// ExpectCheck returns a token and a channel closed when a request for
// CheckPath+token arrives, and a function that forgets the token.
func (p *Proxy) ExpectCheck() (token string, seen <-chan struct{}, done func()) {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	token = hex.EncodeToString(b)
	ch := make(chan struct{})
	p.mu.Lock()
	p.checks[token] = ch
	p.mu.Unlock()
	return token, ch, func() {
		p.mu.Lock()
		delete(p.checks, token)
		p.mu.Unlock()
	}
}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodConnect && !r.URL.IsAbs() {
		p.serveDirect(w, r)
		return
	}
	ctx := r.Context()
	client, err := p.identify(ctx, r.RemoteAddr)
	if err != nil {
		p.log.Warn("egress from an unknown client refused", "remote_addr", r.RemoteAddr, "err", err)
		http.Error(w, "switchboard egress: this address is not a sandbox of this gateway", http.StatusForbidden)
		return
	}
	host, port, err := target(r)
	if err != nil {
		http.Error(w, "switchboard egress: "+err.Error(), http.StatusBadRequest)
		return
	}
	if h := p.cfg.Local[host]; h != nil && client.Session != "" {
		if p.fenced(w, r, client, host, port) {
			return
		}
		p.local(w, r, client, host, port, h)
		return
	}
	if core.HostAllowed(client.Policy.Metered, host, port) && p.fenced(w, r, client, host, port) {
		return
	}
	if !core.HostAllowed(client.Policy.Hosts, host, port) {
		p.decide(client, core.EgressBody{Host: host, Port: port, Method: r.Method, Decision: core.EgressDenied, Reason: "not on the environment's allowlist"})
		http.Error(w, fmt.Sprintf("switchboard egress: %s is not on this sandbox's allowlist", net.JoinHostPort(host, strconv.Itoa(port))), http.StatusForbidden)
		return
	}
	if r.Method == http.MethodConnect {
		p.connect(w, r, client, host, port)
		return
	}
	p.forward(w, r, client, host, port)
}

// serveDirect answers requests made to the proxy itself: the reachability
// check, and a hint for anything else.
func (p *Proxy) serveDirect(w http.ResponseWriter, r *http.Request) {
	if token, ok := strings.CutPrefix(r.URL.Path, CheckPath); ok {
		p.mu.Lock()
		ch := p.checks[token]
		delete(p.checks, token)
		p.mu.Unlock()
		if ch != nil {
			close(ch)
			io.WriteString(w, "ok\n")
			return
		}
	}
	http.Error(w, "switchboard egress proxy: send proxy requests (absolute URLs or CONNECT)", http.StatusBadRequest)
}

func (p *Proxy) identify(ctx context.Context, remote string) (Client, error) {
	ap, err := netip.ParseAddrPort(remote)
	if err != nil {
		return Client{}, fmt.Errorf("remote address %q: %w", remote, err)
	}
	return p.cfg.Clients.Client(ctx, ap.Addr().Unmap())
}

// target is the host (lower case, no brackets) and port a proxy request
// is for.
func target(r *http.Request) (string, int, error) {
	hostport := r.Host
	defPort := "80"
	if r.Method != http.MethodConnect {
		hostport = r.URL.Host
		if r.URL.Scheme == "https" {
			defPort = "443"
		} else if r.URL.Scheme != "http" {
			return "", 0, fmt.Errorf("scheme %q: want http, or CONNECT for anything else", r.URL.Scheme)
		}
	}
	host, portStr, err := net.SplitHostPort(hostport)
	if err != nil {
		if r.Method == http.MethodConnect {
			return "", 0, fmt.Errorf("CONNECT %q: want host:port", hostport)
		}
		host, portStr = strings.Trim(hostport, "[]"), defPort
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 1 || port > 65535 || host == "" {
		return "", 0, fmt.Errorf("target %q: want host:port", hostport)
	}
	return strings.TrimSuffix(strings.ToLower(host), "."), port, nil
}

// fenced refuses a request of a session whose turn another replica runs
// now, and reports whether it did.
func (p *Proxy) fenced(w http.ResponseWriter, r *http.Request, c Client, host string, port int) bool {
	if p.cfg.Fenced == nil || c.Session == "" {
		return false
	}
	why := p.cfg.Fenced(r.Context(), c.Session)
	if why == "" {
		return false
	}
	p.decide(c, core.EgressBody{Host: host, Port: port, Method: r.Method, Decision: core.EgressDenied, Reason: why})
	http.Error(w, "switchboard egress: "+why, http.StatusForbidden)
	return true
}

// decide records a decision and logs it.
func (p *Proxy) decide(c Client, b core.EgressBody) {
	p.log.Debug("egress", "client", c.Name, "session_id", c.Session, "host", b.Host, "port", b.Port, "method", b.Method, "decision", b.Decision, "reason", b.Reason, "credential_id", b.CredentialID)
	if c.Session != "" {
		p.rec.add(c.Session, b)
	}
}

// credentialFor returns the first of the client's credentials bound to
// host:port that its session may use, or "". When every one bound there
// belongs to another tenant than the session's, the first is returned
// with its refusal.
func (p *Proxy) credentialFor(ctx context.Context, c Client, hostport string) (string, *core.ScopeError) {
	if p.cfg.Credentials == nil {
		return "", nil
	}
	ctx = credentialContext(ctx, c)
	var refused *core.ScopeError
	for _, id := range c.Policy.Credentials {
		_, _, err := p.cfg.Credentials.Header(ctx, id, hostport)
		if err == nil {
			return id, nil
		}
		if se := (*core.ScopeError)(nil); errors.As(err, &se) {
			if refused == nil {
				refused = se
			}
			continue
		}
		if !errors.Is(err, core.ErrForbidden) {
			// Deleted, or unreadable: the request goes on without it.
			p.log.Warn("egress credential unusable", "client", c.Name, "credential_id", id, "err", err)
		}
	}
	if refused != nil {
		return refused.Credential, refused
	}
	return "", nil
}

// credentialContext names, for the credential source, the session the
// client's credentials are resolved for: a scoped credential is used only
// for a session of its owner.
func credentialContext(ctx context.Context, c Client) context.Context {
	if c.Session == "" {
		return ctx
	}
	return core.WithCredentialSession(ctx, c.Session)
}

// outOfScope refuses a request toward a host whose credential belongs to
// another tenant than the client's session, saying whose it is.
func (p *Proxy) outOfScope(w http.ResponseWriter, c Client, b core.EgressBody, se *core.ScopeError) {
	b.Decision, b.CredentialID = core.EgressDenied, se.Credential
	b.Reason = "credential " + se.Credential + " is scoped to " + se.Scope.String() + ", not this session's tenant"
	p.decide(c, b)
	p.log.Warn("egress credential out of scope", "client", c.Name, "credential_id", se.Credential, "err", se)
	http.Error(w, "switchboard egress: "+se.Error(), http.StatusForbidden)
}

// upstreamFailed answers a dial or round-trip failure: 403 for a refused
// address (a decision), 502 for anything else.
func (p *Proxy) upstreamFailed(w http.ResponseWriter, c Client, b core.EgressBody, err error) {
	if errors.Is(err, netguard.ErrRefusedAddress) {
		b.Decision, b.Reason = core.EgressDenied, "refused upstream address: "+refusedWhy(err)
		p.decide(c, b)
		http.Error(w, "switchboard egress: "+b.Reason, http.StatusForbidden)
		return
	}
	b.Decision, b.Reason = core.EgressAllowed, "upstream unreachable"
	p.decide(c, b)
	p.log.Info("egress upstream unreachable", "client", c.Name, "host", b.Host, "port", b.Port, "err", err)
	http.Error(w, "switchboard egress: upstream unreachable", http.StatusBadGateway)
}

// refusedWhy keeps the guard's own words ("10.0.0.1 is a private address").
func refusedWhy(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "+netguard.ErrRefusedAddress.Error()); i >= 0 {
		msg = msg[:i]
	}
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	return msg
}
