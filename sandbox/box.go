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
	oomKills uint64        // the cgroup's oom_kill count last seen
	pidsMax  uint64        // the cgroup's count of forks refused at pids.max
	limits   Limits        // the container's, for the reasons given to the model
	idle     time.Duration // its environment's idle timeout (guarded by Docker.mu)

	// Guarded by Docker.mu.
	inflight int
	timer    Timer
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
	idle := b.idle
	if idle <= 0 {
		idle = d.cfg.IdleTimeout
	}
	if b.timer == nil {
		b.timer = d.cfg.AfterFunc(idle, func() { d.hibernate(b) })
		return
	}
	b.timer.Reset(idle)
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
// as needed; b.mu is held. A stopped container made for another spec
// than its environment's now (the environment changed) is made again,
// its workspace kept; a running one keeps its spec until it hibernates.
func (d *Docker) ensure(ctx context.Context, b *box) (string, error) {
	if b.running {
		return b.id, nil
	}
	name := d.cfg.containerName(b.session)
	info, err := d.cli.ContainerInspect(ctx, name, client.ContainerInspectOptions{})
	if err != nil && !cerrdefs.IsNotFound(err) {
		return "", fmt.Errorf("inspect sandbox of %s: %w", b.session, err)
	}
	if err == nil {
		b.id = info.Container.ID
		if info.Container.State != nil && info.Container.State.Running {
			b.running = true
			b.limits = d.limitsOf(info.Container.HostConfig)
			d.setIdle(b, d.idleOf(labelsOf(info.Container.Config)))
			return b.id, nil
		}
	}
	sp, serr := d.specFor(ctx, b.session)
	switch {
	case serr != nil:
		// Even a container that is there does not start on a guess when
		// its environment cannot be resolved (deleted, its image gone).
		return "", serr
	case err == nil && labelsOf(info.Container.Config)[LabelSpec] != sp.hash:
		if _, err := d.cli.ContainerRemove(ctx, b.id, client.ContainerRemoveOptions{Force: true}); ignoreNotFound(err) != nil {
			return "", fmt.Errorf("remove the outdated sandbox of %s: %w", b.session, err)
		}
		d.log.Info("sandbox made again for its environment's new definition", "session_id", b.session)
		err = cerrdefs.ErrNotFound
	}
	if err != nil { // not found, or just removed
		id, err := d.create(ctx, b.session, sp)
		if err != nil {
			return "", err
		}
		b.id = id
		d.log.Info("sandbox created", "session_id", b.session, "container_id", short(id), "image", sp.image)
	}
	b.limits = sp.limits
	d.setIdle(b, sp.idle)
	if err := d.startContainer(ctx, b.id); err != nil {
		return "", fmt.Errorf("start sandbox of %s: %w", b.session, err)
	}
	// A start makes a new cgroup, whose counters begin at zero.
	b.running, b.oomKills, b.pidsMax = true, 0, 0
	return b.id, nil
}

// create makes the session's workspace volume and container.
func (d *Docker) create(ctx context.Context, sessionID string, sp spec) (string, error) {
	network := d.net.name
	vol := d.cfg.volumeName(sessionID)
	if _, err := d.cli.VolumeCreate(ctx, client.VolumeCreateOptions{Name: vol, Driver: d.cfg.WorkspaceDriver, Labels: d.cfg.labels(sessionID, "workspace")}); err != nil {
		return "", fmt.Errorf("create workspace volume %s: %w", vol, err)
	}
	for _, m := range sp.skills {
		if err := d.skillVolume(ctx, m); err != nil {
			return "", err
		}
	}
	uid, gid, _ := strings.Cut(d.cfg.User, ":")
	stopAfter := 2
	pids := sp.limits.Pids
	labels := d.cfg.labels(sessionID, "sandbox")
	labels[LabelSpec] = sp.hash
	labels[LabelIdle] = strconv.Itoa(int(sp.idle / time.Second))
	res, err := d.cli.ContainerCreate(ctx, client.ContainerCreateOptions{
		Name: d.cfg.containerName(sessionID),
		Config: &container.Config{
			Image:    sp.image,
			Hostname: "sandbox",
			// The init and its sleep run as InitUser, out of reach of the
			// command user's kill -1.
			User:        d.cfg.InitUser,
			Entrypoint:  []string{"sleep"},
			Cmd:         []string{"infinity"},
			Env:         sp.env,
			WorkingDir:  core.SandboxWorkspace,
			Labels:      labels,
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
				"/tmp":     "rw,nosuid,nodev,size=" + sp.tmpfsBytes(),
				d.cfg.Home: fmt.Sprintf("rw,nosuid,nodev,size=%s,uid=%s,gid=%s,mode=0700", sp.tmpfsBytes(), uid, gid),
			},
			Mounts: append([]mount.Mount{{Type: mount.TypeVolume, Source: vol, Target: core.SandboxWorkspace}}, skillMountsOf(sp.skills)...),
			Resources: container.Resources{
				Memory:     sp.limits.MemoryBytes,
				MemorySwap: sp.limits.MemoryBytes, // no swap
				NanoCPUs:   sp.limits.NanoCPUs,
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
	return d.discard(ctx, sessionID, true)
}

// Drop deletes the session's container, and its workspace volume unless
// workspaces are shared: another replica runs the session now, so what is
// here is an orphan, or stale when the session comes back.
func (d *Docker) Drop(ctx context.Context, sessionID string) error {
	return d.discard(ctx, sessionID, !d.SharedWorkspaces())
}

// SharedWorkspaces reports whether workspaces are on storage every
// replica reaches (Config.WorkspaceDriver): a session that moves keeps its
// files.
func (d *Docker) SharedWorkspaces() bool { return d.cfg.WorkspaceDriver != "" }

// discard removes the session's container, and its workspace when asked,
// and forgets its box.
func (d *Docker) discard(ctx context.Context, sessionID string, workspace bool) error {
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
	return d.removeObjects(ctx, sessionID, workspace)
}

// removeObjects removes a session's container, then its volume when asked.
func (d *Docker) removeObjects(ctx context.Context, sessionID string, workspace bool) error {
	_, err := d.cli.ContainerRemove(ctx, d.cfg.containerName(sessionID), client.ContainerRemoveOptions{Force: true})
	if err = ignoreNotFound(err); err != nil {
		return fmt.Errorf("remove sandbox of %s: %w", sessionID, err)
	}
	if workspace {
		_, err = d.cli.VolumeRemove(ctx, d.cfg.volumeName(sessionID), client.VolumeRemoveOptions{Force: true})
		if err = ignoreNotFound(err); err != nil {
			return fmt.Errorf("remove workspace of %s: %w", sessionID, err)
		}
	}
	d.log.Info("sandbox removed", "session_id", sessionID, "workspace", workspace)
	return nil
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
