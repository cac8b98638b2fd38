package sandbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"
	"golang.org/x/sync/singleflight"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sandbox/egress"
)

// Errors of Connect; each also wraps core.ErrSandboxUnavailable.
var (
	ErrNoEngine = errors.New("no Docker engine answers")
	ErrNoImage  = errors.New("the sandbox image is not in the Docker engine")
)

// Docker runs sessions' sandboxes as containers of one Docker engine.
type Docker struct {
	cfg    Config
	cli    *client.Client
	log    *slog.Logger
	net    netInfo      // set up by Connect
	egress *egressState // nil without the egress proxy
	addrs  addrBook     // who holds each address, for the egress proxy

	flights       singleflight.Group // prepared image builds, by recipe hash
	buildMu       sync.Mutex
	buildPolicies map[string]egress.Policy // running builds, by container name
	failed        map[string]failedBuild   // recent failed builds, by recipe hash
	builds        atomic.Int64             // prepared images built by this process

	mu     sync.Mutex
	boxes  map[string]*box // warm sessions only: hibernated ones have no entry
	closed bool
}

var _ core.Sandbox = (*Docker)(nil)

// Connect reaches the engine (DOCKER_HOST or the default socket unless
// cfg.Host says otherwise), checks that cfg.Image is there and sets up the
// deployment's network; with cfg.Egress it starts the egress proxy and
// checks that a sandbox reaches it. Errors wrap core.ErrSandboxUnavailable
// when the engine does not answer or lacks the image, and ErrEgress when
// the proxy cannot serve.
func Connect(ctx context.Context, cfg Config) (*Docker, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	cli, err := NewClient(cfg.Host)
	if err != nil {
		return nil, err
	}
	if err := Ping(ctx, cli); err != nil {
		cli.Close()
		return nil, err
	}
	if _, err := cli.ImageInspect(ctx, cfg.Image); err != nil {
		cli.Close()
		if cerrdefs.IsNotFound(err) {
			return nil, fmt.Errorf("%w: %s (nothing is pulled; build one with scripts/sandbox-image --full): %w", ErrNoImage, cfg.Image, core.ErrSandboxUnavailable)
		}
		return nil, fmt.Errorf("inspect image %s: %w", cfg.Image, err)
	}
	if cfg.Egress != nil {
		// Before the network changes kind: without the rights to confine
		// it, nothing is touched.
		if err := iptables(ctx, "iptables", "-S", "INPUT"); err != nil {
			cli.Close()
			return nil, fmt.Errorf("%w (the egress proxy needs root, or CAP_NET_ADMIN, and iptables): %w", ErrFirewall, err)
		}
	}
	d := &Docker{cfg: cfg, cli: cli, log: cfg.Logger, boxes: map[string]*box{}, buildPolicies: map[string]egress.Policy{}, failed: map[string]failedBuild{}}
	if d.net, err = d.setupNetwork(ctx); err != nil {
		cli.Close()
		return nil, err
	}
	if cfg.Egress != nil {
		if err := d.startEgress(ctx, d.net); err != nil {
			cli.Close()
			return nil, err
		}
	}
	return d, nil
}

// CheckImage tells whether ref is in the engine (nothing is pulled).
func (d *Docker) CheckImage(ctx context.Context, ref string) error {
	_, err := d.cli.ImageInspect(ctx, ref)
	if cerrdefs.IsNotFound(err) {
		return fmt.Errorf("image %q is not in the Docker engine (nothing is pulled)", ref)
	}
	if err != nil {
		return fmt.Errorf("inspect image %s: %w", ref, err)
	}
	return nil
}

// NewClient returns an engine client for host (empty: DOCKER_HOST or the
// default socket); the client negotiates the API version (moby's
// default), so that it talks to engines as old as API 1.40.
func NewClient(host string) (*client.Client, error) {
	opts := []client.Opt{client.FromEnv}
	if host != "" {
		opts = append(opts, client.WithHost(host))
	}
	cli, err := client.New(opts...)
	if err != nil {
		return nil, fmt.Errorf("docker client: %w", err)
	}
	return cli, nil
}

// Ping checks that the engine answers within a few seconds; the error wraps
// core.ErrSandboxUnavailable.
func Ping(ctx context.Context, cli *client.Client) error {
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := cli.Ping(pctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		return fmt.Errorf("%w at %s (%v): %w", ErrNoEngine, cli.DaemonHost(), err, core.ErrSandboxUnavailable)
	}
	return nil
}

// Close stops the timers and the warm containers (so that a gateway that
// is gone holds no running sandbox; the next start finds them stopped) and
// closes the client.
func (d *Docker) Close(ctx context.Context) error {
	d.mu.Lock()
	d.closed = true
	warm := make([]*box, 0, len(d.boxes))
	for _, b := range d.boxes {
		if b.timer != nil {
			b.timer.Stop()
		}
		warm = append(warm, b)
	}
	d.mu.Unlock()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for _, b := range warm {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			b.mu.Lock()
			defer b.mu.Unlock()
			if err := d.stop(ctx, b); err != nil {
				d.log.Warn("stop sandbox at close", "session_id", b.session, "err", err)
			}
		}()
	}
	wg.Wait()
	// After the sandboxes: a command still running kept its proxy.
	d.stopEgress(ctx, true)
	return d.cli.Close()
}

// Purge removes every container, volume, prepared image and the network
// of the deployment, and its firewall chain: for tests, and for taking a
// deployment down for good.
func (d *Docker) Purge(ctx context.Context) error {
	d.mu.Lock()
	for id, b := range d.boxes {
		if b.timer != nil {
			b.timer.Stop()
		}
		delete(d.boxes, id)
	}
	d.mu.Unlock()
	d.stopEgress(ctx, false) // Purge removes the chain after the sandboxes
	return Purge(ctx, d.cli, d.cfg.Deployment)
}

// Purge removes every Docker object labelled with deployment, and the
// deployment's firewall chain.
func Purge(ctx context.Context, cli *client.Client, deployment string) error {
	f := client.Filters{}.Add("label", LabelDeployment+"="+deployment)
	var errs []error
	cs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	errs = append(errs, err)
	for _, c := range cs.Items {
		_, err := cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true})
		errs = append(errs, ignoreNotFound(err))
	}
	vs, err := cli.VolumeList(ctx, client.VolumeListOptions{Filters: f})
	errs = append(errs, err)
	for _, v := range vs.Items {
		_, err := cli.VolumeRemove(ctx, v.Name, client.VolumeRemoveOptions{Force: true})
		errs = append(errs, ignoreNotFound(err))
	}
	ns, err := cli.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	errs = append(errs, err)
	for _, n := range ns.Items {
		_, err := cli.NetworkRemove(ctx, n.ID, client.NetworkRemoveOptions{})
		errs = append(errs, ignoreNotFound(err))
	}
	errs = append(errs, removeFirewall(ctx, firewallChain(deployment)))
	// Prepared images last: no container of the deployment uses them now.
	// One in use by another deployment's container stays.
	is, err := cli.ImageList(ctx, client.ImageListOptions{Filters: f})
	errs = append(errs, err)
	for _, im := range is.Items {
		_, err := cli.ImageRemove(ctx, im.ID, client.ImageRemoveOptions{PruneChildren: true})
		if err != nil && !cerrdefs.IsConflict(err) {
			errs = append(errs, ignoreNotFound(err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("purge deployment %s: %w", deployment, err)
	}
	return nil
}

func ignoreNotFound(err error) error {
	if cerrdefs.IsNotFound(err) {
		return nil
	}
	return err
}
