package sandbox

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/switchboardhq/switchboard/core"
)

// ReapResult counts what Reap did.
type ReapResult struct {
	Removed int // containers and volumes of gone, archived or moved sessions
	Adopted int // running containers of live sessions, now on idle timers
	Skills  int // skill volumes no container mounts
}

// Reap runs at start-up: it removes the containers and workspace volumes
// of the deployment whose session is gone or archived (left by a crash, or
// archived while no gateway ran) or moved to another replica while this
// one was down, and puts the running containers of live sessions on idle
// timers, so that a gateway killed with SIGKILL neither
// loses a warm sandbox nor leaves it running forever. Last, it removes
// the skill volumes no container mounts any longer.
func (d *Docker) Reap(ctx context.Context, status SessionStatus) (ReapResult, error) {
	var out ReapResult
	f := client.Filters{}.Add("label", LabelDeployment+"="+d.cfg.Deployment)
	cs, err := d.cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return out, fmt.Errorf("list sandboxes: %w", err)
	}
	vs, err := d.cli.VolumeList(ctx, client.VolumeListOptions{Filters: f})
	if err != nil {
		return out, fmt.Errorf("list workspaces: %w", err)
	}
	// What each session has: a container (by the label, whatever its
	// name) and workspace volumes.
	type objects struct {
		containers []container.Summary
		volumes    []string
	}
	sessions := map[string]*objects{}
	of := func(id string) *objects {
		if sessions[id] == nil {
			sessions[id] = &objects{}
		}
		return sessions[id]
	}
	for _, c := range cs.Items {
		if s := c.Labels[LabelSession]; s != "" {
			of(s).containers = append(of(s).containers, c)
		}
	}
	for _, v := range vs.Items {
		if s := v.Labels[LabelSession]; s != "" {
			of(s).volumes = append(of(s).volumes, v.Name)
		}
	}
	var errs []error
	for id, objs := range sessions {
		st, err := status(ctx, id)
		switch {
		case errors.Is(err, core.ErrNotFound) || (err == nil && st.Status == core.StatusArchived):
			if err := d.removeAll(ctx, objs.containers, objs.volumes); err != nil {
				errs = append(errs, fmt.Errorf("session %s: %w", id, err))
				continue
			}
			d.log.Info("sandbox of a gone or archived session removed", "session_id", id)
			out.Removed++
		case err == nil && st.Elsewhere:
			// Shared workspaces stay: the replica running the session
			// mounts the same files.
			volumes := objs.volumes
			if d.SharedWorkspaces() {
				volumes = nil
			}
			if err := d.removeAll(ctx, objs.containers, volumes); err != nil {
				errs = append(errs, fmt.Errorf("session %s: %w", id, err))
				continue
			}
			d.log.Info("sandbox of a session another replica runs now removed", "session_id", id)
			out.Removed++
		case err != nil:
			errs = append(errs, fmt.Errorf("status of session %s: %w", id, err))
		default:
			for _, c := range objs.containers {
				if c.State == container.StateRunning {
					d.adopt(ctx, id, c.ID, d.idleOf(c.Labels))
					out.Adopted++
				}
			}
		}
	}
	// After the sessions' containers: a skill volume only they mounted
	// goes with them.
	n, err := d.reapSkills(ctx)
	out.Skills = n
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return out, fmt.Errorf("reap sandboxes: %w", err)
	}
	d.log.Info("sandboxes reaped", "removed", out.Removed, "adopted", out.Adopted, "skill_volumes", out.Skills)
	return out, nil
}

// removeAll removes containers, then volumes.
func (d *Docker) removeAll(ctx context.Context, containers []container.Summary, volumes []string) error {
	var errs []error
	for _, c := range containers {
		_, err := d.cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true})
		errs = append(errs, ignoreNotFound(err))
	}
	for _, v := range volumes {
		_, err := d.cli.VolumeRemove(ctx, v, client.VolumeRemoveOptions{Force: true})
		errs = append(errs, ignoreNotFound(err))
	}
	return errors.Join(errs...)
}

// adopt records a running container found at start-up and arms its idle
// timer. The commands still running there belonged to the process that
// died: their calls end "interrupted by restart" and are not waited for,
// so they are killed rather than left to run unbounded.
func (d *Docker) adopt(ctx context.Context, sessionID, containerID string, idle time.Duration) {
	d.mu.Lock()
	if d.boxes[sessionID] != nil || d.closed {
		d.mu.Unlock()
		return
	}
	b := &box{session: sessionID, id: containerID, running: true, idle: idle}
	d.boxes[sessionID] = b
	b.inflight++ // the reclaim below is a use
	d.mu.Unlock()
	defer d.release(b)
	how := d.reclaim(ctx, b, containerID)
	d.log.Info("running sandbox adopted", "session_id", sessionID, "container_id", short(containerID), "commands", how)
}
