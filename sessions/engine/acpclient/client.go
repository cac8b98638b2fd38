package acpclient

import (
	"context"
	"fmt"
	"log/slog"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/switchboardhq/switchboard/core"
)

// client serves what an agent process asks of its client: updates go to
// the turn's recorder, permission requests to the turn, files and
// terminals to the session's sandbox.
type client struct {
	h       *Harness
	session string

	mu        sync.Mutex
	turn      *turn // the prompt in flight; nil between prompts
	replaying bool  // a session/load replays history: not logged again
	terminals map[string]*terminal
	nextTerm  int
}

var _ acp.Client = (*client)(nil)

func (c *client) current() (*turn, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.turn, c.replaying
}

func (c *client) SessionUpdate(ctx context.Context, n acp.SessionNotification) (err error) {
	defer c.recovered(&err)
	defer core.Recover(c.h.logger(), &err, "session_id", c.session)
	t, replaying := c.current()
	if replaying || t == nil {
		return nil
	}
	t.rec.update(n.Update)
	return nil
}

func (c *client) RequestPermission(ctx context.Context, req acp.RequestPermissionRequest) (_ acp.RequestPermissionResponse, err error) {
	defer c.recovered(&err)
	defer core.Recover(c.h.logger(), &err, "session_id", c.session)
	t, _ := c.current()
	if t == nil {
		// Nothing runs that a person could answer for.
		return acp.RequestPermissionResponse{Outcome: acp.NewRequestPermissionOutcomeCancelled()}, nil
	}
	return acp.RequestPermissionResponse{Outcome: t.permission(ctx, req)}, nil
}

// readScript prints lines $2.. ($3 of them) of the file $1 names, once
// its real path (symlinks resolved) is inside the workspace.
const readScript = `p=$(realpath -m -- "$1") || exit 3
case "$p" in ` + core.SandboxWorkspace + `|` + core.SandboxWorkspace + `/*) ;; *) echo "$1 is outside ` + core.SandboxWorkspace + ` (it resolves to $p)" >&2; exit 4;; esac
[ -f "$p" ] || { echo "no such file: $1" >&2; exit 3; }
tail -n +"$2" -- "$p" | head -n "$3"`

// writeScript writes stdin to the file $1 names, once its real path is
// inside the workspace, making its folders.
const writeScript = `p=$(realpath -m -- "$1") || exit 3
case "$p" in ` + core.SandboxWorkspace + `/*) ;; *) echo "$1 is outside ` + core.SandboxWorkspace + ` (it resolves to $p)" >&2; exit 4;; esac
mkdir -p -- "$(dirname -- "$p")" && cat > "$p"`

// maxFileBytes bounds a file read or written for the agent.
const maxFileBytes = 8 << 20

func (c *client) ReadTextFile(ctx context.Context, req acp.ReadTextFileRequest) (_ acp.ReadTextFileResponse, err error) {
	defer c.recovered(&err)
	defer core.Recover(c.h.logger(), &err, "session_id", c.session)
	line, limit := 1, 1<<30
	if req.Line != nil && *req.Line > 0 {
		line = *req.Line
	}
	if req.Limit != nil && *req.Limit >= 0 {
		limit = *req.Limit
	}
	res, err := c.h.Sandbox.Exec(ctx, c.session, core.ExecRequest{
		Cmd: []string{"sh", "-c", readScript, "sh", req.Path, strconv.Itoa(line), strconv.Itoa(limit)}, MaxOutput: maxFileBytes,
	})
	if err != nil {
		return acp.ReadTextFileResponse{}, acp.NewInternalError(map[string]any{"error": err.Error()})
	}
	if res.ExitCode != 0 {
		return acp.ReadTextFileResponse{}, acp.NewInvalidParams(map[string]any{"error": strings.TrimSpace(string(res.Stderr))})
	}
	return acp.ReadTextFileResponse{Content: string(res.Stdout)}, nil
}

