package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/sandboximage"
	"github.com/switchboardhq/switchboard/sandbox/hands"
)

var testLimits = Limits{MemoryBytes: 128 << 20, Pids: 128, NanoCPUs: 1e9}

// TestContainment: limits and hardening are real inside the container,
// runaway commands end as tool errors with a reason while other sessions
// keep working, and with the egress proxy in place the proxy's port is
// the only thing of the host a sandbox reaches.
func TestContainment(t *testing.T) {
	d, _ := newEgressDocker(t, func(c *Config, _ *egressSetup) { c.Limits = testLimits })
	tools := hands.Tools(d, hands.Options{})
	a, b := newSession(), newSession()

	t.Run("limits are real", func(t *testing.T) {
		r := sh(t, d, a, `cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max
cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes`)
		want := fmt.Sprintf("%d\n%d\n", testLimits.Pids, testLimits.MemoryBytes)
		if string(r.Stdout) != want {
			t.Fatalf("pids.max and memory.max read %q, want %q (stderr %q)", r.Stdout, want, r.Stderr)
		}
	})

	t.Run("hardening", func(t *testing.T) {
		r := sh(t, d, a, `id -u; grep -E '^(CapEff|NoNewPrivs):' /proc/self/status | tr -s '\t ' ' '
touch /usr/x 2>&1 | grep -o 'Read-only file system'
ls /var/run/docker.sock /run/docker.sock 2>&1 | grep -c 'No such file'
grep -c docker.sock /proc/mounts; true`)
		want := "1000\nCapEff: 0000000000000000\nNoNewPrivs: 1\nRead-only file system\n2\n0\n"
		if string(r.Stdout) != want {
			t.Fatalf("inside the sandbox:\n%s\nwant:\n%s", r.Stdout, want)
		}
		info, err := d.cli.ContainerInspect(context.Background(), d.cfg.containerName(a), client.ContainerInspectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		hc := info.Container.HostConfig
		if hc.Privileged || len(hc.Binds) != 0 || hc.NetworkMode.IsHost() || !hc.ReadonlyRootfs || len(hc.CapDrop) != 1 || hc.CapDrop[0] != "ALL" || len(hc.CapAdd) != 0 {
			t.Fatalf("host config %+v", hc)
		}
		for _, m := range info.Container.Mounts {
			if m.Type != "volume" || m.Destination != core.SandboxWorkspace {
				t.Fatalf("unexpected mount %+v", m)
			}
		}
	})

	runaway := []struct {
		name, command string
		timeout       int
		want          []string
	}{
		// The command forks on after starting the bomb, so it meets the
		// limit however slowly the bomb grows on a busy machine (it fails
		// to fork, or times out with every pid held), rather than exiting
		// before the limit is reached.
		{"fork bomb", `bomb() { bomb | bomb & }; bomb; while sleep 0.1; do :; done`, 20, []string{"process limit (128) was reached"}},
		// The timeout is far past what the allocation takes, even on a
		// busy machine: the memory limit ends it.
		{"memory hog", `tail /dev/zero`, 120, []string{"out of memory", "128 MiB"}},
		{"endless loop", `while :; do :; done`, 2, []string{"timed out after 2s", "killed"}},
	}
	for _, c := range runaway {
		t.Run(c.name, func(t *testing.T) {
			stop := make(chan struct{})
			var worst time.Duration
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				// Another session keeps answering meanwhile.
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					case <-time.After(200 * time.Millisecond):
					}
					start := time.Now()
					r := sh(t, d, b, "echo ok")
					worst = max(worst, time.Since(start))
					if string(r.Stdout) != "ok\n" {
						t.Errorf("the other session answered %+v", r)
					}
				}
			}()
			res := tool(t, tools, a, "bash", map[string]any{"command": c.command, "timeout_seconds": c.timeout})
			close(stop)
			wg.Wait()
			if !res.IsError {
				t.Fatalf("not a tool error: %q", res.Output)
			}
			for _, w := range c.want {
				if !strings.Contains(res.Output, w) {
					t.Errorf("result %q lacks %q", res.Output, w)
				}
			}
			// How long it took is the machine's business (a busy one is
			// slow); that it kept answering correctly is the claim.
			t.Logf("the other session's slowest answer meanwhile: %s", worst)
			if r := sh(t, d, a, "echo back"); string(r.Stdout) != "back\n" {
				t.Fatalf("the session does not work after the %s: %+v", c.name, r)
			}
		})
	}
	t.Run("unreachable", func(t *testing.T) { testUnreachable(t, d, a, b) })
}

