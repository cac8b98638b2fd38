package sandbox

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/client"

	"github.com/switchboardhq/switchboard/core"
)

// box is what the gateway remembers of a warm session's container. A
// hibernated session has no box: the container is found again by name.
type box struct {
	session string

	// mu is held while the container is created, started, stopped or
	// removed, and guards the fields below it.
	mu       sync.Mutex
	id       string
	running  bool
	oomKills uint64 // the cgroup's oom_kill count last seen
	pidsMax  uint64 // the cgroup's count of forks refused at pids.max

	// Guarded by Docker.mu.
	inflight int
	timer    *time.Timer
}

// acquire returns the session's box, counted as in use so that the idle
// timer leaves it alone.
func (d *Docker) acquire(sessionID string) (*box, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, fmt.Errorf("sandbox backend closed: %w", core.ErrSandboxUnavailable)
	}
	b := d.boxes[sessionID]
	if b == nil {
		b = &box{session: sessionID}
		d.boxes[sessionID] = b
	}
	b.inflight++
	if b.timer != nil {
		b.timer.Stop()
	}
	return b, nil
}

// release ends a use of b and arms its idle timer when it was the last.
func (d *Docker) release(b *box) {
	d.mu.Lock()
	defer d.mu.Unlock()
	b.inflight--
	if b.inflight == 0 && !d.closed && d.boxes[b.session] == b {
		d.armLocked(b)
	}
}

// armLocked (re)starts b's idle timer; a timer costs no goroutine until it
// fires.
func (d *Docker) armLocked(b *box) {
	if b.timer == nil {
		b.timer = time.AfterFunc(d.cfg.IdleTimeout, func() { d.hibernate(b) })
		return
	}
	b.timer.Reset(d.cfg.IdleTimeout)
}

// hibernate stops b's container when it is still unused, and forgets b.
func (d *Docker) hibernate(b *box) {
	b.mu.Lock()
	defer b.mu.Unlock()
	// A command that acquired b before this point holds inflight; one that
	// acquires it after waits for b.mu and then starts the container again.
	d.mu.Lock()
	idle := b.inflight == 0 && d.boxes[b.session] == b && !d.closed
	d.mu.Unlock()
	if !idle {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := d.stop(ctx, b); err != nil {
		d.log.Warn("hibernate sandbox; retrying after the idle timeout", "session_id", b.session, "err", err)
		d.mu.Lock()
		if b.inflight == 0 && d.boxes[b.session] == b {
			d.armLocked(b)
		}
		d.mu.Unlock()
		return
	}
	d.log.Info("sandbox hibernated", "session_id", b.session)
	d.mu.Lock()
	if b.inflight == 0 && d.boxes[b.session] == b {
		delete(d.boxes, b.session)
	}
	d.mu.Unlock()
}

// stop stops b's container, if any; b.mu is held.
func (d *Docker) stop(ctx context.Context, b *box) error {
	grace := 2
	_, err := d.cli.ContainerStop(ctx, d.cfg.containerName(b.session), client.ContainerStopOptions{Timeout: &grace})
	if err = ignoreNotFound(err); err != nil {
		return fmt.Errorf("stop sandbox of %s: %w", b.session, err)
	}
	b.running = false
	return nil
}

// kill stops b's container at once: the last resort against commands that
// cannot be stopped one by one. b.mu must not be held.
func (d *Docker) kill(ctx context.Context, b *box) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, err := d.cli.ContainerKill(ctx, d.cfg.containerName(b.session), client.ContainerKillOptions{Signal: "KILL"})
	if err != nil && !cerrdefs.IsNotFound(err) && !cerrdefs.IsConflict(err) {
		return fmt.Errorf("kill sandbox of %s: %w", b.session, err)
	}
	b.running = false
	return nil
}

// ensure returns the id of b's running container, creating or starting it
// as needed; b.mu is held.
func (d *Docker) ensure(ctx context.Context, b *box) (string, error) {
	if b.running {
		return b.id, nil
	}
	name := d.cfg.containerName(b.session)
	info, err := d.cli.ContainerInspect(ctx, name, client.ContainerInspectOptions{})
	switch {
	case cerrdefs.IsNotFound(err):
		id, err := d.create(ctx, b.session)
		if err != nil {
			return "", err
		}
		b.id = id
		d.log.Info("sandbox created", "session_id", b.session, "container_id", short(id))
	case err != nil:
		return "", fmt.Errorf("inspect sandbox of %s: %w", b.session, err)
	default:
		b.id = info.Container.ID
		if info.Container.State != nil && info.Container.State.Running {
			b.running = true
			return b.id, nil
		}
	}
	if _, err := d.cli.ContainerStart(ctx, b.id, client.ContainerStartOptions{}); err != nil {
		return "", fmt.Errorf("start sandbox of %s: %w", b.session, err)
	}
	// A start makes a new cgroup, whose counters begin at zero.
	b.running, b.oomKills, b.pidsMax = true, 0, 0
	return b.id, nil
}

