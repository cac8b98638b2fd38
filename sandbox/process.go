package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/client"

	"github.com/switchboardhq/switchboard/core"
)

var _ core.ProcessSandbox = (*Docker)(nil)

// processWrapper records the process's pid in $1 and becomes the command
// ($2…), so that Kill finds it and its descendants by pid.
const processWrapper = `f=$1; shift; mkdir -p "$(dirname "$f")" && echo $$ > "$f"; echo ` + startedMark + ` >&2; exec "$@"`

// startedMark is the wrapper's first line on stderr: the pid is recorded,
// so Start may return (a Kill or a next process of the name finds it).
const startedMark = "switchboard-process-started"

// killTree kills the process whose pid is in $1 and every descendant it
// has, children first found through /proc (a process reparented to init
// is out of its tree: the container's stop ends those).
const killTree = `tree() { for t in /proc/$1/task/*; do for c in $(cat "$t/children" 2>/dev/null); do tree "$c"; done; done; kill -KILL "$1" 2>/dev/null; }
p=$(cat "$1" 2>/dev/null) || exit 0
[ -n "$p" ] && tree "$p"; rm -f "$1"; echo killed`

var processName = regexp.MustCompile(`^[a-z0-9-]{1,64}$`)

// stderrTail bounds what a process's stderr keeps for its failure report.
const stderrTail = 4 << 10

// Start runs req in the session's sandbox with stdin and stdout attached,
// as the command user, with HOME on the workspace volume
// (core.SandboxAgentHome). The process does not keep the sandbox warm:
// Hold does, while it works.
func (d *Docker) Start(ctx context.Context, sessionID string, req core.ProcessRequest) (core.Process, error) {
	if err := checkCommand(sessionID, req.Cmd); err != nil {
		return nil, err
	}
	b, err := d.acquire(sessionID)
	if err != nil {
		return nil, err
	}
	defer d.release(b)
	b.mu.Lock()
	id, err := d.ensure(ctx, b)
	b.mu.Unlock()
	if err != nil {
		return nil, err
	}
	dir := req.Dir
	if dir == "" {
		dir = core.SandboxWorkspace
	}
	env := map[string]string{"HOME": core.SandboxAgentHome}
	maps.Copy(env, req.Env)
	pidFile := fmt.Sprintf("/tmp/.switchboard/proc-%d", time.Now().UnixNano())
	if req.Name != "" {
		if !processName.MatchString(req.Name) {
			return nil, fmt.Errorf("process name %q: want 1 to 64 of a-z, 0-9 and -: %w", req.Name, core.ErrInvalid)
		}
		pidFile = "/tmp/.switchboard/" + req.Name + ".pid"
		// One at a time: the one a dead gateway left goes first.
		var out strings.Builder
		if _, err := d.execOnce(ctx, id, execSpec{cmd: []string{"sh", "-c", killTree, "sh", pidFile}, dir: "/", stdout: &out, stderr: &out}); err != nil {
			return nil, fmt.Errorf("end the sandbox's earlier %s: %w", req.Name, err)
		}
	}
	cmd := append([]string{"sh", "-c", processWrapper, "sh", pidFile}, req.Cmd...)
	// The home is made first: an agent that writes its state there finds it.
	script := `mkdir -p "$1" && cd "$2" && shift 2 && exec "$@"`
	cmd = append([]string{"sh", "-c", script, "sh", env["HOME"], dir}, cmd...)
	ex, err := d.cli.ExecCreate(ctx, id, client.ExecCreateOptions{
		User:         d.cfg.User,
		AttachStdin:  true,
		AttachStdout: true,
		AttachStderr: true,
		Env:          envList(env),
		WorkingDir:   core.SandboxWorkspace,
		Cmd:          cmd,
	})
	if err != nil {
		return nil, fmt.Errorf("exec in sandbox: %w", err)
	}
	att, err := d.cli.ExecAttach(ctx, ex.ID, client.ExecAttachOptions{})
	if err != nil {
		return nil, fmt.Errorf("attach to sandbox exec: %w", err)
	}
	outR, outW := io.Pipe()
	p := &process{d: d, session: sessionID, container: id, exec: ex.ID, pidFile: pidFile, att: &att.HijackedResponse, stdout: outR,
		streamEnded: make(chan struct{}), active: make(chan struct{}, 1), done: make(chan struct{}), exit: -1,
		started: make(chan struct{})}
	p.stderr.started = p.started
	go func() {
		_, err := stdcopy.StdCopy(activity{outW, p.active}, activity{&p.stderr, p.active}, att.Reader)
		outW.CloseWithError(err)
		close(p.streamEnded)
	}()
	go p.watch()
	select {
	case <-p.started:
	case <-p.streamEnded: // it could not start: its stderr says why
	case <-ctx.Done():
		_ = p.Kill(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("start in sandbox: %w", ctx.Err())
	}
	return p, nil
}

// exitPoll is how often a live process's exec is asked whether it ended:
// with stdin attached, the engine keeps the stream open past the exit.
const exitPoll = 500 * time.Millisecond

// streamQuiet is how long the stream of a process that has ended may
// stay silent before it is cut: a child the process left running can
// hold it open for as long as it lives. On a busy machine the engine can
// deliver the last output well after the exit, so the wait is renewed
// while output still arrives, up to streamCap after the exit.
const (
	streamQuiet = 5 * time.Second
	streamCap   = time.Minute
)

// inspectPatience is how long watch keeps asking an engine whose answers
// fail before it counts the process as ended: on a busy machine one
// inspect can outlast its timeout while the process runs on.
const inspectPatience = time.Minute

// watch waits for the process to end, records its exit status and closes
// done; the rest of its output is read first, while it keeps coming.
func (p *process) watch() {
	ended := p.streamEnded
	tick := time.NewTicker(exitPoll)
	defer tick.Stop()
	var failingSince time.Time
	for {
		select {
		case <-ended:
			ended = nil
		case <-tick.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		insp, err := p.d.cli.ExecInspect(ctx, p.exec, client.ExecInspectOptions{})
		cancel()
		if err != nil && !cerrdefs.IsNotFound(err) {
			if failingSince.IsZero() {
				failingSince = time.Now()
			}
			if time.Since(failingSince) < inspectPatience {
				continue
			}
			p.d.log.Warn("sandbox process: the engine has not answered for its state; counting it ended",
				"session_id", p.session, "for", time.Since(failingSince).Round(time.Second), "err", err)
			break
		}
		failingSince = time.Time{}
		if err == nil && (insp.Running || p.notStartedYet(insp)) {
			continue
		}
		if err == nil {
			p.exit = insp.ExitCode
		}
		break // not found: the exec went with its container
	}
	// Ending stdin lets the engine end the stream; what the process wrote
	// last is still read.
	_ = p.att.CloseWrite()
	p.drain()
	close(p.done)
}

// notStartedYet tells an exec the engine has not started from one that
// ended: the engine answers the attach before it starts the exec, and
// until then reports it neither running nor exited, with no pid. Once
// the wrapper's started mark came, it has started (whatever pid an
// engine reports after the exit); once the stream has ended, it never
// will.
func (p *process) notStartedYet(insp client.ExecInspectResult) bool {
	select {
	case <-p.started:
		return false
	case <-p.streamEnded:
		return false
	default:
		return insp.PID == 0 && insp.ExitCode == 0
	}
}

// drain waits for the stream of an ended process to end, and cuts it
// once it has been quiet for streamQuiet (or streamCap has passed).
func (p *process) drain() {
	quiet := time.NewTimer(streamQuiet)
	defer quiet.Stop()
	limit := time.NewTimer(streamCap)
	defer limit.Stop()
	for {
		select {
		case <-p.streamEnded:
			return
		case <-p.active:
			quiet.Reset(streamQuiet)
			continue
		case <-quiet.C:
		case <-limit.C:
		}
		p.att.Close()
		p.stdout.CloseWithError(io.ErrClosedPipe) // no one reads it: unblock the copy
		return
	}
}

// activity is a writer that tells active (without waiting) of each write.
type activity struct {
	w      io.Writer
	active chan<- struct{}
}

func (a activity) Write(b []byte) (int, error) {
	n, err := a.w.Write(b)
	select {
	case a.active <- struct{}{}:
	default:
	}
	return n, err
}

func envList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, k+"="+env[k])
	}
	return out
}

