package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/switchboardhq/switchboard/core"
)

var sessionPattern = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,127}$`)

// shellWrapper runs $1 as a script under bash, else sh, with the rest as
// its arguments: images without bash still serve the bash tool.
const shellWrapper = `s=$1; shift; if command -v bash >/dev/null 2>&1; then exec bash -c "$s" bash "$@"; fi; exec sh -c "$s" sh "$@"`

// Exec runs a command in the session's sandbox, creating or starting the
// container first when needed. A command that outlives its timeout (or
// whose ctx ends) is killed, and the result says why in Killed.
func (d *Docker) Exec(ctx context.Context, sessionID string, req core.ExecRequest) (*core.ExecResult, error) {
	if err := checkCommand(sessionID, req.Cmd); err != nil {
		return nil, err
	}
	b, err := d.acquire(sessionID)
	if err != nil {
		return nil, err
	}
	defer d.release(b)
	for attempt := 0; ; attempt++ {
		b.mu.Lock()
		id, err := d.ensure(ctx, b)
		b.mu.Unlock()
		if err != nil {
			return nil, err
		}
		res, err := d.run(ctx, b, id, req)
		if err == nil || attempt > 0 {
			return res, err
		}
		switch full, _ := d.pidsFull(ctx, id); {
		case isNotRunning(err):
			// The container stopped behind our back (killed, engine
			// restarted): start it again once.
			b.mu.Lock()
			b.running = false
			b.mu.Unlock()
		case full:
			// Left-over processes hold every pid, so nothing can start.
			d.log.Warn("sandbox full of processes; reclaiming", "session_id", sessionID, "how", d.reclaim(ctx, b, id))
		default:
			return nil, err
		}
	}
}

// checkCommand refuses a command no sandbox can run.
func checkCommand(sessionID string, cmd []string) error {
	if !sessionPattern.MatchString(sessionID) {
		return fmt.Errorf("session id %q cannot name a sandbox: %w", sessionID, core.ErrInvalid)
	}
	if len(cmd) == 0 {
		return fmt.Errorf("empty command: %w", core.ErrInvalid)
	}
	return nil
}

// run runs req in container id and kills it when it outlives its timeout.
func (d *Docker) run(ctx context.Context, b *box, id string, req core.ExecRequest) (*core.ExecResult, error) {
	timeout := req.Timeout
	if timeout <= 0 {
		timeout = d.cfg.CommandTimeout
	}
	maxOut := req.MaxOutput
	if maxOut <= 0 {
		maxOut = d.cfg.MaxOutput
	}
	cmd := req.Cmd
	if req.Shell {
		cmd = append([]string{"sh", "-c", shellWrapper, "sh"}, req.Cmd...)
	}
	dir := req.Dir
	if dir == "" {
		dir = core.SandboxWorkspace
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	stdout, stderr := newCapture(maxOut), newCapture(maxOut)
	code, err := d.execOnce(rctx, id, execSpec{cmd: cmd, dir: dir, stdin: req.Stdin, stdout: stdout, stderr: stderr})
	res := &core.ExecResult{ExitCode: code}
	res.Stdout, res.StdoutOmitted = stdout.result()
	res.Stderr, res.StderrOmitted = stderr.result()
	if rctx.Err() != nil {
		// Out of time, or the turn ended: stop what the command started.
		kctx := context.WithoutCancel(ctx)
		res.ExitCode = -1
		res.Killed = "stopped: the turn ended before the command did"
		if ctx.Err() == nil {
			res.Killed = fmt.Sprintf("timed out after %s", timeout)
		}
		// A shell that said its fork was refused met the limit, even when
		// the bomb's processes have died down by the time the count is read.
		if full, _ := d.pidsFull(kctx, id); full || forkRefused(res.Stderr) {
			res.Limit = fmt.Sprintf("the sandbox's process limit (%d) was reached", d.limits(b).Pids)
		}
		res.Killed += "; " + d.reclaim(kctx, b, id)
		return res, nil
	}
	if err != nil {
		return nil, err
	}
	// Only a SIGKILL or a refused fork or allocation is worth an exec to
	// read the cgroup's counters: other commands, failing ones included,
	// stay one exec.
	forkRefused := forkRefused(res.Stderr)
	if code == 137 || forkRefused || bytes.Contains(res.Stderr, []byte("Resource temporarily unavailable")) || bytes.Contains(res.Stderr, []byte("Cannot allocate memory")) {
		oom, pidsMax, ok := d.limitEvents(ctx, b, id)
		limits := d.limits(b)
		if code == 137 && oom {
			res.Killed = fmt.Sprintf("out of memory: the sandbox's memory limit is %d MiB", limits.MemoryBytes>>20)
		}
		if pidsMax || forkRefused || !ok {
			switch full, _ := d.pidsFull(ctx, id); {
			case full || !ok:
				// Processes the command left behind hold every pid (a fork
				// bomb whose first process exited): nothing else can run.
				res.Limit = fmt.Sprintf("the sandbox's process limit (%d) was reached and is still held by processes the command left; %s", limits.Pids, d.reclaim(ctx, b, id))
			default:
				res.Limit = fmt.Sprintf("the sandbox's process limit (%d) was reached: new processes were refused", limits.Pids)
			}
		}
	}
	return res, nil
}

// forkRefused reports whether a shell said, in stderr, that a fork was
// refused: at the pids limit, even when the counters cannot be read (they
// need a process of their own) or have not caught up.
func forkRefused(stderr []byte) bool {
	return bytes.Contains(stderr, []byte("fork: retry: Resource temporarily unavailable")) ||
		bytes.Contains(stderr, []byte("fork: Resource temporarily unavailable"))
}

// reclaim kills every process of the command user, or the whole container
// when that cannot even start (a fork bomb holds every pid), and says
// which it did.
func (d *Docker) reclaim(ctx context.Context, b *box, id string) string {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	kctx, kcancel := context.WithTimeout(ctx, 5*time.Second)
	// kill -1 signals every process the caller may signal but itself and
	// the container's init, which runs as another user; it fails when
	// there is none, which is as good.
	var out bytes.Buffer
	code, err := d.execOnce(kctx, id, execSpec{cmd: []string{"sh", "-c", "kill -9 -1 2>/dev/null; echo reclaimed"}, dir: "/", stdout: &out, stderr: &out})
	kcancel()
	if err == nil && code == 0 && strings.TrimSpace(out.String()) == "reclaimed" {
		return "the command and every process it started were killed"
	}
	if kerr := d.kill(ctx, b); kerr != nil {
		d.log.Error("kill sandbox", "session_id", b.session, "err", kerr)
		return "the sandbox could not be stopped"
	}
	d.log.Warn("sandbox killed: its processes could not be stopped one by one", "session_id", b.session, "kill_exit", code, "kill_output", out.String(), "err", err)
	return "the sandbox was restarted to stop it (files in " + core.SandboxWorkspace + " are kept; /tmp and background processes are not)"
}

// pidsFull tells whether the container's processes are at (or within two
// of) its pids limit.
func (d *Docker) pidsFull(ctx context.Context, id string) (bool, uint64) {
	cur, limit, ok := d.pids(ctx, id)
	return ok && limit > 0 && cur+2 >= limit, limit
}

// pids reads the container's process count and limit.
func (d *Docker) pids(ctx context.Context, id string) (cur, limit uint64, ok bool) {
	res, err := d.cli.ContainerStats(ctx, id, client.ContainerStatsOptions{})
	if err != nil {
		return 0, 0, false
	}
	defer res.Body.Close()
	var st container.StatsResponse
	if err := json.NewDecoder(res.Body).Decode(&st); err != nil {
		return 0, 0, false
	}
	return st.PidsStats.Current, st.PidsStats.Limit, true
}

// limitEvents tells whether the kernel's OOM killer struck, and whether
// forks were refused at the pids limit, in the container since last asked.
func (d *Docker) limitEvents(ctx context.Context, b *box, id string) (oom, pidsMax, ok bool) {
	var out bytes.Buffer
	// cgroup v2 files first, then v1's.
	script := `for f in /sys/fs/cgroup/memory.events /sys/fs/cgroup/memory/memory.oom_control; do [ -r $f ] && grep '^oom_kill ' $f && break; done
