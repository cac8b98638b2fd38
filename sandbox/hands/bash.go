package hands

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// bashTool runs a shell command.
type bashTool struct{ tools }

func (b bashTool) Def() core.ToolDef {
	return core.ToolDef{
		Name: "bash",
		Description: fmt.Sprintf("Run a shell command (bash, or sh where the image has none) in this session's sandbox: a Linux container whose working directory, %s, keeps its files for the whole session. "+
			"It runs as an unprivileged user; the network may be unreachable. "+
			"Shown: stdout, then stderr, then the exit code when it is not 0; each stream is cut to about %d bytes, keeping its beginning and end. "+
			"A command is killed, with everything it started, after timeout_seconds (default %d, at most %d). "+
			"Redirect the output of background processes (cmd > log 2>&1 &), or the call waits for them.",
			core.SandboxWorkspace, b.opts.MaxOutput, int(b.opts.DefaultTimeout.Seconds()), int(b.opts.MaxTimeout.Seconds())),
		InputSchema: schema(map[string]any{
			"command":         prop("string", "The command or script to run."),
			"timeout_seconds": prop("integer", "How long it may run, in seconds."),
		}, "command"),
	}
}

func (b bashTool) Call(ctx context.Context, call core.ToolCall) (core.ToolResult, error) {
	var in struct {
		Command        string `json:"command"`
		TimeoutSeconds int    `json:"timeout_seconds"`
	}
	if r := decode(call, &in); r != nil {
		return *r, nil
	}
	if strings.TrimSpace(in.Command) == "" {
		return *fail("command is required"), nil
	}
	timeout := b.opts.DefaultTimeout
	if in.TimeoutSeconds > 0 {
		timeout = min(time.Duration(in.TimeoutSeconds)*time.Second, b.opts.MaxTimeout)
	}
	res, err := b.sb.Exec(ctx, call.SessionID, core.ExecRequest{
		Cmd: []string{in.Command}, Shell: true, Timeout: timeout, MaxOutput: b.opts.MaxOutput,
	})
	if err != nil {
		if ctx.Err() != nil {
			return *fail("stopped: %v", context.Cause(ctx)), nil
		}
		return *fail("the sandbox could not run the command: %v", err), nil
	}
	return formatRun(res), nil
}

// formatRun shows a command's outcome: its output, and why it failed.
func formatRun(res *core.ExecResult) core.ToolResult {
	var sb strings.Builder
	sb.WriteString(text(res.Stdout))
	if len(res.Stderr) > 0 {
		if sb.Len() > 0 && !strings.HasSuffix(sb.String(), "\n") {
			sb.WriteByte('\n')
		}
		sb.WriteString("[stderr]\n")
		sb.WriteString(text(res.Stderr))
	}
	failed := res.Killed != "" || res.Limit != "" || res.ExitCode != 0
	if failed && sb.Len() > 0 && !strings.HasSuffix(sb.String(), "\n") {
		sb.WriteByte('\n')
	}
	switch {
	case res.Killed != "":
		fmt.Fprintf(&sb, "[killed: %s]", res.Killed)
	case res.ExitCode != 0:
		fmt.Fprintf(&sb, "[exit code %d]", res.ExitCode)
	case !failed && sb.Len() == 0:
		sb.WriteString("(no output)")
	}
	if res.Limit != "" {
		if !strings.HasSuffix(sb.String(), "\n") && sb.Len() > 0 {
			sb.WriteByte('\n')
		}
		fmt.Fprintf(&sb, "[limit: %s]", res.Limit)
	}
	return core.ToolResult{Output: sb.String(), IsError: failed}
}
