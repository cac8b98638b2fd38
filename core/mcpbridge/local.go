package mcpbridge

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// local is a link's way into an in-process server. Requests go straight
// to the server's message handler under a client session of the link's
// own, which the server counts as initialized: no MCP client, no
// transport goroutine and no initialize round trip stand between a new
// session and its platform's tools (providers build a server per
// session, so each session would pay them once).
type local struct {
	srv  *server.MCPServer
	sess *localSession
	ids  atomic.Int64
}

// localSession is the link's client session on the server: what tool
// handlers find in their context, and where the server's notifications
// to its clients land.
type localSession struct {
	id string
	// notes holds one notification: whichever it is, the link lists the
	// tools again, since one that found it full (and was dropped) may
	// have been tools/list_changed.
	notes chan mcp.JSONRPCNotification
}

var _ server.ClientSession = (*localSession)(nil)

func (s *localSession) SessionID() string                                   { return s.id }
func (s *localSession) NotificationChannel() chan<- mcp.JSONRPCNotification { return s.notes }
func (s *localSession) Initialize()                                         {}
func (s *localSession) Initialized() bool                                   { return true }

// attach registers a client session on srv.
func attach(ctx context.Context, srv *server.MCPServer) (*local, error) {
	sess := &localSession{id: srv.GenerateInProcessSessionID(), notes: make(chan mcp.JSONRPCNotification, 1)}
	if err := srv.RegisterSession(ctx, sess); err != nil {
		return nil, fmt.Errorf("register with the in-process server: %w", err)
	}
	return &local{srv: srv, sess: sess}, nil
}

// detach ends the client session.
func (lc *local) detach() {
	lc.srv.UnregisterSession(context.Background(), lc.sess.id)
}

// notified reports whether the server sent a notification since the last
// look, and forgets it.
func (lc *local) notified() bool {
	select {
	case <-lc.sess.notes:
		return true
	default:
		return false
	}
}

// send hands req to the server in its wire format and reads the answer
// back the same way. Only the result makes the trip: the envelope around
// it is the server's own Go value, read as it is.
func (lc *local) send(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	// As the client does: a request whose context ended is not sent.
	if err := ctx.Err(); err != nil {
		return nil, transport.NewError(err)
	}
	raw, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", req.Method, err)
	}
	switch m := lc.srv.HandleMessage(lc.srv.WithContext(ctx, lc.sess), raw).(type) {
	case mcp.JSONRPCResponse:
		result, err := json.Marshal(m.Result)
		if err != nil {
			return nil, fmt.Errorf("encode the answer to %s: %w", req.Method, err)
		}
		return &transport.JSONRPCResponse{JSONRPC: m.JSONRPC, ID: m.ID, Result: result}, nil
	case mcp.JSONRPCError:
		return &transport.JSONRPCResponse{JSONRPC: m.JSONRPC, ID: m.ID, Error: &m.Error}, nil
	case nil:
		return nil, fmt.Errorf("%s: the server did not answer", req.Method)
	default:
		return nil, fmt.Errorf("%s: the server answered with %T", req.Method, m)
	}
}

// callTool runs tools/call.
func (lc *local) callTool(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	resp, err := lc.send(ctx, transport.JSONRPCRequest{
		JSONRPC: mcp.JSONRPC_VERSION,
		ID:      mcp.NewRequestId(lc.ids.Add(1)),
		Method:  string(mcp.MethodToolsCall),
		Params:  req.Params,
	})
	if err != nil {
		return nil, err
	}
	if resp.Error != nil {
		return nil, resp.Error.AsError()
	}
	return mcp.ParseCallToolResult(&resp.Result)
}