// testUnreachable shows that what the host reaches (its listeners on the
// Docker bridge, on loopback and on the sandbox network's gateway address,
// the Debian mirror, a neighbouring sandbox) the sandbox does not, except
// the egress proxy's port; and that through the proxy, a session without
// an allowlist gets 403s.
func testUnreachable(t *testing.T, d *Docker, a, b string) {
	ctx := context.Background()
	bridgeIP := sandboximage.HostBridgeAddress(t)
	serve := func(addr string) string {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "host") })}
		go func() { _ = srv.Serve(ln) }()
		t.Cleanup(func() { srv.Close() })
		_, port, _ := net.SplitHostPort(ln.Addr().String())
		return port
	}
	onBridge, onLoopback, onAll := serve(bridgeIP+":0"), serve("127.0.0.1:0"), serve("0.0.0.0:0")
	sbNet, err := d.cli.NetworkInspect(ctx, d.cfg.networkName(), client.NetworkInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	gateway := sbNet.Network.IPAM.Config[0].Gateway.String()
	mirrorIP := ""
	if ips, err := (&netResolver{}).lookup("deb.debian.org"); err == nil {
		mirrorIP = ips[0]
	}

	// Controls: each target answers the host.
	targets := map[string]string{
		"bridge":       "http://" + bridgeIP + ":" + onBridge + "/",
		"loopback":     "http://127.0.0.1:" + onLoopback + "/",
		"all-bridge":   "http://" + bridgeIP + ":" + onAll + "/",
		"all-loopback": "http://127.0.0.1:" + onAll + "/",
	}
	if mirrorIP != "" {
		targets["mirror"] = "http://" + mirrorIP + "/debian/"
	}
	hc := &http.Client{Timeout: 5 * time.Second}
	for name, url := range targets {
		resp, err := hc.Get(url)
		if err != nil {
			if name == "mirror" {
				t.Logf("the host cannot reach the mirror either (%v); not a containment check here", err)
				delete(targets, name)
				continue
			}
			t.Fatalf("control: the host cannot reach %s: %v", url, err)
		}
		resp.Body.Close()
	}
	// Control: a container on Docker's default bridge reaches the host's
	// bridge listener, so it is the sandbox network that blocks it.
	if code, out := runOnce(t, d.cli, d.cfg.Image, "bridge", []string{"curl", "-sS", "-m", "5", targets["bridge"]}); code != 0 || out != "host" {
		t.Fatalf("control: a default-bridge container could not reach %s: exit %d, %q", targets["bridge"], code, out)
	}
	// Control: the neighbour's listener answers on its own address.
	sh(t, d, b, "nohup git daemon --reuseaddr --listen=0.0.0.0 --port=9418 --base-path=/workspace >/dev/null 2>&1 &")
	info, err := d.cli.ContainerInspect(ctx, d.cfg.containerName(b), client.ContainerInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	neighbour := info.Container.NetworkSettings.Networks[d.cfg.networkName()].IPAddress.String()
	deadline := time.Now().Add(30 * time.Second)
	for {
		// 52/56: connected, then the daemon hung up on HTTP. 7: not yet up.
		r := sh(t, d, b, "curl --noproxy '*' -sS -m 2 -o /dev/null http://"+neighbour+":9418/ 2>/dev/null; echo $?")
		if s := strings.TrimSpace(string(r.Stdout)); s == "52" || s == "56" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("control: the neighbour's listener never answered itself: %q", r.Stdout)
		}
		time.Sleep(100 * time.Millisecond)
	}
	targets["gateway"] = "http://" + gateway + ":" + onAll + "/"
	targets["gateway-ssh"] = "http://" + gateway + ":22/"
	targets["neighbour"] = "http://" + neighbour + ":9418/"
	targets["mirror-by-name"] = "http://deb.debian.org/debian/"

	// Control: the proxy itself answers on the gateway address, directly.
	proxy := d.egress.url
	if !strings.HasPrefix(proxy, "http://"+gateway+":") {
		t.Fatalf("the proxy listens at %s, not on the gateway %s", proxy, gateway)
	}
	r := sh(t, d, a, "curl --noproxy '*' -sS -o /dev/null -m 3 -w '%{http_code}' "+proxy+"/")
	if string(r.Stdout) != "400" {
		t.Fatalf("control: the sandbox does not reach the proxy at %s directly: %q %q", proxy, r.Stdout, r.Stderr)
	}
	// Through the proxy, without an allowlist: 403 for the mirror and the
	// host's listener alike.
	for _, u := range []string{"http://deb.debian.org/debian/", "http://" + bridgeIP + ":" + onBridge + "/", "https://deb.debian.org/"} {
		r := sh(t, d, a, "curl -sS -o /dev/null -m 5 -w '%{http_code}/%{http_connect}' "+u+" 2>/dev/null; true")
		if got := string(r.Stdout); got != "403/000" && got != "000/403" {
			t.Errorf("through the proxy, %s answered %q, want a 403", u, got)
		}
	}
	// The proxy listens on the sandbox network only: not on the host's
	// other addresses, so a container of the default bridge does not
	// reach it.
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(proxy, "http://"))
	if code, out := runOnce(t, d.cli, d.cfg.Image, "bridge", []string{"curl", "--noproxy", "*", "-sS", "-m", "3", "http://" + bridgeIP + ":" + port + "/"}); code == 0 {
		t.Errorf("a default-bridge container reached the proxy's port on the host: %q", out)
	}

	var script strings.Builder
	// --noproxy: each probe tries the target itself, not through the proxy.
	script.WriteString("probe() { n=$1; shift; curl --noproxy '*' -sS -o /dev/null -m 3 \"$@\" 2>/dev/null; echo \"$n $?\"; }\n")
	for name, url := range targets {
		fmt.Fprintf(&script, "probe %s %q &\n", name, url)
	}
	script.WriteString("wait\n")
	r = sh(t, d, a, script.String())
	// 6: no name, 7: refused or unreachable, 28: timed out.
	for line := range strings.Lines(string(r.Stdout)) {
		name, code, _ := strings.Cut(strings.TrimSpace(line), " ")
		if code != "6" && code != "7" && code != "28" {
			t.Errorf("the sandbox reached %s (%s): curl exit %s", name, targets[name], code)
		}
	}
	if n := strings.Count(string(r.Stdout), "\n"); n != len(targets) {
		t.Fatalf("%d probes answered of %d: %q %q", n, len(targets), r.Stdout, r.Stderr)
	}

	// Control: it is the firewall that keeps the host's listeners on the
	// gateway address out of reach; without its jump, the sandbox gets in.
	deleteJumps(ctx, "iptables", d.egress.fw.chain, "")
	r = sh(t, d, a, "curl --noproxy '*' -sS -m 3 "+targets["gateway"]+" 2>&1")
	if err := d.egress.fw.install(ctx); err != nil {
		t.Fatal(err)
	}
	if string(r.Stdout) != "host" {
		t.Fatalf("control: without the firewall the sandbox should reach %s: %q", targets["gateway"], r.Stdout)
	}
}

