package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/moby/moby/api/types/container"

	"github.com/switchboardhq/switchboard/core"
)

// spec is what a session's container is created with, derived from its
// environment and the gateway's defaults.
type spec struct {
	image  string
	env    []string
	limits Limits
	diskMB int
	idle   time.Duration
	skills []skillMount
	// hash covers all of the above (the image by its id, each skill by
	// its volume, named after its content), labelled on the
	// container: a stopped container whose hash differs is made again.
	hash string
}

// environment is the session's environment, nil for the default one.
func (d *Docker) environment(ctx context.Context, sessionID string) (*core.Environment, error) {
	if d.cfg.Environments == nil {
		return nil, nil
	}
	env, err := d.cfg.Environments.SessionEnvironment(ctx, sessionID)
	if err != nil {
		return nil, fmt.Errorf("the environment of session %s: %w", sessionID, err)
	}
	return env, nil
}

// specFor resolves the session's environment into a container spec,
// building the prepared image first when it does not exist yet.
func (d *Docker) specFor(ctx context.Context, sessionID string) (spec, error) {
	env, err := d.environment(ctx, sessionID)
	if err != nil {
		return spec{}, err
	}
	s := spec{limits: d.cfg.Limits, idle: d.cfg.IdleTimeout}
	vars := map[string]string{}
	if env != nil {
		r := env.Resources
		if r.CPUs > 0 {
			s.limits.NanoCPUs = int64(r.CPUs * 1e9)
		}
		if r.MemoryMB > 0 {
			s.limits.MemoryBytes = int64(r.MemoryMB) << 20
		}
		if r.Pids > 0 {
			s.limits.Pids = int64(r.Pids)
		}
		s.diskMB = r.DiskMB
		if env.IdleTimeoutSeconds > 0 {
			s.idle = time.Duration(env.IdleTimeoutSeconds) * time.Second
		}
		maps.Copy(vars, env.Env)
	}
	image, imageID, err := d.prepared(ctx, env)
	if err != nil {
		return spec{}, err
	}
	s.image = image
	if s.skills, err = d.skillMounts(ctx, sessionID); err != nil {
		return spec{}, err
	}
	s.env = append([]string{"LANG=C.UTF-8"}, d.cfg.Env...)
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		s.env = append(s.env, k+"="+vars[k])
	}
	// Last, so that nothing above overrides where the proxy is.
	s.env = append(s.env, d.egressEnv()...)
	raw, err := json.Marshal(struct {
		Image  string
		Env    []string
		Limits Limits
		Disk   int
		Skills []string `json:",omitempty"`
	}{imageID, s.env, s.limits, s.diskMB, skillVolumes(s.skills)})
	if err != nil {
		return spec{}, err
	}
	sum := sha256.Sum256(raw)
	s.hash = hex.EncodeToString(sum[:])[:16]
	return s, nil
}

// tmpfsBytes sizes /tmp and $HOME: the disk limit when there is one, else
// the memory limit (tmpfs pages are memory).
func (s spec) tmpfsBytes() string {
	n := s.limits.MemoryBytes
	if s.diskMB > 0 {
		n = min(n, int64(s.diskMB)<<20)
	}
	return strconv.FormatInt(n, 10)
}

// idleOf reads a container's idle timeout label; the default without one.
func (d *Docker) idleOf(labels map[string]string) time.Duration {
	if n, err := strconv.Atoi(labels[LabelIdle]); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	return d.cfg.IdleTimeout
}

// limits are b's container's limits; b.mu must not be held.
func (d *Docker) limits(b *box) Limits {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.limits == (Limits{}) {
		return d.cfg.Limits
	}
	return b.limits
}

func (d *Docker) setIdle(b *box, idle time.Duration) {
	d.mu.Lock()
	b.idle = idle
	d.mu.Unlock()
}

func labelsOf(c *container.Config) map[string]string {
	if c == nil {
		return nil
	}
	return c.Labels
}

// limitsOf reads a container's limits back (for one found running).
func (d *Docker) limitsOf(hc *container.HostConfig) Limits {
	l := d.cfg.Limits
	if hc == nil {
		return l
	}
	if hc.Memory > 0 {
		l.MemoryBytes = hc.Memory
	}
	if hc.NanoCPUs > 0 {
		l.NanoCPUs = hc.NanoCPUs
	}
	if hc.PidsLimit != nil && *hc.PidsLimit > 0 {
		l.Pids = *hc.PidsLimit
	}
	return l
}
