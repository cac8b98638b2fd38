package core

import (
	"context"
	"errors"
	"io"
	"time"
)

// SandboxWorkspace is where a session's files live in its sandbox; it
// survives hibernation, and relative paths given to the hands tools start
// there.
const SandboxWorkspace = "/workspace"

// SandboxSkills is the folder of a sandbox where each skill its agent
// pins is mounted, at SandboxSkills/<name>/.
const SandboxSkills = "/skills"

// TypeSandboxReset is the progress event logged when a session's files
// from before are gone: the session moved to a replica that runs its
// sandbox on another engine, and its next command starts a fresh one.
// The model sees it as a note in its context (docs/api.md#events).
const TypeSandboxReset = "session.sandbox_reset"

// SandboxResetBody is the body of a session.sandbox_reset event.
type SandboxResetBody struct {
	Reason string `json:"reason"`
}

// ResetMoved is the reason of a reset that follows a move.
const ResetMoved = "moved from another replica"

// ErrSandboxUnavailable: the sandbox backend cannot run the command (no
// engine, no image); the hands tools report it to the model as a tool error.
var ErrSandboxUnavailable = errors.New("sandbox unavailable")

// Sandbox runs commands in a session's sandbox: the container where code
// work happens (the hands), which holds no secret of the gateway. It is
// created or woken on first use; callers never manage its lifecycle.
type Sandbox interface {
	Exec(ctx context.Context, sessionID string, req ExecRequest) (*ExecResult, error)
}

// ExecRequest is one command in a session's sandbox.
type ExecRequest struct {
	// Cmd is the argv. With Shell set, Cmd[0] is a script run by bash, or by
	// sh where the image has no bash, and Cmd[1:] are its $1, $2, ….
	Cmd   []string
	Shell bool
	// Stdin is written to the command, then closed.
	Stdin []byte
	// Dir is the working directory; empty means SandboxWorkspace.
	Dir string
	// Timeout bounds the command; 0 means the sandbox's default. A command
	// that runs past it is killed with every process it started.
	Timeout time.Duration
	// MaxOutput bounds the bytes kept of stdout and of stderr each: the
	// first and last halves are kept, with a note of what was dropped
	// between them. 0 means the sandbox's default.
	MaxOutput int
}

// ExecResult is how a command ended and what it printed.
type ExecResult struct {
	ExitCode int
	Stdout   []byte
	Stderr   []byte
	// StdoutOmitted and StderrOmitted count the bytes dropped from the
	// middle of each stream to keep it under MaxOutput.
	StdoutOmitted int64
	StderrOmitted int64
	// Killed, when set, says why the command was stopped instead of
	// finishing by itself: its timeout, the memory limit, an interrupt.
	Killed string
	// Limit, when set, names a limit of the sandbox the command ran into
	// (new processes refused at the process limit), killed or not.
	Limit string
}

// SandboxAgentHome is the $HOME of an agent process started in a sandbox
// (ProcessSandbox): on the workspace volume, so the agent's own state
// survives hibernation, and beside the repository checkouts
// (/workspace/<repo>), never inside one.
const SandboxAgentHome = SandboxWorkspace + "/.agent-home"

// ProcessSandbox is a Sandbox that also runs long-lived processes with
// their stdin and stdout attached: an ACP agent, driven over stdio.
type ProcessSandbox interface {
	Sandbox
	// Start starts req in the session's sandbox, creating or starting the
	// container first. The process ends with the sandbox (hibernation,
	// archive) or by Kill; ctx bounds the start only.
	Start(ctx context.Context, sessionID string, req ProcessRequest) (Process, error)
}

// ProcessRequest is one long-lived process in a session's sandbox.
type ProcessRequest struct {
	Cmd []string
	// Env is the process's non-secret environment; HOME is
	// SandboxAgentHome unless Env says otherwise.
	Env map[string]string
	// Dir is the working directory; empty means SandboxWorkspace.
	Dir string
	// Name, when set, names the process in its sandbox: a process started
	// under the name before (by a gateway that died, say) is killed first,
	// so that one runs at a time.
	Name string
}

// Process is a process running in a session's sandbox.
type Process interface {
	// Stdin is the process's standard input; Close ends it.
	Stdin() io.WriteCloser
	// Stdout is the process's standard output, which ends when it exits.
	Stdout() io.Reader
	// Stderr is the end of what the process wrote to its standard error
	// (a few KiB at most), for the error that reports its failure.
	Stderr() string
	// Done is closed once the process has exited, or its sandbox stopped.
	Done() <-chan struct{}
	// ExitCode is the process's exit status once Done is closed; -1 when
	// the sandbox could not tell.
	ExitCode() int
	// Kill ends the process and every process it started.
	Kill(ctx context.Context) error
	// Hold keeps the sandbox from hibernating until release is called:
	// a turn holds it while the process works for it.
	Hold() (release func())
}

// sandboxSessionKey carries, on a request the egress proxy serves itself,
// the session whose sandbox made it.
type sandboxSessionKey struct{}

// WithSandboxSession marks ctx as a request of session id's sandbox.
func WithSandboxSession(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, sandboxSessionKey{}, id)
}

// SandboxSessionFrom is the session whose sandbox made the request ctx
// belongs to, "" when none did.
func SandboxSessionFrom(ctx context.Context) string {
	id, _ := ctx.Value(sandboxSessionKey{}).(string)
	return id
}