type netResolver struct{}

func (netResolver) lookup(host string) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	ips, err := net.DefaultResolver.LookupIP(ctx, "ip4", host)
	if err != nil || len(ips) == 0 {
		return nil, fmt.Errorf("resolve %s: %v", host, err)
	}
	out := make([]string, len(ips))
	for i, ip := range ips {
		out[i] = ip.String()
	}
	return out, nil
}

// runOnce runs cmd in a throwaway container of image on network and
// returns its exit code and output.
func runOnce(t testing.TB, cli *client.Client, image, network string, cmd []string) (int, string) {
	t.Helper()
	ctx := context.Background()
	c, err := cli.ContainerCreate(ctx, client.ContainerCreateOptions{
		Image:      image,
		Config:     &container.Config{Cmd: cmd},
		HostConfig: &container.HostConfig{NetworkMode: container.NetworkMode(network)},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true})
	if _, err := cli.ContainerStart(ctx, c.ID, client.ContainerStartOptions{}); err != nil {
		t.Fatal(err)
	}
	wait := cli.ContainerWait(ctx, c.ID, client.ContainerWaitOptions{})
	var code int
	select {
	case err := <-wait.Error:
		t.Fatal(err)
	case r := <-wait.Result:
		code = int(r.StatusCode)
	}
	logs, err := cli.ContainerLogs(ctx, c.ID, client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true})
	if err != nil {
		t.Fatal(err)
	}
	defer logs.Close()
	var out bytes.Buffer
	_, _ = stdcopy.StdCopy(&out, &out, logs)
	return code, out.String()
}
