package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sandbox/egress"
)

// ErrEgress: the egress proxy could not start, or a sandbox cannot reach
// it.
var ErrEgress = errors.New("egress proxy unavailable")

// Where a prepared image keeps the deployment's CA, and the bundle that
// holds it beside the image's own roots.
const (
	sandboxCAFile      = "/usr/local/share/ca-certificates/switchboard-egress.crt"
	sandboxCABundle    = "/etc/ssl/certs/ca-certificates.crt"
	egressCheckTimeout = 30 * time.Second
)

// egressState is the running proxy.
type egressState struct {
	proxy *egress.Proxy
	url   string // http://<gateway>:<port>
	fw    firewall
	caPEM []byte
	caFP  string
	stop  sync.Once
}

// startEgress confines the network to the proxy, starts the proxy on the
// network's gateway address (nowhere else: it is not reachable from
// outside the host's sandbox bridges) and checks that a sandbox reaches
// it.
func (d *Docker) startEgress(ctx context.Context, n netInfo) error {
	e := d.cfg.Egress
	fw := firewall{chain: firewallChain(d.cfg.Deployment), bridge: n.bridge, gateway: n.gateway, port: e.Port}
	if err := fw.install(ctx); err != nil {
		return fmt.Errorf("%w: %w", ErrEgress, err)
	}
	addr := netip.AddrPortFrom(n.gateway, uint16(e.Port)).String()
	ln, err := net.Listen("tcp4", addr)
	if err != nil {
		_ = fw.seal(ctx)
		return fmt.Errorf("%w: listen on %s: %w", ErrEgress, addr, err)
	}
	d.addrs.inspect = d.inspectNetwork
	p, err := egress.New(egress.Config{
		CA:           e.CA,
		Clients:      clientTable{d},
		Credentials:  e.Credentials,
		RootCAs:      e.RootCAs,
		AllowPrivate: e.AllowPrivate,
		PrivateHosts: e.PrivateHosts,
		Record:       e.Record,
		Meter:        e.Meter,
		Local:        e.Local,
		Fenced:       e.Fenced,
		Logger:       d.log,
		// One sandbox's connections must not take the gateway's file
		// descriptors: past this, they are refused at accept.
		MaxConnsPerClient: e.MaxConns,
	})
	if err != nil {
		ln.Close()
		_ = fw.seal(ctx)
		return fmt.Errorf("%w: %w", ErrEgress, err)
	}
	go func() {
		if err := p.Serve(ln); err != nil {
			d.log.Error("egress proxy stopped", "err", err)
		}
	}()
	d.egress = &egressState{proxy: p, url: "http://" + addr, fw: fw, caPEM: e.CA.CertPEM(), caFP: e.CA.Fingerprint()}
	start := time.Now()
	if err := d.checkEgress(ctx, n); err != nil {
		d.stopEgress(ctx, false)
		return err
	}
	d.log.Info("egress proxy on", "addr", addr, "bridge", n.bridge, "check", time.Since(start).Round(time.Millisecond).String())
	return nil
}

// stopEgress closes the proxy and takes the firewall down, once. remove
// (a clean stop, the sandboxes stopped) removes the chain and its jump
// when no sandbox of the deployment runs any more; otherwise the chain is
// emptied down to its DROP, so the sandboxes still running reach nothing.
func (d *Docker) stopEgress(ctx context.Context, remove bool) {
	if d.egress == nil {
		return
	}
	d.egress.stop.Do(func() {
		_ = d.egress.proxy.Close()
		if remove {
			running, err := d.runningContainers(ctx)
			switch {
			case err != nil:
				d.log.Warn("the sandbox firewall stays, emptied down to its DROP: cannot tell whether sandboxes still run", "err", err)
			case running > 0:
				d.log.Warn("the sandbox firewall stays, emptied down to its DROP: sandboxes still run", "running", running)
			default:
				if err := removeFirewall(ctx, d.egress.fw.chain); err != nil {
					d.log.Warn("remove the sandbox firewall", "err", err)
				}
				return
			}
		}
		if err := d.egress.fw.seal(ctx); err != nil {
			d.log.Warn("seal the sandbox firewall", "err", err)
		}
	})
}

