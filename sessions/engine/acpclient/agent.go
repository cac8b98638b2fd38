package acpclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/engine/harness"
)

// agentProc is a live agent process and its ACP connection.
type agentProc struct {
	proc       core.Process
	conn       *acp.ClientSideConnection
	client     *client
	out        *outputTail
	caps       acp.AgentCapabilities
	info       *acp.Implementation
	acpSession acp.SessionId
	agent      core.AgentRef // the agent version it runs
	cmd        []string
	// mcp serves the session's platform tools to the agent (Harness.MCP);
	// nil when its cycle offers none.
	mcp http.Handler
}

// alive reports whether the process still runs and speaks.
func (ap *agentProc) alive() bool {
	select {
	case <-ap.proc.Done():
		return false
	case <-ap.conn.Done():
		return false
	default:
		return true
	}
}

// exitWait bounds how long a failure's report waits for the process's
// exit status once its output ended (the sandbox tells it a moment after).
const exitWait = 3 * time.Second

// failure describes how the agent failed, for a session.error: what went
// wrong, its exit status when it exited, the end of its stderr, and what
// it last wrote on stdout when that was not ACP.
func (ap *agentProc) failure(what string) string {
	// Its output ended (it is exiting), or it exited (its last output is
	// still being read): the report waits a moment for the other.
	select {
	case <-ap.conn.Done():
		select {
		case <-ap.proc.Done():
		case <-time.After(exitWait):
		}
	case <-ap.proc.Done():
		select {
		case <-ap.conn.Done():
		case <-time.After(exitWait):
		}
	default:
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "the ACP agent %q %s", strings.Join(ap.cmd, " "), what)
	select {
	case <-ap.proc.Done():
		fmt.Fprintf(&sb, "; it exited with status %d", ap.proc.ExitCode())
	default:
	}
	if s := lastLines(ap.proc.Stderr(), 10, 2<<10); s != "" {
		sb.WriteString("; its last stderr lines:\n" + s)
	}
	if s := ap.out.garbage(); s != "" {
		sb.WriteString("\nit wrote what is not ACP on stdout: " + s)
	}
	return sb.String()
}

// kill ends the process and forgets its terminals.
func (ap *agentProc) kill(ctx context.Context) error {
	ap.client.closeTerminals(ctx)
	kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	return ap.proc.Kill(kctx)
}

// start starts the agent's command in the session's sandbox and
// initializes the connection, within the harness's InitTimeout.
func (h *Harness) start(ctx context.Context, c *harness.Cycle) (*agentProc, error) {
	rt := c.Agent.Runtime
	// Named, so that an agent a dead gateway left in the sandbox goes.
	proc, err := h.Sandbox.Start(ctx, c.SessionID, core.ProcessRequest{Cmd: rt.Command, Env: rt.Env, Name: "acp-agent"})
	if err != nil {
		return nil, &agentError{msg: fmt.Sprintf("the ACP agent %q could not be started in the sandbox: %v", strings.Join(rt.Command, " "), err)}
	}
	out := &outputTail{r: proc.Stdout(), ready: make(chan struct{})}
	ap := &agentProc{proc: proc, out: out, agent: core.AgentRef{ID: c.Agent.ID, Version: c.Agent.Version}, cmd: rt.Command}
	ap.client = &client{h: h, session: c.SessionID, terminals: map[string]*terminal{}}
	ap.conn = acp.NewClientSideConnection(ap.client, proc.Stdin(), out)
	ap.conn.SetLogger(h.logger().With("component", "acp", "session_id", c.SessionID))
	close(out.ready) // the connection reads nothing before its logger is set
	ictx, cancel := h.bounded(ctx, ap, h.InitTimeout)
	defer cancel()
	resp, err := ap.conn.Initialize(ictx, acp.InitializeRequest{
		ProtocolVersion: acp.ProtocolVersionNumber,
		ClientCapabilities: acp.ClientCapabilities{
			Fs:       acp.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true},
			Terminal: true,
		},
		ClientInfo: &acp.Implementation{Name: "switchboard", Version: h.ClientVersion},
	})
	if err != nil {
		msg := ap.failure("did not answer initialize" + h.why(ictx, err))
		_ = ap.kill(ctx)
		return nil, &agentError{msg: msg}
	}
	ap.caps, ap.info = resp.AgentCapabilities, resp.AgentInfo
	if c.Tools != nil {
		ap.mcp = h.newMCP(c.SessionID, c.Tools.Defs())
	}
	return ap, nil
}

// bounded is ctx limited to d and ended when the agent's process exits or
// its connection breaks, so that a dead agent fails at once.
func (h *Harness) bounded(ctx context.Context, ap *agentProc, d time.Duration) (context.Context, context.CancelFunc) {
	bctx, cancel := context.WithTimeoutCause(ctx, d, errTimedOut)
	go func() {
		select {
		case <-ap.proc.Done():
			cancel()
		case <-ap.conn.Done():
			cancel()
		case <-bctx.Done():
		}
	}()
	return bctx, cancel
}

var errTimedOut = errors.New("timed out")

// why says why a request to the agent failed, as the end of a sentence.
func (h *Harness) why(ctx context.Context, err error) string {
	switch {
	case errors.Is(context.Cause(ctx), errTimedOut):
		return fmt.Sprintf(" within %s", h.InitTimeout)
	case ctx.Err() != nil:
		return " before it ended or broke the protocol"
	}
	return ": " + err.Error()
}

// agentError is a failure of the agent process that ends the turn with
// a session.error; the session stays usable.
type agentError struct{ msg string }

func (e *agentError) Error() string { return e.msg }

// outputTail reads the agent's stdout for the connection and keeps the
// last line that was not JSON, to say so when the protocol breaks.
type outputTail struct {
	r     io.Reader
	ready chan struct{} // closed once the connection may read
	mu    sync.Mutex
	line  []byte // the line being read
	bad   string // the last complete line that was not a JSON object
}

func (o *outputTail) Read(p []byte) (int, error) {
	<-o.ready
	n, err := o.r.Read(p)
	o.mu.Lock()
	for _, b := range p[:n] {
		if b != '\n' {
			if len(o.line) < 512 {
				o.line = append(o.line, b)
			}
			continue
		}
		if s := strings.TrimSpace(string(o.line)); s != "" && !strings.HasPrefix(s, "{") {
			o.bad = s
		}
		o.line = o.line[:0]
	}
	o.mu.Unlock()
	return n, err
}

func (o *outputTail) garbage() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return strings.ToValidUTF8(o.bad, "\uFFFD")
}

// lastLines is the last n lines of s, at most max bytes.
func lastLines(s string, n, max int) string {
	s = strings.TrimSpace(s)
	ls := strings.Split(s, "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	out := strings.Join(ls, "\n")
	if len(out) > max {
		out = "…" + out[len(out)-max:]
	}
	return out
}
