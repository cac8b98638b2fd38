package mcpbridge

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboardhq/switchboard/core"
)

// Server is one MCP server a session is offered: an External server named
// on the agent or an InProcess one.
type Server interface {
	// ServerName is the <server> of mcp_<server>_<tool>.
	ServerName() string
	// key identifies what the connection was opened to: when it changes
	// (a new agent version, a rebuilt in-process server) the old connection
	// is closed and a new one opened.
	key() string
	// policy is how a tool (by the server's own name) runs.
	policy(tool string) core.Policy
}

// External is an MCP server named on the agent:
// mcpbridge.External(spec).
type External core.MCPServerSpec

// InProcess is an mcp-go server running inside the gateway, as providers
// expose their platform abilities. Keep one Server per session scope and
// pass the same pointer at every cycle: a different pointer is taken as a
// different server, and the connection is reopened.
type InProcess struct {
	Name   string
	Server *server.MCPServer
}

var (
	_ Server = External{}
	_ Server = InProcess{}
)

func (e External) ServerName() string { return e.Name }

func (e External) key() string {
	b, err := json.Marshal(core.MCPServerSpec(e))
	if err != nil {
		// A spec is plain data; this cannot happen, and a constant key only
		// means a changed spec is noticed at the next idle close.
		return "external:" + e.Name
	}
	return "external:" + string(b)
}

// policy fails closed: a policy the agent's validation should have refused
// denies the tool rather than running it unasked.
func (e External) policy(tool string) core.Policy {
	s := e.Policy
	if p, ok := e.ToolPolicies[tool]; ok {
		s = p
	}
	p, err := core.ParsePolicy(s)
	if err != nil {
		return core.PolicyDeny
	}
	return p
}

func (e External) transport() string {
	if e.Transport == "" {
		return core.TransportStreamableHTTP
	}
	return e.Transport
}

func (e External) credential() (id string, ok bool) {
	if e.Auth == nil || e.Auth.VaultCredential == "" {
		return "", false
	}
	return e.Auth.VaultCredential, true
}

func (s InProcess) ServerName() string        { return s.Name }
func (s InProcess) key() string               { return fmt.Sprintf("in_process:%s:%p", s.Name, s.Server) }
func (s InProcess) policy(string) core.Policy { return core.PolicyAllow }

// open makes the client of link l to srv, not yet started; ctx bounds
// resolving a stdio server's credential.
func (p *Pool) open(ctx context.Context, l *link, srv Server, sec *secrets, log *slog.Logger) (*client.Client, error) {
	// The stateful protocol: see the package doc.
	opts := []client.ClientOption{client.WithProtocolVersion(mcp.LATEST_LEGACY_PROTOCOL_VERSION)}
	tlog := slog.New(debugHandler{log.Handler()})
	switch s := srv.(type) {
	case External:
		switch s.transport() {
		case core.TransportStreamableHTTP:
			tr, err := transport.NewStreamableHTTP(s.URL,
				transport.WithHTTPBasicClient(p.httpClient(core.CredentialSessionFrom(ctx), s, sec, log, nil)),
				// The standalone GET stream is where a server sends
				// tools/list_changed between requests. mcp-go deprecates
				// it for protocol 2026-07-28, which this client does not
				// speak yet: the servers it connects to speak the earlier
				// versions, where the GET stream is the way.
				//lint:ignore SA1019 the client speaks the protocol versions before 2026-07-28, where this is the stream
				transport.WithContinuousListening(),
				transport.WithHTTPLogger(tlog))
			if err != nil {
				return nil, fmt.Errorf("streamable http transport: %w", err)
			}
			return client.NewClient(tr, opts...), nil
		case core.TransportSSE:
			tr, err := transport.NewSSE(s.URL,
				transport.WithHTTPClient(p.httpClient(core.CredentialSessionFrom(ctx), s, sec, log, l)),
				transport.WithEndpointTimeout(p.cfg.ConnectTimeout),
				// mcp-go's default of 60s would cut long tool calls: the
				// turn's context bounds a call, as on the other transports.
				transport.WithResponseTimeout(24*time.Hour),
				transport.WithSSELogger(tlog))
			if err != nil {
				return nil, fmt.Errorf("sse transport: %w", err)
			}
			return client.NewClient(tr, opts...), nil
		case core.TransportStdio:
			// Agents stored before the allowlist (or under another) can
			// still name any command: it is refused here too.
			if !p.cfg.StdioAllow.Allows(s.Command) {
				return nil, fmt.Errorf("command %q is not in %s: %w", s.Command, StdioAllowEnv, core.ErrForbidden)
			}
			env, err := p.stdioEnv(ctx, s, sec)
			if err != nil {
				return nil, err
			}
			tr := transport.NewStdioWithOptions(s.Command, env, s.Args,
				transport.WithCommandFunc(stdioCommand(&lineLogger{log: log, sec: sec})),
				transport.WithCommandLogger(tlog))
			return client.NewClient(tr, opts...), nil
		}
		return nil, fmt.Errorf("transport %q: want streamable_http, sse or stdio: %w", s.Transport, core.ErrInvalid)
	}
	return nil, fmt.Errorf("server %T: want External or InProcess: %w", srv, core.ErrInvalid)
}

