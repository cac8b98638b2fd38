package sandbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/sandboximage"
	"github.com/switchboardhq/switchboard/sandbox/hands"
)

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func newSession() string { return "ses_test" + randomHex(6) }

// newDocker connects a backend on the test image under a deployment of its
// own, removed with everything in it when the test ends.
func newDocker(t testing.TB, mod ...func(*Config)) *Docker {
	t.Helper()
	cfg := Config{
		Image:       sandboximage.ForTest(t),
		Deployment:  "t" + randomHex(5),
		IdleTimeout: time.Minute,
		Logger:      slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	for _, m := range mod {
		m(&cfg)
	}
	ctx := context.Background()
	d, err := Connect(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := d.Purge(ctx); err != nil {
			t.Errorf("purge: %v", err)
		}
		_ = d.Close(ctx)
	})
	return d
}

// sh runs a script in the session's sandbox and fails the test when the
// sandbox itself fails.
func sh(t testing.TB, d *Docker, session, script string) *core.ExecResult {
	t.Helper()
	res, err := d.Exec(context.Background(), session, core.ExecRequest{Cmd: []string{script}, Shell: true, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("exec %q: %v", script, err)
	}
	return res
}

// tool calls a hands tool in the session's sandbox.
func tool(t testing.TB, tools []core.Tool, session, name string, input map[string]any) core.ToolResult {
	t.Helper()
	for _, tl := range tools {
		if tl.Def().Name != name {
			continue
		}
		raw, _ := json.Marshal(input)
		res, err := tl.Call(context.Background(), core.ToolCall{SessionID: session, ID: "toolu_" + randomHex(4), Name: name, Input: raw})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}
	t.Fatalf("no tool %s", name)
	return core.ToolResult{}
}

func containerState(t testing.TB, d *Docker, session string) (id string, running bool) {
	t.Helper()
	info, err := d.cli.ContainerInspect(context.Background(), d.cfg.containerName(session), client.ContainerInspectOptions{})
	if err != nil {
		t.Fatalf("inspect the sandbox of %s: %v", session, err)
	}
	return info.Container.ID, info.Container.State.Running
}

// TestHandsTools: bash writes and reads a file; edit, glob, grep, read, ls
// and write work on it.
func TestHandsTools(t *testing.T) {
	d := newDocker(t)
	tools := hands.Tools(d, hands.Options{})
	s := newSession()
	steps := []struct {
		name    string
		input   map[string]any
		want    []string
		isError bool
	}{
		{"bash", map[string]any{"command": "mkdir -p src && printf 'package main\\n\\nfunc main() {\\n\\tprintln(\"hello\")\\n}\\n' > src/main.go && cat src/main.go"}, []string{`println("hello")`}, false},
		{"bash", map[string]any{"command": "echo out; echo err >&2; exit 3"}, []string{"out\n[stderr]\nerr\n[exit code 3]"}, true},
		{"read", map[string]any{"path": "src/main.go"}, []string{"     4\t\tprintln(\"hello\")"}, false},
		{"read", map[string]any{"path": "/workspace/src/main.go", "offset": 3, "limit": 1}, []string{"     3\tfunc main() {\n", "pass offset 4"}, false},
		{"edit", map[string]any{"path": "src/main.go", "old_string": `println("hello")`, "new_string": `println("edited")`}, []string{"edited /workspace/src/main.go at line 4"}, false},
		{"edit", map[string]any{"path": "src/main.go", "old_string": "nowhere", "new_string": "x"}, []string{"was not found"}, true},
		{"write", map[string]any{"path": "src/util/util.go", "content": "package util\n// util helps\n"}, []string{"wrote 27 bytes to /workspace/src/util/util.go"}, false},
		{"edit", map[string]any{"path": "src/util/util.go", "old_string": "util", "new_string": "x"}, []string{"occurs 2 times"}, true},
		{"glob", map[string]any{"pattern": "**/*.go"}, []string{"/workspace/src/main.go\n/workspace/src/util/util.go\n"}, false},
		{"glob", map[string]any{"pattern": "*.go"}, []string{"no files"}, false},
		{"grep", map[string]any{"pattern": "edit(ed)?\\b", "glob": "*.go"}, []string{"/workspace/src/main.go:4:"}, false},
		{"grep", map[string]any{"pattern": "HELPS", "ignore_case": true, "path": "src"}, []string{"/workspace/src/util/util.go:2:// util helps"}, false},
		{"grep", map[string]any{"pattern": "absent-string"}, []string{"no matches"}, false},
		{"ls", map[string]any{"path": "src"}, []string{"main.go", "util"}, false},
		{"read", map[string]any{"path": "missing.txt"}, []string{"no such file"}, true},
		{"read", map[string]any{"path": "src"}, []string{"is a directory"}, true},
		{"bash", map[string]any{"command": "head -c 100 /dev/urandom > blob.bin; printf 'a\\0b' >> blob.bin"}, []string{"(no output)"}, false},
		{"read", map[string]any{"path": "blob.bin"}, []string{"binary file"}, true},
		{"bash", map[string]any{"command": "cat src/main.go; id -un; pwd"}, []string{`println("edited")`, "agent\n/workspace"}, false},
		{"bash", map[string]any{"command": "seq 1 200000"}, []string{"1\n2\n", "bytes omitted", "199999\n200000"}, false},
		{"write", map[string]any{"path": "/etc/evil", "content": "x"}, []string{"Read-only file system"}, true},
	}
	for i, st := range steps {
		res := tool(t, tools, s, st.name, st.input)
		for _, w := range st.want {
			if !strings.Contains(res.Output, w) {
				t.Errorf("step %d %s %v: output %q lacks %q", i, st.name, st.input, res.Output, w)
			}
		}
		if res.IsError != st.isError {
			t.Errorf("step %d %s: is_error %v; output %q", i, st.name, res.IsError, res.Output)
		}
	}
}

// TestShFallback: an image without bash still runs the bash tool, with sh.
func TestShFallback(t *testing.T) {
	base := sandboximage.ForTest(t)
	cli, err := NewClient("")
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	image := noBashImage(t, cli, base)
	d := newDocker(t, func(c *Config) { c.Image = image })
	tools := hands.Tools(d, hands.Options{})
	s := newSession()
	res := tool(t, tools, s, "bash", map[string]any{"command": `echo "shell:$0"; command -v bash || echo no-bash`})
	if res.IsError || !strings.Contains(res.Output, "shell:sh") || !strings.Contains(res.Output, "no-bash") {
		t.Fatalf("bash tool without bash: %+v", res)
	}
	if r := tool(t, tools, s, "write", map[string]any{"path": "a.txt", "content": "one\ntwo\n"}); r.IsError {
		t.Fatal(r.Output)
	}
	if r := tool(t, tools, s, "read", map[string]any{"path": "a.txt"}); r.IsError || !strings.Contains(r.Output, "     2\ttwo") {
		t.Fatalf("read without bash: %+v", r)
	}
}

// noBashImage commits the test image minus bash, once per base image.
func noBashImage(t testing.TB, cli *client.Client, base string) string {
	t.Helper()
	ctx := context.Background()
	tag := base + "-nobash"
	if _, err := cli.ImageInspect(ctx, tag); err == nil {
		return tag
	}
	c, err := cli.ContainerCreate(ctx, client.ContainerCreateOptions{Image: base, Config: &container.Config{
		User:       "0:0",
		Entrypoint: []string{"rm", "-f", "/usr/bin/bash"},
		Cmd:        []string{"/usr/bin/rbash"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true})
	if _, err := cli.ContainerStart(ctx, c.ID, client.ContainerStartOptions{}); err != nil {
		t.Fatal(err)
	}
	wait := cli.ContainerWait(ctx, c.ID, client.ContainerWaitOptions{})
	select {
	case err := <-wait.Error:
		t.Fatal(err)
	case r := <-wait.Result:
		if r.StatusCode != 0 {
			t.Fatalf("removing bash exited %d", r.StatusCode)
		}
	}
	if _, err := cli.ContainerCommit(ctx, c.ID, client.ContainerCommitOptions{Reference: tag}); err != nil {
		t.Fatal(err)
	}
	return tag
}

// idleTimer stands in for a box's idle timer (Config.AfterFunc): it runs
// out only when the test fires it.
type idleTimer struct {
	mu     sync.Mutex
	d      time.Duration
	f      func()
	active bool
}

func manualTimers(d time.Duration, f func()) Timer { return &idleTimer{d: d, f: f, active: true} }

func (tm *idleTimer) Stop() bool {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	was := tm.active
	tm.active = false
	return was
}

func (tm *idleTimer) Reset(d time.Duration) bool {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	was := tm.active
	tm.d, tm.active = d, true
	return was
}

// idleTimerOf is the session's armed idle timer and its duration; the test
// fails when the session has none armed.
func idleTimerOf(t testing.TB, d *Docker, session string) (*idleTimer, time.Duration) {
	t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	b := d.boxes[session]
	if b == nil || b.timer == nil {
		t.Fatalf("session %s has no idle timer", session)
	}
	tm := b.timer.(*idleTimer)
	tm.mu.Lock()
	defer tm.mu.Unlock()
	if !tm.active {
		t.Fatalf("session %s's idle timer is not armed", session)
	}
	return tm, tm.d
}

// fire runs the timer out, as the idle timeout passing would.
func (tm *idleTimer) fire() {
	tm.mu.Lock()
	tm.active = false
	tm.mu.Unlock()
	tm.f()
}

// TestHibernation: after the idle timeout the container is stopped, the
// gateway keeps nothing for the session, the files survive, and the next
// command starts the same container again. The idle timer is the test's.
func TestHibernation(t *testing.T) {
	d := newDocker(t, func(c *Config) { c.IdleTimeout = 700 * time.Millisecond; c.AfterFunc = manualTimers })
	s := newSession()
	if r := sh(t, d, s, "echo kept > /workspace/f && echo gone > /tmp/g"); r.ExitCode != 0 {
		t.Fatalf("%+v", r)
	}
	id, running := containerState(t, d, s)
	if !running {
		t.Fatal("not running after a command")
	}
	timer, idle := idleTimerOf(t, d, s)
	if idle != 700*time.Millisecond {
		t.Fatalf("idle timer of %v, want the configured 700ms", idle)
	}
	timer.fire() // hibernates, synchronously
	_, running = containerState(t, d, s)
	d.mu.Lock()
	warm := len(d.boxes)
	d.mu.Unlock()
	if running || warm != 0 {
		t.Fatalf("still running=%v, %d boxes after the idle timeout", running, warm)
	}
	r := sh(t, d, s, "cat /workspace/f; cat /tmp/g 2>/dev/null || echo tmp-cleared")
	if string(r.Stdout) != "kept\ntmp-cleared\n" {
		t.Fatalf("after waking: %q", r.Stdout)
	}
	id2, running := containerState(t, d, s)
	if id2 != id || !running {
		t.Fatalf("woke %s (running %v), want %s again", id2, running, id)
	}
}

// TestRemoveAndReap: archiving removes a sandbox and its workspace; at
// start-up the reaper removes those of gone or archived sessions and of
// sessions another replica ran since, and puts running ones of live
// sessions back on idle timers.
func TestRemoveAndReap(t *testing.T) {
	d := newDocker(t)
	ctx := context.Background()
	live, gone, archived, removed, moved := newSession(), newSession(), newSession(), newSession(), newSession()
	for _, s := range []string{live, gone, archived, removed, moved} {
		sh(t, d, s, "echo hi > /workspace/f")
	}
	if err := d.Remove(ctx, removed); err != nil {
		t.Fatal(err)
	}
	if _, err := d.cli.ContainerInspect(ctx, d.cfg.containerName(removed), client.ContainerInspectOptions{}); err == nil {
		t.Fatal("the removed session's container is still there")
	}
	if _, err := d.cli.VolumeInspect(ctx, d.cfg.volumeName(removed), client.VolumeInspectOptions{}); err == nil {
		t.Fatal("the removed session's workspace is still there")
	}

	// A command left running by the process that dies.
	sh(t, d, live, "nohup sleep 1000 >/dev/null 2>&1 &")
	if n := userSleeps(t, d, live); n != 1 {
		t.Fatalf("%d sleeps before the restart", n)
	}

	// A second process of the same deployment, as after a SIGKILL.
	d2, err := Connect(ctx, d.cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close(ctx)
	status := func(_ context.Context, id string) (SessionState, error) {
		switch id {
		case live:
			return SessionState{Status: core.StatusIdle}, nil
		case archived:
			return SessionState{Status: core.StatusArchived}, nil
		case moved:
			return SessionState{Status: core.StatusIdle, Elsewhere: true}, nil
		}
		return SessionState{}, fmt.Errorf("session %s: %w", id, core.ErrNotFound)
	}
	res, err := d2.Reap(ctx, status)
	if err != nil {
		t.Fatal(err)
	}
	if res.Removed != 3 || res.Adopted != 1 {
		t.Fatalf("reap %+v, want 3 removed and 1 adopted", res)
	}
	if _, err := d.cli.VolumeInspect(ctx, d.cfg.volumeName(moved), client.VolumeInspectOptions{}); err == nil {
		t.Fatal("the moved session's workspace is still there")
	}
	list, err := d.cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: client.Filters{}.Add("label", LabelDeployment+"="+d.cfg.Deployment)})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Labels[LabelSession] != live {
		t.Fatalf("containers left: %+v", list.Items)
	}
	d2.mu.Lock()
	adopted := d2.boxes[live]
	d2.mu.Unlock()
	if adopted == nil || adopted.timer == nil {
		t.Fatal("the live session's running sandbox was not put on an idle timer")
	}
	if r := sh(t, d2, live, "cat /workspace/f"); string(r.Stdout) != "hi\n" {
		t.Fatalf("the adopted sandbox lost its file: %q", r.Stdout)
	}
	if n := userSleeps(t, d2, live); n != 0 {
		t.Fatalf("the dead process's command still runs after the restart (%d)", n)
	}
	if _, err := d2.Exec(ctx, "bad/id", core.ExecRequest{Cmd: []string{"true"}}); !errors.Is(err, core.ErrInvalid) {
		t.Fatalf("a bad session id: %v", err)
	}
}

// userSleeps counts the sleep processes of the command user (the init's
// own sleep runs as another user).
func userSleeps(t testing.TB, d *Docker, session string) int {
	t.Helper()
	r := sh(t, d, session, `n=0; for p in /proc/[0-9]*; do [ "$(stat -c %u $p 2>/dev/null)" = 1000 ] && [ "$(cat $p/comm 2>/dev/null)" = sleep ] && n=$((n+1)); done; echo $n`)
	var n int
	if _, err := fmt.Sscan(string(r.Stdout), &n); err != nil {
		t.Fatalf("count sleeps: %q %q", r.Stdout, r.Stderr)
	}
	return n
}

// TestCancelKills: a command whose turn ends (an interrupt, a deadline) is
// killed with what it started, and the sandbox stays usable.
func TestCancelKills(t *testing.T) {
	d := newDocker(t)
	s := newSession()
	sh(t, d, s, "true")
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	res, err := d.Exec(ctx, s, core.ExecRequest{Cmd: []string{"sleep 300 & sleep 301"}, Shell: true})
	if err != nil {
		t.Fatal(err)
	}
	// Killed, the call returns long before the sleeps would end.
	if time.Since(start) > time.Minute || !strings.Contains(res.Killed, "the turn ended") || !strings.Contains(res.Killed, "every process it started were killed") {
		t.Fatalf("after %s: %+v", time.Since(start), res)
	}
	if n := userSleeps(t, d, s); n != 0 {
		t.Fatalf("%d sleeps survive the cancelled command", n)
	}
}