// runningContainers counts the deployment's running containers.
func (d *Docker) runningContainers(ctx context.Context) (int, error) {
	f := client.Filters{}.Add("label", LabelDeployment+"="+d.cfg.Deployment).Add("status", "running")
	cs, err := d.cli.ContainerList(ctx, client.ContainerListOptions{Filters: f})
	if err != nil {
		return 0, fmt.Errorf("list running sandboxes: %w", err)
	}
	return len(cs.Items), nil
}

// checkEgress runs a throwaway sandbox (the same image, user and
// hardening) that asks the proxy for a one-time path: a start-up that
// passes knows the firewall lets sandboxes through to the proxy.
func (d *Docker) checkEgress(ctx context.Context, n netInfo) error {
	token, seen, done := d.egress.proxy.ExpectCheck()
	defer done()
	ctx, cancel := context.WithTimeout(ctx, egressCheckTimeout)
	defer cancel()
	gw, port := n.gateway.String(), strconv.Itoa(d.cfg.Egress.Port)
	url := d.egress.url + egress.CheckPath + token
	script := fmt.Sprintf(`if command -v curl >/dev/null 2>&1; then exec curl -fsS -m 5 --noproxy '*' %[1]q
elif command -v wget >/dev/null 2>&1; then exec wget -q -T 5 -O - %[1]q
elif command -v bash >/dev/null 2>&1; then exec bash -c 'exec 3<>/dev/tcp/%[2]s/%[3]s && printf "GET %[4]s HTTP/1.0\r\n\r\n" >&3 && cat <&3'
fi
echo "no curl, wget or bash in the image to check with" >&2; exit 3`, url, gw, port, egress.CheckPath+token)
	code, out, err := d.runThrowaway(ctx, "check-"+token[:8], []string{"sh", "-c", script})
	select {
	case <-seen:
		return nil
	default:
	}
	if err != nil {
		return fmt.Errorf("%w: checking that a sandbox reaches %s: %w", ErrEgress, d.egress.url, err)
	}
	return fmt.Errorf("%w: a sandbox on network %s cannot reach the proxy at %s (exit %d: %s)", ErrEgress, n.name, d.egress.url, code, strings.TrimSpace(out))
}

// runThrowaway runs cmd in a hardened container of the sandbox image on
// the sandbox network, and removes it.
func (d *Docker) runThrowaway(ctx context.Context, what string, cmd []string) (int, string, error) {
	pids := int64(64)
	c, err := d.cli.ContainerCreate(ctx, client.ContainerCreateOptions{
		Name:   "switchboard-" + d.cfg.Deployment + "--" + what,
		Config: &container.Config{Image: d.cfg.Image, User: d.cfg.InitUser, Entrypoint: cmd[:1], Cmd: cmd[1:], Labels: d.cfg.labels("", "check")},
		HostConfig: &container.HostConfig{
			NetworkMode:    container.NetworkMode(d.net.name),
			CapDrop:        []string{"ALL"},
			SecurityOpt:    []string{"no-new-privileges"},
			ReadonlyRootfs: true,
			Resources:      container.Resources{Memory: 64 << 20, PidsLimit: &pids},
		},
	})
	if err != nil {
		return 0, "", err
	}
	defer func() {
		_, _ = d.cli.ContainerRemove(context.WithoutCancel(ctx), c.ID, client.ContainerRemoveOptions{Force: true})
	}()
	wait := d.cli.ContainerWait(ctx, c.ID, client.ContainerWaitOptions{Condition: container.WaitConditionNextExit})
	if err := d.startContainer(ctx, c.ID); err != nil {
		return 0, "", err
	}
	var code int
	select {
	case err := <-wait.Error:
		return 0, "", err
	case r := <-wait.Result:
		code = int(r.StatusCode)
	}
	return code, d.containerLogs(ctx, c.ID, 20), nil
}

