package sandbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"

	"github.com/switchboardhq/switchboard/core"
)

// Errors of Connect; each also wraps core.ErrSandboxUnavailable.
var (
	ErrNoEngine = errors.New("no Docker engine answers")
	ErrNoImage  = errors.New("the sandbox image is not in the Docker engine")
)

// Docker runs sessions' sandboxes as containers of one Docker engine.
type Docker struct {
	cfg Config
	cli *client.Client
	log *slog.Logger

	netMu sync.Mutex // serialises creating the deployment's network
	netOK bool

	mu     sync.Mutex
	boxes  map[string]*box // warm sessions only: hibernated ones have no entry
	closed bool
}

var _ core.Sandbox = (*Docker)(nil)

// Connect reaches the engine (DOCKER_HOST or the default socket unless
// cfg.Host says otherwise) and checks that cfg.Image is there. Errors wrap
// core.ErrSandboxUnavailable when the engine does not answer or lacks the
// image.
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
	return &Docker{cfg: cfg, cli: cli, log: cfg.Logger, boxes: map[string]*box{}}, nil
}

// NewClient returns an engine client for host (empty: DOCKER_HOST or the
// default socket) that negotiates the API version, so that it talks to
// engines as old as API 1.40.
func NewClient(host string) (*client.Client, error) {
	opts := []client.Opt{client.FromEnv, client.WithAPIVersionNegotiation()}
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
	return d.cli.Close()
}

// ensureNetwork creates the deployment's internal network unless a network
// was configured or it exists.
func (d *Docker) ensureNetwork(ctx context.Context) (string, error) {
	if d.cfg.Network != "" {
		return d.cfg.Network, nil
	}
	name := d.cfg.networkName()
	d.netMu.Lock()
	defer d.netMu.Unlock()
	if d.netOK {
		return name, nil
	}
	_, err := d.cli.NetworkInspect(ctx, name, client.NetworkInspectOptions{})
	if cerrdefs.IsNotFound(err) {
		_, err = d.cli.NetworkCreate(ctx, name, client.NetworkCreateOptions{
			Driver: "bridge",
			// Internal: no route out of the network.
			Internal: true,
			Options: map[string]string{
				// No traffic between sandboxes of the network.
				"com.docker.network.bridge.enable_icc": "false",
				// No IPv4 address on the host's end of the bridge, so the
				// host's own listeners are not reachable through it either.
				"com.docker.network.bridge.inhibit_ipv4": "true",
			},
			Labels: d.cfg.labels("", "network"),
		})
		if cerrdefs.IsConflict(err) {
			err = nil // another gateway of the deployment made it first
		}
	}
	if err != nil {
		return "", fmt.Errorf("sandbox network %s: %w", name, err)
	}
	d.netOK = true
	return name, nil
}

// Purge removes every container, volume and the network of the
// deployment: for tests, and for taking a deployment down for good.
func (d *Docker) Purge(ctx context.Context) error {
	d.mu.Lock()
	for id, b := range d.boxes {
		if b.timer != nil {
			b.timer.Stop()
		}
		delete(d.boxes, id)
	}
	d.mu.Unlock()
	return Purge(ctx, d.cli, d.cfg.Deployment)
}

// Purge removes every Docker object labelled with deployment.
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
