package sandbox

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakenpm"
	"github.com/switchboardhq/switchboard/fixtures/sandboximage"
)

// TestEnvironmentPackages: an environment's apt packages are installed
// through the proxy from the Debian mirror into a prepared image, built
// once (ContainerCommit) by its first session and reused by the next;
// its variables, resources and idle timeout apply; and a changed
// environment takes effect at the next start, the workspace kept.
func TestEnvironmentPackages(t *testing.T) {
	d, s := newEgressDocker(t, func(c *Config, _ *egressSetup) { c.AfterFunc = manualTimers })
	env := &core.Environment{
		Name:               "jq",
		Packages:           core.Packages{Apt: []string{"jq"}},
		Env:                map[string]string{"GREETING": "hello from the environment"},
		Resources:          core.Resources{MemoryMB: 300, Pids: 200, DiskMB: 64},
		IdleTimeoutSeconds: 1,
	}
	first, second := newSession(), newSession()
	s.envs.set(first, env)
	s.envs.set(second, env)

	start := time.Now()
	r := sh(t, d, first, `jq --version && echo "$GREETING" && cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max
cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes
df -k /tmp | awk 'NR==2{print $2}'; id -u; echo kept > /workspace/f`)
	built := time.Since(start)
	// jq's version is the mirror's business; the rest is ours.
	want := fmt.Sprintf("\nhello from the environment\n200\n%d\n%d\n1000\n", 300<<20, 64<<10)
	if !strings.HasPrefix(string(r.Stdout), "jq-1.") || !strings.HasSuffix(string(r.Stdout), want) {
		t.Fatalf("in the first session:\n%s%s\nwant:\n%s", r.Stdout, r.Stderr, want)
	}
	if n := d.builds.Load(); n != 1 {
		t.Fatalf("%d builds for the first session, want 1", n)
	}
	start = time.Now()
	if r := sh(t, d, second, "jq -n '1+1'"); string(r.Stdout) != "2\n" {
		t.Fatalf("in the second session: %q %q", r.Stdout, r.Stderr)
	}
	t.Logf("first command: %s (building the image); the second session's first: %s", built.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	if n := d.builds.Load(); n != 1 {
		t.Fatalf("%d builds after the second session, want 1: the image was not reused", n)
	}
	idA, _ := containerState(t, d, first)
	idB, _ := containerState(t, d, second)
	ia, _ := d.cli.ContainerInspect(context.Background(), idA, client.ContainerInspectOptions{})
	ib, _ := d.cli.ContainerInspect(context.Background(), idB, client.ContainerInspectOptions{})
	if img := ia.Container.Config.Image; img != ib.Container.Config.Image || !strings.HasPrefix(img, PreparedRepo+":") {
		t.Fatalf("images %s and %s, want one prepared image", img, ib.Container.Config.Image)
	}

	// The environment's own idle timeout (1 s) is the sandbox's, and
	// hibernates it when it runs out.
	timer, idle := idleTimerOf(t, d, first)
	if idle != time.Second {
		t.Fatalf("idle timer of %v, want the environment's 1s", idle)
	}
	timer.fire()
	if _, running := containerState(t, d, first); running {
		t.Fatal("the environment's idle timeout did not hibernate the sandbox")
	}
	// A changed environment: the next start makes the container again.
	changed := *env
	changed.Env = map[string]string{"GREETING": "changed"}
	s.envs.set(first, &changed)
	if r := sh(t, d, first, `echo "$GREETING"; cat /workspace/f`); string(r.Stdout) != "changed\nkept\n" {
		t.Fatalf("after the change: %q %q", r.Stdout, r.Stderr)
	}
	if again, _ := containerState(t, d, first); again == idA {
		t.Fatal("the container was not made again for the changed environment")
	}
	if n := d.builds.Load(); n != 1 {
		t.Fatalf("%d builds: a variable's change rebuilt the image", n)
	}

	// An environment the session names that is gone: a clear error, and
	// the container is not started on a guess.
	gone := newSession()
	s.envs.set(gone, nil)
	if _, err := d.Exec(context.Background(), gone, core.ExecRequest{Cmd: []string{"true"}}); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("a session whose environment is gone: %v", err)
	}
}

// TestEnvironmentNPM: an environment's npm packages install from the npm
// registry the gateway names (here a fake one on the host, reached
// through the proxy) into an image with Node from Debian (as the full
// image has it), and the package's binary runs in the sandbox: how an
// ACP adapter is installed.
func TestEnvironmentNPM(t *testing.T) {
	node := sandboximage.ForTestNode(t)
	reg := fakenpm.Start(t, sandboximage.HostBridgeAddress(t), fakenpm.Package{Name: "hello-acp", Version: "1.0.0", Script: `console.log("hello from npm, node " + process.version)`})
	d, s := newEgressDocker(t, func(c *Config, _ *egressSetup) { c.Egress.NPMRegistry = reg.URL })
	env := &core.Environment{Name: "node", Image: node, Packages: core.Packages{Npm: []string{"hello-acp"}}}
	session := newSession()
	s.envs.set(session, env)
	r := sh(t, d, session, "hello-acp")
	if r.ExitCode != 0 || !strings.HasPrefix(string(r.Stdout), "hello from npm, node v") {
		t.Fatalf("the package's binary: exit %d %q %q", r.ExitCode, r.Stdout, r.Stderr)
	}
	if gets := reg.Gets(); len(gets) < 2 {
		t.Fatalf("the registry was asked %v", gets)
	}
}