// create makes the session's workspace volume and container.
func (d *Docker) create(ctx context.Context, sessionID string) (string, error) {
	network, err := d.ensureNetwork(ctx)
	if err != nil {
		return "", err
	}
	vol := d.cfg.volumeName(sessionID)
	if _, err := d.cli.VolumeCreate(ctx, client.VolumeCreateOptions{Name: vol, Labels: d.cfg.labels(sessionID, "workspace")}); err != nil {
		return "", fmt.Errorf("create workspace volume %s: %w", vol, err)
	}
	uid, gid, _ := strings.Cut(d.cfg.User, ":")
	stopAfter := 2
	pids := d.cfg.Limits.Pids
	res, err := d.cli.ContainerCreate(ctx, client.ContainerCreateOptions{
		Name: d.cfg.containerName(sessionID),
		Config: &container.Config{
			Image:    d.cfg.Image,
			Hostname: "sandbox",
			// The init and its sleep run as InitUser, out of reach of the
			// command user's kill -1.
			User:        d.cfg.InitUser,
			Entrypoint:  []string{"sleep"},
			Cmd:         []string{"infinity"},
			Env:         append([]string{"LANG=C.UTF-8"}, d.cfg.Env...),
			WorkingDir:  core.SandboxWorkspace,
			Labels:      d.cfg.labels(sessionID, "sandbox"),
			StopTimeout: &stopAfter,
		},
		HostConfig: &container.HostConfig{
			NetworkMode:    container.NetworkMode(network),
			CapDrop:        []string{"ALL"},
			SecurityOpt:    []string{"no-new-privileges"},
			ReadonlyRootfs: true,
			Init:           new(true),
			IpcMode:        container.IPCModePrivate,
			Tmpfs: map[string]string{
				"/tmp":     "rw,nosuid,nodev,size=" + strconv.FormatInt(d.cfg.Limits.MemoryBytes, 10),
				d.cfg.Home: fmt.Sprintf("rw,nosuid,nodev,size=%d,uid=%s,gid=%s,mode=0700", d.cfg.Limits.MemoryBytes, uid, gid),
			},
			Mounts: []mount.Mount{{Type: mount.TypeVolume, Source: vol, Target: core.SandboxWorkspace}},
			Resources: container.Resources{
				Memory:     d.cfg.Limits.MemoryBytes,
				MemorySwap: d.cfg.Limits.MemoryBytes, // no swap
				NanoCPUs:   d.cfg.Limits.NanoCPUs,
				PidsLimit:  &pids,
			},
		},
	})
	if cerrdefs.IsConflict(err) {
		// Made meanwhile by another process of the deployment.
		info, ierr := d.cli.ContainerInspect(ctx, d.cfg.containerName(sessionID), client.ContainerInspectOptions{})
		if ierr == nil {
			return info.Container.ID, nil
		}
	}
	if err != nil {
		return "", fmt.Errorf("create sandbox of %s: %w", sessionID, err)
	}
	return res.ID, nil
}

// Remove deletes the session's container and workspace volume: the session
// was archived. Nothing there is not an error.
func (d *Docker) Remove(ctx context.Context, sessionID string) error {
	b, err := d.acquire(sessionID)
	if err != nil {
		return err
	}
	defer func() {
		d.mu.Lock()
		b.inflight--
		if b.timer != nil {
			b.timer.Stop()
		}
		if d.boxes[sessionID] == b && b.inflight == 0 {
			delete(d.boxes, sessionID)
		}
		d.mu.Unlock()
	}()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.running = false
	return d.removeObjects(ctx, sessionID)
}

// removeObjects removes a session's container, then its volume.
func (d *Docker) removeObjects(ctx context.Context, sessionID string) error {
	_, err := d.cli.ContainerRemove(ctx, d.cfg.containerName(sessionID), client.ContainerRemoveOptions{Force: true})
	if err = ignoreNotFound(err); err != nil {
		return fmt.Errorf("remove sandbox of %s: %w", sessionID, err)
	}
	_, err = d.cli.VolumeRemove(ctx, d.cfg.volumeName(sessionID), client.VolumeRemoveOptions{Force: true})
	if err = ignoreNotFound(err); err != nil {
		return fmt.Errorf("remove workspace of %s: %w", sessionID, err)
	}
	d.log.Info("sandbox removed", "session_id", sessionID)
	return nil
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