func (c *client) WriteTextFile(ctx context.Context, req acp.WriteTextFileRequest) (_ acp.WriteTextFileResponse, err error) {
	defer c.recovered(&err)
	defer core.Recover(c.h.logger(), &err, "session_id", c.session)
	if len(req.Content) > maxFileBytes {
		return acp.WriteTextFileResponse{}, acp.NewInvalidParams(map[string]any{"error": fmt.Sprintf("content of %d bytes is over the %d-byte limit", len(req.Content), maxFileBytes)})
	}
	res, err := c.h.Sandbox.Exec(ctx, c.session, core.ExecRequest{Cmd: []string{"sh", "-c", writeScript, "sh", req.Path}, Stdin: []byte(req.Content)})
	if err != nil {
		return acp.WriteTextFileResponse{}, acp.NewInternalError(map[string]any{"error": err.Error()})
	}
	if res.ExitCode != 0 {
		return acp.WriteTextFileResponse{}, acp.NewInvalidParams(map[string]any{"error": strings.TrimSpace(string(res.Stderr))})
	}
	return acp.WriteTextFileResponse{}, nil
}

// terminal is a command the agent runs through the client, in the
// sandbox, its stderr merged into its output.
type terminal struct {
	proc  core.Process
	limit int

	mu        sync.Mutex
	out       []byte
	truncated bool
	read      chan struct{} // closed once the output is read to its end
}

// collect reads the terminal's output to its end; a panic here ends the
// output there (logged once with its stack), not the gateway.
func (t *terminal) collect(log *slog.Logger) {
	defer close(t.read)
	defer core.Recover(log, nil)
	buf := make([]byte, 32<<10)
	for {
		n, err := t.proc.Stdout().Read(buf)
		t.mu.Lock()
		t.out = append(t.out, buf[:n]...)
		if over := len(t.out) - t.limit; over > 0 {
			// Keep the end, cut on a rune boundary.
			for over < len(t.out) && !utf8Start(t.out[over]) {
				over++
			}
			t.out, t.truncated = append(t.out[:0], t.out[over:]...), true
		}
		t.mu.Unlock()
		if err != nil {
			return
		}
	}
}

func (t *terminal) output() (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.ToValidUTF8(string(t.out), "\uFFFD"), t.truncated
}

func (t *terminal) exitStatus() *acp.TerminalExitStatus {
	select {
	case <-t.proc.Done():
		<-t.read
		code := t.proc.ExitCode()
		return &acp.TerminalExitStatus{ExitCode: &code}
	default:
		return nil
	}
}

func (c *client) CreateTerminal(ctx context.Context, req acp.CreateTerminalRequest) (_ acp.CreateTerminalResponse, err error) {
	defer c.recovered(&err)
	defer core.Recover(c.h.logger(), &err, "session_id", c.session)
	dir := core.SandboxWorkspace
	if req.Cwd != nil && *req.Cwd != "" {
		dir = path.Clean(*req.Cwd)
		if dir != core.SandboxWorkspace && !strings.HasPrefix(dir, core.SandboxWorkspace+"/") {
			return acp.CreateTerminalResponse{}, acp.NewInvalidParams(map[string]any{"error": fmt.Sprintf("cwd %s is outside %s", dir, core.SandboxWorkspace)})
		}
	}
	env := map[string]string{}
	for _, v := range req.Env {
		env[v.Name] = v.Value
	}
	limit := 1 << 20
	if req.OutputByteLimit != nil && *req.OutputByteLimit > 0 && *req.OutputByteLimit < limit {
		limit = *req.OutputByteLimit
	}
	cmd := append([]string{"sh", "-c", `exec "$@" 2>&1`, "sh", req.Command}, req.Args...)
	proc, err := c.h.Sandbox.Start(ctx, c.session, core.ProcessRequest{Cmd: cmd, Env: env, Dir: dir})
	if err != nil {
		return acp.CreateTerminalResponse{}, acp.NewInternalError(map[string]any{"error": err.Error()})
	}
	_ = proc.Stdin().Close()
	t := &terminal{proc: proc, limit: limit, read: make(chan struct{})}
	go t.collect(c.h.logger().With("session_id", c.session))
	c.mu.Lock()
	c.nextTerm++
	id := "term_" + strconv.Itoa(c.nextTerm)
	c.terminals[id] = t
	c.mu.Unlock()
	return acp.CreateTerminalResponse{TerminalId: id}, nil
}