for f in /sys/fs/cgroup/pids.events /sys/fs/cgroup/pids/pids.events; do [ -r $f ] && grep '^max ' $f && break; done; true`
	if code, err := d.execOnce(ctx, id, execSpec{cmd: []string{"sh", "-c", script}, dir: "/", stdout: &out, stderr: &out}); err != nil || code != 0 {
		return false, false, false
	}
	var ooms, maxes uint64
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), " ")
		n, _ := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		switch k {
		case "oom_kill":
			ooms = n
		case "max":
			maxes = n
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	oom, pidsMax = ooms > b.oomKills, maxes > b.pidsMax
	b.oomKills, b.pidsMax = ooms, maxes
	return oom, pidsMax, true
}

// execSpec is one process to run with docker exec.
type execSpec struct {
	cmd            []string
	dir            string
	stdin          []byte
	stdout, stderr interface{ Write([]byte) (int, error) }
}

// execOnce runs one process as the command user and returns its exit code.
// When ctx ends first it returns at once, leaving the process running.
func (d *Docker) execOnce(ctx context.Context, id string, s execSpec) (int, error) {
	ex, err := d.cli.ExecCreate(ctx, id, client.ExecCreateOptions{
		User:         d.cfg.User,
		AttachStdin:  s.stdin != nil,
		AttachStdout: true,
		AttachStderr: true,
		Env:          []string{"HOME=" + d.cfg.Home},
		WorkingDir:   s.dir,
		Cmd:          s.cmd,
	})
	if err != nil {
		return 0, fmt.Errorf("exec in sandbox: %w", err)
	}
	att, err := d.cli.ExecAttach(ctx, ex.ID, client.ExecAttachOptions{})
	if err != nil {
		return 0, fmt.Errorf("attach to sandbox exec: %w", err)
	}
	defer att.Close()
	if s.stdin != nil {
		go func() {
			// A command that exits without reading gets its stdin closed.
			_, _ = att.Conn.Write(s.stdin)
			_ = att.CloseWrite()
		}()
	}
	done := make(chan error, 1)
	go func() {
		_, err := stdcopy.StdCopy(s.stdout, s.stderr, att.Reader)
		done <- err
	}()
	select {
	case err = <-done:
	case <-ctx.Done():
		att.Close()
		<-done
		return -1, ctx.Err()
	}
	if err != nil {
		return 0, fmt.Errorf("read sandbox exec output: %w", err)
	}
	// The stream can end a moment before the engine records the exit.
	for range 200 {
		insp, err := d.cli.ExecInspect(ctx, ex.ID, client.ExecInspectOptions{})
		if err != nil {
			return 0, fmt.Errorf("inspect sandbox exec: %w", err)
		}
		if !insp.Running {
			return insp.ExitCode, nil
		}
		select {
		case <-ctx.Done():
			return -1, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
	return 0, errors.New("sandbox exec: the engine never reported the exit code")
}

// isNotRunning recognises the engine's refusal to exec in a stopped
// container.
func isNotRunning(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	return cerrdefs.IsNotFound(err) || (cerrdefs.IsConflict(err) && strings.Contains(msg, "is not running")) ||
		strings.Contains(msg, "is not running")
}
