package mcpbridge

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// Config configures a Pool.
type Config struct {
	// Credentials resolves the vault credentials external servers name;
	// nil is fine when none does.
	Credentials core.CredentialSource
	// IdleTimeout is how long an idle session keeps its connections
	// (default 5m).
	IdleTimeout time.Duration
	// ConnectTimeout bounds connecting to and initializing a server, and
	// the SSE endpoint handshake (default 15s).
	ConnectTimeout time.Duration
	Logger         *slog.Logger
	// ClientInfo is how the gateway introduces itself to servers (default
	// switchboard, dev).
	ClientInfo ClientInfo
	// Transport carries the HTTP requests to servers (default a clone of
	// http.DefaultTransport).
	Transport http.RoundTripper
	// AfterFunc starts an idle timer: f runs after d unless the timer is
	// stopped first (default time.AfterFunc; tests fire timers themselves).
	AfterFunc func(d time.Duration, f func()) Timer
	// StdioAllow lists the executables stdio servers may run; a server
	// naming another is not started (the zero value allows none).
	StdioAllow StdioAllow
}

// Timer is a started idle timer (*time.Timer is one).
type Timer interface{ Stop() bool }

// ClientInfo is the MCP client implementation name and version.
type ClientInfo struct {
	Name    string
	Version string
}

// Entry is one tool to add to a session's registry, with its policy.
// Denied tools are returned with core.PolicyDeny: the registry keeps their
// names taken and never offers them.
type Entry struct {
	Tool   core.Tool
	Policy core.Policy
}

// Pool holds the MCP connections of every session of the process.
type Pool struct {
	cfg       Config
	log       *slog.Logger
	transport http.RoundTripper
	// life is the parent of every connection's context: Shutdown ends it.
	life context.Context
	stop context.CancelFunc

	mu       sync.Mutex
	sessions map[string]*session
	shut     bool
}

// session is one session's connections, by server name.
type session struct {
	id    string
	mu    sync.Mutex // serialises Tools; guards conns, offered and entries
	conns map[string]*conn
	// offered and entries are what Tools returned last.
	offered []offered
	entries []Entry
	// Guarded by Pool.mu: the idle timer, its generation (a timer that
	// fires after Tools took the session back must not close it), and how
	// many Tools calls are using the session.
	timer  Timer
	gen    uint64
	active int
}

// ErrShutdown is returned by Tools after Shutdown.
var ErrShutdown = errors.New("mcp bridge is shut down")

// New returns a pool.
func New(cfg Config) *Pool {
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 5 * time.Minute
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = 15 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.AfterFunc == nil {
		cfg.AfterFunc = func(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }
	}
	if cfg.ClientInfo.Name == "" {
		cfg.ClientInfo = ClientInfo{Name: "switchboard", Version: "dev"}
	}
	tr := cfg.Transport
	if tr == nil {
		tr = http.DefaultTransport.(*http.Transport).Clone()
	}
	life, stop := context.WithCancel(context.Background())
	return &Pool{
		cfg:       cfg,
		log:       cfg.Logger,
		transport: staleRetry{base: tr},
		life:      life,
		stop:      stop,
		sessions:  map[string]*session{},
	}
}

// Tools connects to the session's servers as needed and returns their
// tools. A server that cannot be reached is logged and skipped, still
// offering the tools it listed before (their calls fail as tool errors),
// so Tools fails only after Shutdown. Servers are offered in the order
// given; a later server with a name already used is skipped. Tools stops
// the session's idle timer.
func (p *Pool) Tools(ctx context.Context, sessionID string, servers []Server) ([]Entry, error) {
	if len(servers) == 0 {
		// Nothing to hold for a session without MCP servers.
		p.Close(sessionID)
		if p.isShut() {
			return nil, ErrShutdown
		}
		return nil, nil
	}
	s, err := p.acquire(sessionID)
	if err != nil {
		return nil, err
	}
	defer p.release(s)
	s.mu.Lock()
	defer s.mu.Unlock()

	wanted := map[string]Server{}
	var order []Server
	for _, srv := range servers {
		name := srv.ServerName()
		if _, dup := wanted[name]; dup {
			p.log.Warn("mcp server name used twice; skipping the later one", "session_id", sessionID, "mcp_server", name)
			continue
		}
		wanted[name] = srv
		order = append(order, srv)
	}
	// Servers no longer named, or named differently (a new agent version),
	// are closed.
	for name, c := range s.conns {
		if srv, ok := wanted[name]; !ok || srv.key() != c.key {
			delete(s.conns, name)
			c.retire()
		}
	}
	for _, srv := range order {
		if s.conns[srv.ServerName()] == nil {
			s.conns[srv.ServerName()] = p.newConn(sessionID, srv)
		}
	}

	listed := make([][]remoteTool, len(order))
	offer := make([]offered, len(order))
	refresh := func(i int, c *conn) {
		tools, n, err := c.refresh(ctx)
		if err != nil && ctx.Err() == nil {
			c.log.Warn("mcp server unavailable; offering its last known tools", "tools", len(tools), "err", c.sec.redact(err.Error()))
		}
		listed[i], offer[i] = tools, offered{c: c, listing: n}
	}
	if len(order) == 1 {
		refresh(0, s.conns[order[0].ServerName()])
	} else {
		// Side by side: one slow server costs one connect timeout, not
		// one per server.
		var wg sync.WaitGroup
		for i, srv := range order {
			c := s.conns[srv.ServerName()]
			wg.Go(func() { refresh(i, c) })
		}
		wg.Wait()
	}
	if slices.Equal(offer, s.offered) {
		return slices.Clone(s.entries), nil
	}

	var entries []Entry
	var names namer
	for i, srv := range order {
		c := s.conns[srv.ServerName()]
		for _, rt := range listed[i] {
			if rt.Name == "" {
				continue
			}
			name := names.name(srv.ServerName(), rt.Name)
			if err := core.ValidToolName(name); err != nil {
				c.log.Warn("mcp tool skipped: no valid name", "tool", rt.Name, "err", err)
				continue
			}
			entries = append(entries, Entry{Tool: newTool(c, name, rt), Policy: srv.policy(rt.Name)})
		}
	}
	s.offered, s.entries = offer, entries
	return slices.Clone(entries), nil
}