// containerLogs returns the last lines a container printed.
func (d *Docker) containerLogs(ctx context.Context, id string, lines int) string {
	logs, err := d.cli.ContainerLogs(ctx, id, client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true, Tail: strconv.Itoa(lines)})
	if err != nil {
		return "(no logs: " + err.Error() + ")"
	}
	defer logs.Close()
	var out bytes.Buffer
	_, _ = stdcopy.StdCopy(&out, &out, logs)
	return out.String()
}

// egressEnv is what every sandbox's environment gets from the proxy: where
// it is, and the bundle that trusts the deployment's CA, under every name
// common tools read.
func (d *Docker) egressEnv() []string {
	if d.egress == nil {
		return nil
	}
	u := d.egress.url
	return []string{
		"HTTP_PROXY=" + u, "HTTPS_PROXY=" + u, "http_proxy=" + u, "https_proxy=" + u,
		"NO_PROXY=localhost,127.0.0.1,::1", "no_proxy=localhost,127.0.0.1,::1",
		"SSL_CERT_FILE=" + sandboxCABundle, "GIT_SSL_CAINFO=" + sandboxCABundle,
		"REQUESTS_CA_BUNDLE=" + sandboxCABundle, "CURL_CA_BUNDLE=" + sandboxCABundle,
		"PIP_CERT=" + sandboxCABundle, "NODE_EXTRA_CA_CERTS=" + sandboxCAFile,
	}
}

// clientTable tells the proxy whose a connection is, by its source
// address: the container holding that address on the sandbox network, as
// the address book has it (see addrBook for when it is read again).
type clientTable struct{ d *Docker }

func (t clientTable) Client(ctx context.Context, ip netip.Addr) (egress.Client, error) {
	d := t.d
	name, err := d.addrs.name(ctx, ip)
	if err != nil {
		return egress.Client{}, fmt.Errorf("inspect the sandbox network: %w", err)
	}
	rest, ok := strings.CutPrefix(name, "switchboard-"+d.cfg.Deployment+"-")
	if !ok {
		return egress.Client{}, fmt.Errorf("no sandbox of this deployment has address %s", ip)
	}
	if h, ok := strings.CutPrefix(rest, "-build-"); ok {
		d.buildMu.Lock()
		policy, ok := d.buildPolicies[name]
		d.buildMu.Unlock()
		if !ok {
			return egress.Client{}, fmt.Errorf("image build %s is not running", h)
		}
		return egress.Client{Name: "image build " + h, Policy: policy}, nil
	}
	if strings.HasPrefix(rest, "-") {
		return egress.Client{}, fmt.Errorf("container %s is not a sandbox", name)
	}
	env, err := d.environment(ctx, rest)
	if err != nil {
		return egress.Client{}, err
	}
	policy := policyOf(env)
	if g := d.cfg.Egress.Grants; g != nil {
		extra, err := g.SessionGrant(ctx, rest)
		if err != nil {
			return egress.Client{}, fmt.Errorf("session %s: egress grant: %w", rest, err)
		}
		policy.Hosts = append(slices.Clip(policy.Hosts), extra.Hosts...)
		policy.Metered = extra.Metered
		// The grant's credentials come first: for its host, the
		// platform's token is the one that works.
		policy.Credentials = append(slices.Clip(extra.Credentials), policy.Credentials...)
	}
	return egress.Client{Session: rest, Name: rest, Policy: policy}, nil
}

// policyOf is what an environment allows; no environment allows nothing.
func policyOf(env *core.Environment) egress.Policy {
	if env == nil {
		return egress.Policy{}
	}
	var p egress.Policy
	if env.Network.Mode == core.NetworkAllowlist {
		p.Hosts = env.Network.AllowedHosts
	}
	p.Credentials = env.Credentials
	return p
}