// process is a process started by Docker.Start.
type process struct {
	d         *Docker
	session   string
	container string
	exec      string
	pidFile   string
	att       *client.HijackedResponse
	stdout    *io.PipeReader
	stderr    tail

	streamEnded chan struct{}
	// started is closed when the wrapper's started mark arrives.
	started chan struct{}
	// active hears of the stream's writes (activity), for drain.
	active chan struct{}
	done   chan struct{}
	exit   int // set before done is closed
}

func (p *process) Stdin() io.WriteCloser { return stdinOf{p.att} }
func (p *process) Stdout() io.Reader     { return p.stdout }
func (p *process) Stderr() string        { return p.stderr.String() }
func (p *process) Done() <-chan struct{} { return p.done }

func (p *process) ExitCode() int {
	select {
	case <-p.done:
		return p.exit
	default:
		return -1
	}
}

// Kill kills the process and its descendants; when its pid cannot be
// read, every process of the command user goes (as a command past its
// timeout does).
func (p *process) Kill(ctx context.Context) error {
	select {
	case <-p.done:
		return nil
	default:
	}
	var out strings.Builder
	code, err := p.d.execOnce(ctx, p.container, execSpec{cmd: []string{"sh", "-c", killTree, "sh", p.pidFile}, dir: "/", stdout: &out, stderr: &out})
	if err != nil && isNotRunning(err) {
		return nil // the sandbox stopped: so did the process
	}
	if err != nil || code != 0 || strings.TrimSpace(out.String()) != "killed" {
		b, aerr := p.d.acquire(p.session)
		if aerr != nil {
			return fmt.Errorf("kill sandbox process: %w", err)
		}
		defer p.d.release(b)
		p.d.log.Warn("sandbox process not killed by pid; killing every command", "session_id", p.session, "output", out.String(), "err", err,
			"how", p.d.reclaim(ctx, b, p.container))
	}
	p.att.Close()
	select {
	case <-p.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// Hold counts the sandbox as in use, so that its idle timer leaves it
// alone, until release.
func (p *process) Hold() func() {
	b, err := p.d.acquire(p.session)
	if err != nil {
		return func() {}
	}
	var once sync.Once
	return func() { once.Do(func() { p.d.release(b) }) }
}

// stdinOf writes to an exec's stdin; Close half-closes it.
type stdinOf struct{ att *client.HijackedResponse }

func (s stdinOf) Write(b []byte) (int, error) { return s.att.Conn.Write(b) }
func (s stdinOf) Close() error                { return s.att.CloseWrite() }

// tail keeps the last stderrTail bytes written to it, but for the
// wrapper's started mark, whose arrival closes started.
type tail struct {
	mu      sync.Mutex
	buf     []byte
	started chan struct{} // nil once closed
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if t.started != nil {
		if i := bytes.Index(t.buf, []byte(startedMark+"\n")); i >= 0 {
			t.buf = append(t.buf[:i], t.buf[i+len(startedMark)+1:]...)
			close(t.started)
			t.started = nil
		}
	}
	if over := len(t.buf) - stderrTail; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(b), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.ToValidUTF8(string(t.buf), "\uFFFD")
}
