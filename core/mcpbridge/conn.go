package mcpbridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/switchboardhq/switchboard/core"
)

// conn is a session's connection to one server. It outlives the MCP
// client it holds (link): a link that fails is dropped and the next use
// opens another, while the tools last listed stay offered.
type conn struct {
	p   *Pool
	srv Server
	key string
	log *slog.Logger
	sec *secrets
	// session is the session the conn serves, whose tenancy its vault
	// credential is resolved for.
	session string

	mu    sync.Mutex // held while connecting and listing, never during a call
	link  *link
	tools []remoteTool
	// listed counts the listings that replaced tools, so a caller can
	// tell that the tools it was given last are still the ones offered.
	listed  uint64
	retired bool // the session closed: never connect again
}

// link is one initialized MCP client, or an in-process server's client
// session (local).
type link struct {
	client *client.Client
	local  *local
	cancel context.CancelFunc
	// stale is set by the notification handler, which runs on the
	// transport's reader and so must not take conn.mu.
	stale atomic.Bool
	// broken is set when an SSE stream is lost: responses would never come.
	broken atomic.Bool
	once   sync.Once
}

func (l *link) close(log *slog.Logger) {
	l.once.Do(func() {
		if l.local != nil {
			l.local.detach()
			return
		}
		if err := l.client.Close(); err != nil {
			log.Debug("close mcp client", "err", err)
		}
		l.cancel()
	})
}

// send sends one request and returns its answer.
func (l *link) send(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	if l.local != nil {
		return l.local.send(ctx, req)
	}
	return l.client.GetTransport().SendRequest(ctx, req)
}

// callTool runs tools/call.
func (l *link) callTool(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if l.local != nil {
		return l.local.callTool(ctx, req)
	}
	return l.client.CallTool(ctx, req)
}

// listsTools reports whether the server said it has tools. An in-process
// server is asked: without the handshake there is nothing it said.
func (l *link) listsTools() bool {
	return l.local != nil || l.client.GetServerCapabilities().Tools != nil
}

// remoteTool is a tool as the server listed it, its schema untouched.
type remoteTool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
	Annotations struct {
		Title string `json:"title,omitempty"`
	} `json:"annotations"`
}

var errRetired = errors.New("connection closed with the session")

// refresh makes sure the conn is connected and its tool list current, and
// returns the tools to offer, the last ones listed even when it fails, and
// which listing they are.
func (c *conn) refresh(ctx context.Context) ([]remoteTool, uint64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.upToDate() {
		return c.tools, c.listed, nil
	}
	// A server that accepts the connection and never answers must not
	// hold up the cycle.
	ctx, cancel := context.WithTimeout(ctx, c.p.cfg.ConnectTimeout)
	defer cancel()
	var err error
	// A server that restarted has forgotten our session: one fresh
	// connection is tried before giving up.
	for attempt := 0; attempt < 2; attempt++ {
		var l *link
		if l, err = c.linkLocked(ctx); err != nil {
			return c.tools, c.listed, err
		}
		if !l.stale.Load() {
			return c.tools, c.listed, nil
		}
		// Cleared before listing, so a change announced meanwhile is
		// listed next time.
		l.stale.Store(false)
		var tools []remoteTool
		if tools, err = c.list(ctx, l); err == nil {
			c.tools = tools
			c.listed++
			return tools, c.listed, nil
		}
		l.stale.Store(true)
		if !isTransport(err) {
			return c.tools, c.listed, err
		}
		c.dropLocked(l)
	}
	return c.tools, c.listed, err
}

// upToDate reports whether the conn has a live link whose tools are
// listed, and no change announced since: the cycle's common case, which
// needs neither a timeout nor the server.
func (c *conn) upToDate() bool {
	l := c.link
	if c.retired || l == nil || l.broken.Load() || l.stale.Load() {
		return false
	}
	if l.local != nil && l.local.notified() {
		l.stale.Store(true)
		return false
	}
	return true
}

// linkLocked returns the live link, connecting first if there is none.
func (c *conn) linkLocked(ctx context.Context) (*link, error) {
	if c.retired {
		return nil, errRetired
	}
	if c.link != nil && c.link.broken.Load() {
		c.dropLocked(c.link)
	}
	if c.link != nil {
		return c.link, nil
	}
	if in, ok := c.srv.(InProcess); ok {
		return c.attachLocked(ctx, in)
	}
	ctx, cancel := context.WithTimeout(ctx, c.p.cfg.ConnectTimeout)
	defer cancel()
	life, stop := context.WithCancel(c.p.life)
	l := &link{cancel: stop}
	cl, err := c.p.open(core.WithCredentialSession(ctx, c.session), l, c.srv, c.sec, c.log)
	if err != nil {
		stop()
		return nil, err
	}
	l.client = cl
	l.stale.Store(true) // a new connection is listed before it is used
	cl.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationToolsListChanged) {
			l.stale.Store(true)
		}
	})
	cl.OnConnectionLost(func(error) { l.broken.Store(true) })
	if err := c.start(ctx, life, l); err != nil {
		l.close(c.log)
		return nil, err
	}
	c.link = l
	c.log.Debug("mcp server connected")
	return l, nil
}