// offered is a connection and the listing of it whose tools a session was
// offered: while every one is the same, so are the entries.
type offered struct {
	c       *conn
	listing uint64
}

func (p *Pool) newConn(sessionID string, srv Server) *conn {
	return &conn{
		p:       p,
		srv:     srv,
		session: sessionID,
		key:     srv.key(),
		log:     p.log.With("session_id", sessionID, "mcp_server", srv.ServerName()),
		sec:     &secrets{},
	}
}

// acquire finds or creates the session and takes it off its idle timer.
func (p *Pool) acquire(id string) (*session, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shut {
		return nil, ErrShutdown
	}
	s := p.sessions[id]
	if s == nil {
		s = &session{id: id, conns: map[string]*conn{}}
		p.sessions[id] = s
	}
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	s.gen++
	s.active++
	return s, nil
}

func (p *Pool) isShut() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.shut
}

func (p *Pool) release(s *session) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s.active--
}

// Idle starts the session's idle timer: unless Tools is called first, its
// connections are closed after IdleTimeout and the pool forgets it. The
// timer is a time.AfterFunc (Config.AfterFunc), so an idle session holds
// no goroutine.
func (p *Pool) Idle(sessionID string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.sessions[sessionID]
	if s == nil {
		return
	}
	if s.timer != nil {
		s.timer.Stop()
	}
	s.gen++
	gen := s.gen
	s.timer = p.cfg.AfterFunc(p.cfg.IdleTimeout, func() { p.expire(sessionID, s, gen) })
}

// expire closes a session whose idle timer ran out, unless it was taken
// back meanwhile.
func (p *Pool) expire(id string, s *session, gen uint64) {
	p.mu.Lock()
	if p.sessions[id] != s || s.gen != gen || s.active > 0 {
		p.mu.Unlock()
		return
	}
	delete(p.sessions, id)
	p.mu.Unlock()
	p.log.Debug("mcp connections closed: session idle", "session_id", id)
	s.closeAll()
	p.closeIdleHTTP()
}

// closeIdleHTTP drops kept-alive HTTP connections, each of which holds
// goroutines: a hibernating session must not leave any behind. Other
// sessions' streams are busy, not idle, and are not touched.
func (p *Pool) closeIdleHTTP() {
	if t, ok := p.transport.(interface{ CloseIdleConnections() }); ok {
		t.CloseIdleConnections()
	}
}

// Close closes the session's connections now (the session was archived).
func (p *Pool) Close(sessionID string) {
	p.mu.Lock()
	s := p.sessions[sessionID]
	if s != nil {
		delete(p.sessions, sessionID)
		if s.timer != nil {
			s.timer.Stop()
		}
	}
	p.mu.Unlock()
	if s != nil {
		s.closeAll()
		p.closeIdleHTTP()
	}
}

// Shutdown closes every connection; Tools fails afterwards.
func (p *Pool) Shutdown() {
	p.mu.Lock()
	p.shut = true
	all := p.sessions
	p.sessions = map[string]*session{}
	for _, s := range all {
		if s.timer != nil {
			s.timer.Stop()
		}
	}
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range all {
		wg.Go(s.closeAll)
	}
	wg.Wait()
	p.stop()
	p.closeIdleHTTP()
}

// closeAll retires the session's connections. Tools still running on it
// (there should be none) finish against retired conns.
func (s *session) closeAll() {
	s.mu.Lock()
	conns := s.conns
	s.conns = map[string]*conn{}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(c.retire)
	}
	wg.Wait()
}
