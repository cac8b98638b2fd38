// Package hands owns the hands tools the model sees when sessions have a
// sandbox: bash, read, write, edit, ls, glob and grep. Each is a core.Tool
// that runs its work inside the session's sandbox through core.Sandbox, as
// the sandbox's non-root user, so that a tool can do nothing the model
// could not do with bash. Failures the model should see (a missing file, an
// ambiguous edit, a non-zero exit, a timeout) are tool errors with the
// reason; only a broken call is a Go error.
package hands

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// Names lists the hands tools, as the model sees them.
func Names() []string { return []string{"bash", "read", "write", "edit", "ls", "glob", "grep"} }

// Options tune the tools.
type Options struct {
	// DefaultTimeout bounds a bash command that names no timeout (default
	// 2 minutes); MaxTimeout is the most one may ask for (default 10
	// minutes).
	DefaultTimeout, MaxTimeout time.Duration
	// MaxOutput is the bytes of stdout and of stderr shown (default 30000).
	MaxOutput int
}

func (o Options) withDefaults() Options {
	if o.MaxTimeout <= 0 {
		o.MaxTimeout = 10 * time.Minute
	}
	if o.DefaultTimeout <= 0 {
		o.DefaultTimeout = 2 * time.Minute
	}
	o.DefaultTimeout = min(o.DefaultTimeout, o.MaxTimeout)
	if o.MaxOutput <= 0 {
		o.MaxOutput = 30_000
	}
	return o
}

// Tools returns the hands tools over sb, in the order of Names.
func Tools(sb core.Sandbox, opts Options) []core.Tool {
	t := tools{sb: sb, opts: opts.withDefaults()}
	return []core.Tool{bashTool{t}, readTool{t}, writeTool{t}, editTool{t}, lsTool{t}, globTool{t}, grepTool{t}}
}

// fileTimeout bounds the commands of the file tools.
const fileTimeout = time.Minute

// tools is what every hands tool shares.
type tools struct {
	sb   core.Sandbox
	opts Options
}

// exec runs a command in the call's session's sandbox; a failure of the
// sandbox itself comes back as a tool error the model can read.
func (t tools) exec(ctx context.Context, call core.ToolCall, req core.ExecRequest) (*core.ExecResult, *core.ToolResult) {
	if req.Timeout == 0 {
		req.Timeout = fileTimeout
	}
	res, err := t.sb.Exec(ctx, call.SessionID, req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, &core.ToolResult{Output: "stopped: " + context.Cause(ctx).Error(), IsError: true}
		}
		return nil, &core.ToolResult{Output: "the sandbox could not run this: " + err.Error(), IsError: true}
	}
	if res.Killed != "" {
		return nil, &core.ToolResult{Output: "killed: " + res.Killed, IsError: true}
	}
	return res, nil
}

// decode reads a call's input into v.
func decode(call core.ToolCall, v any) *core.ToolResult {
	if err := json.Unmarshal(call.Input, v); err != nil {
		return fail("input must be a JSON object matching the tool's schema: %v", err)
	}
	return nil
}

// fail is a tool error for the model.
func fail(format string, args ...any) *core.ToolResult {
	return &core.ToolResult{Output: fmt.Sprintf(format, args...), IsError: true}
}

// resolve makes p absolute: relative paths start at the workspace.
func resolve(p string) (string, error) {
	p = strings.TrimSpace(p)
	if p == "" {
		return "", errors.New("path is required")
	}
	if strings.ContainsRune(p, 0) {
		return "", errors.New("path contains a NUL byte")
	}
	if !path.IsAbs(p) {
		p = path.Join(core.SandboxWorkspace, p)
	}
	return path.Clean(p), nil
}

// resolveOr resolves p, or gives dflt when p is empty.
func resolveOr(p, dflt string) (string, error) {
	if strings.TrimSpace(p) == "" {
		return dflt, nil
	}
	return resolve(p)
}

// text makes command output safe to show: valid UTF-8.
func text(b []byte) string { return strings.ToValidUTF8(string(b), "\uFFFD") }

// stderrReason is the first line of a command's stderr, for errors.
func stderrReason(res *core.ExecResult) string {
	s := strings.TrimSpace(text(res.Stderr))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if s == "" {
		s = fmt.Sprintf("exit code %d", res.ExitCode)
	}
	return s
}

// schema builds a JSON schema of an object.
func schema(props map[string]any, required ...string) json.RawMessage {
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	raw, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("hands: schema: %v", err)) // static input: a bug
	}
	return raw
}

func prop(typ, desc string) map[string]any { return map[string]any{"type": typ, "description": desc} }