// attachLocked links the conn to an in-process server.
func (c *conn) attachLocked(ctx context.Context, in InProcess) (*link, error) {
	if in.Server == nil {
		return nil, fmt.Errorf("in-process server %s has no server", in.Name)
	}
	lc, err := attach(ctx, in.Server)
	if err != nil {
		return nil, err
	}
	l := &link{local: lc}
	l.stale.Store(true) // a new link is listed before it is used
	c.link = l
	return l, nil
}

func (c *conn) start(ctx, life context.Context, l *link) error {
	// The transport's streams and a stdio process live as long as life;
	// only the handshake is bound to ctx.
	if err := l.client.Start(life); err != nil {
		return fmt.Errorf("start: %w", err)
	}
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	req.Params.ClientInfo = mcp.Implementation{Name: c.p.cfg.ClientInfo.Name, Version: c.p.cfg.ClientInfo.Version}
	if _, err := l.client.Initialize(ctx, req); err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	return nil
}

// dropLocked forgets a failed link so the next use reconnects.
func (c *conn) dropLocked(l *link) {
	if c.link == l {
		c.link = nil
	}
	l.close(c.log)
}

func (c *conn) drop(l *link) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropLocked(l)
}

// retire closes the conn for good.
func (c *conn) retire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.retired = true
	if c.link != nil {
		c.dropLocked(c.link)
	}
}

// current returns a link to call through, connecting if needed.
func (c *conn) current(ctx context.Context) (*link, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.linkLocked(ctx)
}

// list sends tools/list itself rather than through client.ListTools, which
// decodes schemas into mcp-go's struct and drops what it does not model
// (top-level descriptions, oneOf, $schema): the schema is passed on as the
// server wrote it.
func (c *conn) list(ctx context.Context, l *link) ([]remoteTool, error) {
	if !l.listsTools() {
		return nil, nil // a server without tools
	}
	var tools []remoteTool
	cursor := ""
	seen := map[string]bool{}
	for page := 1; ; page++ {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		// A string id cannot clash with the client's own numeric ones.
		req := transport.JSONRPCRequest{
			JSONRPC: mcp.JSONRPC_VERSION,
			ID:      mcp.NewRequestId(fmt.Sprintf("switchboard-list-%d", page)),
			Method:  string(mcp.MethodToolsList),
			Params:  params,
		}
		resp, err := l.send(ctx, req)
		if err != nil {
			return nil, transport.NewError(err)
		}
		if l.local != nil && resp.Error != nil && resp.Error.Code == mcp.METHOD_NOT_FOUND && page == 1 {
			// An in-process server without tools: with no handshake, it
			// had no other way to say so.
			return nil, nil
		}
		if resp.Error != nil {
			return nil, resp.Error.AsError()
		}
		var res struct {
			Tools      []remoteTool `json:"tools"`
			NextCursor string       `json:"nextCursor"`
		}
		if err := json.Unmarshal(resp.Result, &res); err != nil {
			return nil, fmt.Errorf("decode tools/list: %w", err)
		}
		tools = append(tools, res.Tools...)
		if res.NextCursor == "" {
			return tools, nil
		}
		if seen[res.NextCursor] {
			return nil, fmt.Errorf("tools/list repeats cursor %q", res.NextCursor)
		}
		seen[res.NextCursor] = true
		cursor = res.NextCursor
	}
}

// isTransport reports whether err is about reaching the server rather than
// an answer from it.
func isTransport(err error) bool {
	var te *transport.Error
	return errors.As(err, &te) || errors.Is(err, transport.ErrTransportClosed)
}

// unsent reports whether a transport failure shows the request never
// reached a server that could act on it, so sending it again on a new
// connection cannot run a tool twice: the connection was refused, the
// server no longer knows the session (it restarted), or the stdio process
// had already exited (its stdin is closed, or the transport saw it go).
func unsent(err error) bool {
	if errors.Is(err, transport.ErrSessionTerminated) ||
		errors.Is(err, transport.ErrTransportClosed) ||
		errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.EPIPE) {
		return true
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}
