package sandbox

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// startProcess starts cmd in the session's sandbox for the test.
func startProcess(t *testing.T, d *Docker, session string, req core.ProcessRequest) core.Process {
	t.Helper()
	p, err := d.Start(context.Background(), session, req)
	if err != nil {
		t.Fatalf("start %q: %v", req.Cmd, err)
	}
	return p
}

func waitDone(t *testing.T, p core.Process) {
	t.Helper()
	select {
	case <-p.Done():
	case <-time.After(time.Minute):
		t.Fatal("the process never ended")
	}
}

// TestProcessStdio: a started process reads its stdin and writes its
// stdout as a stream, runs in its working directory with HOME on the
// workspace volume and the environment given, and reports its exit
// status and the end of its stderr.
func TestProcessStdio(t *testing.T) {
	d := newDocker(t)
	session := newSession()
	p := startProcess(t, d, session, core.ProcessRequest{
		Cmd: []string{"sh", "-c", `echo "home=$HOME dir=$(pwd) greeting=$GREETING"; [ -d "$HOME" ] && echo home-exists; echo warming up >&2
while read -r line; do echo "got $line"; [ "$line" = bye ] && exit 3; done`},
		Env: map[string]string{"GREETING": "hi"},
	})
	out := bufio.NewReader(p.Stdout())
	line := func() string {
		t.Helper()
		s, err := out.ReadString('\n')
		if err != nil {
			t.Fatalf("read stdout: %v (stderr %q)", err, p.Stderr())
		}
		return strings.TrimSpace(s)
	}
	if got, want := line(), fmt.Sprintf("home=%s dir=%s greeting=hi", core.SandboxAgentHome, core.SandboxWorkspace); got != want {
		t.Fatalf("first line %q, want %q", got, want)
	}
	if got := line(); got != "home-exists" {
		t.Fatalf("the agent's home was not made: %q", got)
	}
	for _, msg := range []string{"one", "two"} {
		if _, err := io.WriteString(p.Stdin(), msg+"\n"); err != nil {
			t.Fatal(err)
		}
		if got := line(); got != "got "+msg {
			t.Fatalf("answer %q, want %q", got, "got "+msg)
		}
	}
	if _, err := io.WriteString(p.Stdin(), "bye\n"); err != nil {
		t.Fatal(err)
	}
	waitDone(t, p)
	if p.ExitCode() != 3 {
		t.Fatalf("exit code %d, want 3", p.ExitCode())
	}
	if !strings.Contains(p.Stderr(), "warming up") {
		t.Fatalf("stderr %q", p.Stderr())
	}
	// The agent's home is on the workspace volume: what it wrote there
	// outlives the container's stop.
	sh(t, d, session, "echo state > "+core.SandboxAgentHome+"/state")
	b, _ := d.acquire(session)
	b.mu.Lock()
	if err := d.stop(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	b.mu.Unlock()
	d.release(b)
	if res := sh(t, d, session, "cat "+core.SandboxAgentHome+"/state"); strings.TrimSpace(string(res.Stdout)) != "state" {
		t.Fatalf("the agent's home did not survive hibernation: %q %q", res.Stdout, res.Stderr)
	}
}

// TestProcessKill: Kill ends the process and what it started, and
// nothing else of the sandbox; a sandbox that stops ends its processes.
func TestProcessKill(t *testing.T) {
	d := newDocker(t)
	session := newSession()
	other := startProcess(t, d, session, core.ProcessRequest{Cmd: []string{"sleep", "600"}})
	p := startProcess(t, d, session, core.ProcessRequest{Cmd: []string{"sh", "-c", "sleep 777 & echo started; wait"}})
	if s, err := bufio.NewReader(p.Stdout()).ReadString('\n'); err != nil || strings.TrimSpace(s) != "started" {
		t.Fatalf("first line %q (%v)", s, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := p.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	waitDone(t, p)
	if res := sh(t, d, session, "ps -eo args 2>/dev/null || cat /proc/[0-9]*/cmdline | tr '\\0' ' '"); strings.Contains(string(res.Stdout), "sleep 777") || !strings.Contains(string(res.Stdout), "sleep 600") {
		t.Fatalf("after Kill the sandbox runs %q: want sleep 600 alive and sleep 777 gone", res.Stdout)
	}
	select {
	case <-other.Done():
		t.Fatal("Kill ended another process of the sandbox")
	default:
	}
	if err := d.Remove(ctx, session); err != nil {
		t.Fatal(err)
	}
	waitDone(t, other)
}

// TestProcessOutlivesAFailedInspect: an engine that fails once to say
// whether a process runs (a busy machine) does not end it: the process
// keeps its stdin and its output.
func TestProcessOutlivesAFailedInspect(t *testing.T) {
	e := newEngineProxy(t)
	d := newDocker(t, func(c *Config) { c.Host = e.host })
	p := startProcess(t, d, newSession(), core.ProcessRequest{Cmd: []string{"sh", "-c", `read -r l; echo "got $l"`}})
	exec := p.(*process).exec
	e.failInspects(exec, 1)
	for failed, answered := false, false; !answered; {
		select {
		case a := <-e.inspected:
			if a.exec == exec {
				answered = failed && a.running
				failed = failed || a.failed
			}
		case <-p.Done():
			t.Fatalf("a failed inspect ended the process (stderr %q)", p.Stderr())
		}
	}
	answer(t, p, "one", "got one")
	waitDone(t, p)
	if p.ExitCode() != 0 {
		t.Fatalf("exit code %d", p.ExitCode())
	}
}

// TestProcessStartedLate: the engine answers the attach before it starts
// the exec, and inspected in between reports it not running; a process
// whose start comes late is not taken for ended.
func TestProcessStartedLate(t *testing.T) {
	e := newEngineProxy(t)
	d := newDocker(t, func(c *Config) { c.Host = e.host })
	session := newSession()
	sh(t, d, session, "true") // the sandbox is up: the next exec started is the process's
	e.holdNextStart()
	p := startProcess(t, d, session, core.ProcessRequest{Cmd: []string{"sh", "-c", `read -r l; echo "got $l"`}})
	answer(t, p, "one", "got one")
	waitDone(t, p)
}

// TestProcessEndsWithoutAPid: a process that exited 0 is ended on an
// engine that then reports no pid for its exec and keeps its stream open,
// since it was seen to start.
func TestProcessEndsWithoutAPid(t *testing.T) {
	e := newEngineProxy(t)
	e.beTerse()
	d := newDocker(t, func(c *Config) { c.Host = e.host })
	p := startProcess(t, d, newSession(), core.ProcessRequest{Cmd: []string{"sh", "-c", `read -r l; echo "got $l"`}})
	answer(t, p, "one", "got one")
	waitDone(t, p)
	if p.ExitCode() != 0 {
		t.Fatalf("exit code %d, want 0", p.ExitCode())
	}
}

// answer writes a line to the process and wants its next line of stdout
// (once per process: what its reader buffers past the line is lost).
func answer(t *testing.T, p core.Process, line, want string) {
	t.Helper()
	if _, err := io.WriteString(p.Stdin(), line+"\n"); err != nil {
		t.Fatal(err)
	}
	got, err := bufio.NewReader(p.Stdout()).ReadString('\n')
	if strings.TrimSpace(got) != want {
		t.Fatalf("answer %q (%v), want %q (stderr %q)", got, err, want, p.Stderr())
	}
}

// TestProcessHold: a held process keeps its sandbox from hibernating;
// released, the idle timer stops the sandbox and ends the process.
func TestProcessHold(t *testing.T) {
	d := newDocker(t, func(c *Config) { c.AfterFunc = manualTimers })
	session := newSession()
	p := startProcess(t, d, session, core.ProcessRequest{Cmd: []string{"sleep", "600"}})
	release := p.Hold()
	d.mu.Lock()
	b := d.boxes[session]
	armed := b != nil && b.timer != nil && b.timer.(*idleTimer).active
	d.mu.Unlock()
	if armed {
		t.Fatal("an idle timer was armed while the process was held")
	}
	release()
	timer, _ := idleTimerOf(t, d, session)
	timer.fire() // hibernates, synchronously
	waitDone(t, p)
}

// TestProcessByName: a process started under a name its sandbox knows
// ends the one started under it before, and nothing else.
func TestProcessByName(t *testing.T) {
	d := newDocker(t)
	session := newSession()
	other := startProcess(t, d, session, core.ProcessRequest{Cmd: []string{"sleep", "600"}})
	first := startProcess(t, d, session, core.ProcessRequest{Cmd: []string{"sleep", "601"}, Name: "acp-agent"})
	second := startProcess(t, d, session, core.ProcessRequest{Cmd: []string{"sleep", "602"}, Name: "acp-agent"})
	waitDone(t, first)
	select {
	case <-second.Done():
		t.Fatal("the new process ended")
	case <-other.Done():
		t.Fatal("a process of another name ended")
	default:
	}
	if _, err := d.Start(context.Background(), session, core.ProcessRequest{Cmd: []string{"true"}, Name: "../etc/passwd"}); err == nil {
		t.Fatal("a name with a path was taken")
	}
}