func (c *client) terminal(id string) (*terminal, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.terminals[id]
	if t == nil {
		return nil, acp.NewInvalidParams(map[string]any{"error": "no terminal " + id})
	}
	return t, nil
}

// terminalOutput is a terminal's output so far, for a tool call's result.
func (c *client) terminalOutput(id string) string {
	t, err := c.terminal(id)
	if err != nil {
		return ""
	}
	out, _ := t.output()
	return out
}

func (c *client) TerminalOutput(ctx context.Context, req acp.TerminalOutputRequest) (_ acp.TerminalOutputResponse, err error) {
	defer c.recovered(&err)
	defer core.Recover(c.h.logger(), &err, "session_id", c.session)
	t, err := c.terminal(req.TerminalId)
	if err != nil {
		return acp.TerminalOutputResponse{}, err
	}
	st := t.exitStatus()
	out, truncated := t.output()
	return acp.TerminalOutputResponse{Output: out, Truncated: truncated, ExitStatus: st}, nil
}

func (c *client) WaitForTerminalExit(ctx context.Context, req acp.WaitForTerminalExitRequest) (_ acp.WaitForTerminalExitResponse, err error) {
	defer c.recovered(&err)
	defer core.Recover(c.h.logger(), &err, "session_id", c.session)
	t, err := c.terminal(req.TerminalId)
	if err != nil {
		return acp.WaitForTerminalExitResponse{}, err
	}
	select {
	case <-t.proc.Done():
	case <-ctx.Done():
		return acp.WaitForTerminalExitResponse{}, ctx.Err()
	}
	st := t.exitStatus()
	return acp.WaitForTerminalExitResponse{ExitCode: st.ExitCode}, nil
}

func (c *client) KillTerminal(ctx context.Context, req acp.KillTerminalRequest) (_ acp.KillTerminalResponse, err error) {
	defer c.recovered(&err)
	defer core.Recover(c.h.logger(), &err, "session_id", c.session)
	t, err := c.terminal(req.TerminalId)
	if err != nil {
		return acp.KillTerminalResponse{}, err
	}
	if err := t.proc.Kill(ctx); err != nil {
		return acp.KillTerminalResponse{}, acp.NewInternalError(map[string]any{"error": err.Error()})
	}
	return acp.KillTerminalResponse{}, nil
}

func (c *client) ReleaseTerminal(ctx context.Context, req acp.ReleaseTerminalRequest) (_ acp.ReleaseTerminalResponse, err error) {
	defer c.recovered(&err)
	defer core.Recover(c.h.logger(), &err, "session_id", c.session)
	t, err := c.terminal(req.TerminalId)
	if err != nil {
		return acp.ReleaseTerminalResponse{}, err
	}
	c.mu.Lock()
	delete(c.terminals, req.TerminalId)
	c.mu.Unlock()
	_ = t.proc.Kill(ctx)
	return acp.ReleaseTerminalResponse{}, nil
}

// closeTerminals kills every terminal: the agent that ran them is going.
func (c *client) closeTerminals(ctx context.Context) {
	c.mu.Lock()
	ts := c.terminals
	c.terminals = map[string]*terminal{}
	c.mu.Unlock()
	for _, t := range ts {
		kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		_ = t.proc.Kill(kctx)
		cancel()
	}
}