// httpClient sends the server's vault credential, resolved for session,
// with every request. With
// sse set (the SSE transport) it also watches for the server refusing the
// session.
func (p *Pool) httpClient(session string, s External, sec *secrets, log *slog.Logger, sse *link) *http.Client {
	rt := p.transport
	if id, ok := s.credential(); ok {
		rt = &authTransport{base: rt, creds: p.cfg.Credentials, id: id, session: session, sec: sec, log: log}
	}
	if sse != nil {
		rt = sessionWatch{base: rt, l: sse}
	}
	return &http.Client{Transport: rt}
}

// sessionWatch marks an SSE link broken when the server refuses a message
// for its session (400 or 404): it restarted or dropped the session with
// its stream. Such a message was not acted on, so it is safe to send again
// on a new connection; waiting for the lost stream to be noticed would race
// with the next call.
type sessionWatch struct {
	base http.RoundTripper
	l    *link
}

func (w sessionWatch) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := w.base.RoundTrip(req)
	if err == nil && req.Method == http.MethodPost &&
		(resp.StatusCode == http.StatusBadRequest || resp.StatusCode == http.StatusNotFound) {
		w.l.broken.Store(true)
	}
	return resp, err
}

// stdioEnv is all a stdio server gets of an environment: PATH, the spec's
// variables and the credential, never the gateway's own (which holds model
// keys and the master key).
func (p *Pool) stdioEnv(ctx context.Context, s External, sec *secrets) ([]string, error) {
	env := []string{"PATH=" + os.Getenv("PATH")}
	keys := make([]string, 0, len(s.Env))
	for k := range s.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+s.Env[k])
	}
	if id, ok := s.credential(); ok {
		if p.cfg.Credentials == nil {
			return nil, fmt.Errorf("credential %s: no credential source configured", id)
		}
		tok, err := p.cfg.Credentials.Token(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("credential %s: %w", id, err)
		}
		sec.add(tok)
		// Last, so the spec's variables cannot override it.
		env = append(env, s.Auth.Env+"="+tok)
	}
	return env, nil
}

// stdioCommand builds the server's process with exactly env (mcp-go's
// default would append the gateway's environment) and its stderr going to
// the logger.
func stdioCommand(stderr *lineLogger) transport.CommandFunc {
	return func(ctx context.Context, command string, env, args []string) (*exec.Cmd, error) {
		cmd := exec.CommandContext(ctx, command, args...)
		cmd.Env = env
		cmd.Stderr = stderr
		// A grandchild holding stderr open must not stall Close.
		cmd.WaitDelay = 2 * time.Second
		return cmd, nil
	}
}
