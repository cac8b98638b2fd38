package sandbox

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"path"
	"slices"
	"strings"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/client"

	"github.com/switchboardhq/switchboard/core"
)

// Roles of the Docker objects that hold skills.
const (
	roleSkill     = "skill"      // a skill version's volume
	roleSkillCopy = "skill-copy" // the never-started container that fills one
)

// skillCopyTarget is where the filling container mounts the volume.
const skillCopyTarget = "/skill"

// SkillSource finds the skills a session's sandbox mounts.
type SkillSource interface {
	// SessionSkills returns the skill versions the session's agent pins,
	// with their files.
	SessionSkills(ctx context.Context, sessionID string) ([]core.SkillBundle, error)
}

// skillMount is one skill of a spec: its volume, named after the skill
// version and its content, and mounted at core.SandboxSkills/<name>.
type skillMount struct {
	name   string
	volume string
	bundle core.SkillBundle
}

// skillMounts resolves the session's skills into volumes to mount.
func (d *Docker) skillMounts(ctx context.Context, sessionID string) ([]skillMount, error) {
	if d.cfg.Skills == nil {
		return nil, nil
	}
	bundles, err := d.cfg.Skills.SessionSkills(ctx, sessionID)
	if err != nil {
		return nil, fmt.Errorf("the skills of session %s: %w", sessionID, err)
	}
	var out []skillMount
	seen := map[string]bool{}
	for _, b := range bundles {
		if b.Skill == nil {
			continue
		}
		if err := checkBundle(b); err != nil {
			return nil, fmt.Errorf("skill %s version %d: %w", b.Skill.ID, b.Skill.Version, err)
		}
		if seen[b.Skill.Name] {
			// Names are unique among skills: a second one is the same
			// skill pinned twice.
			continue
		}
		seen[b.Skill.Name] = true
		out = append(out, skillMount{name: b.Skill.Name, volume: d.cfg.skillVolumeName(b.Skill.Name, bundleHash(b)), bundle: b})
	}
	slices.SortFunc(out, func(a, b skillMount) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

// checkBundle refuses what could not be mounted safely: a name that is
// no folder name, a path that leaves the skill's folder.
func checkBundle(b core.SkillBundle) error {
	if err := core.ValidSkillName(b.Skill.Name); err != nil {
		return err
	}
	for p := range b.Files {
		if err := core.ValidSkillPath(p); err != nil {
			return err
		}
	}
	return nil
}

// bundleHash covers the skill's id, version and every file's path, mode
// and content: a volume of that hash holds exactly those files.
func bundleHash(b core.SkillBundle) string {
	exec := map[string]bool{}
	for _, f := range b.Skill.Files {
		exec[f.Path] = f.Executable
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%d\x00", b.Skill.ID, b.Skill.Version)
	for _, p := range slices.Sorted(maps.Keys(b.Files)) {
		sum := sha256.Sum256(b.Files[p])
		fmt.Fprintf(h, "%s\x00%t\x00%x\x00", p, exec[p], sum)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// skillVolume makes sure the skill's volume exists and is complete:
// made on this engine on first need, reused by later sessions.
// Concurrent sessions wait for one copy.
func (d *Docker) skillVolume(ctx context.Context, m skillMount) error {
	ch := d.flights.DoChan("skill:"+m.volume, func() (any, error) {
		return nil, d.fillSkillVolume(context.WithoutCancel(ctx), m)
	})
	select {
	case res := <-ch:
		return res.Err
	case <-ctx.Done():
		return fmt.Errorf("waiting for skill %s's volume: %w", m.name, ctx.Err())
	}
}

// fillSkillVolume copies the skill's files into its volume through a
// container that is created, never started, and removed once the copy
// is done. Creating that container creates the volume, so a volume
// without its container is complete; one whose container is still there
// was cut short (a crash) and is made again.
func (d *Docker) fillSkillVolume(ctx context.Context, m skillMount) error {
	copyName := d.cfg.skillCopyName(m.volume)
	_, verr := d.cli.VolumeInspect(ctx, m.volume, client.VolumeInspectOptions{})
	if verr != nil && !cerrdefs.IsNotFound(verr) {
		return fmt.Errorf("inspect skill volume %s: %w", m.volume, verr)
	}
	_, cerr := d.cli.ContainerInspect(ctx, copyName, client.ContainerInspectOptions{})
	if cerr != nil && !cerrdefs.IsNotFound(cerr) {
		return fmt.Errorf("inspect %s: %w", copyName, cerr)
	}
	switch {
	case verr == nil && cerrdefs.IsNotFound(cerr):
		return nil
	case cerr == nil:
		if _, err := d.cli.ContainerRemove(ctx, copyName, client.ContainerRemoveOptions{Force: true}); ignoreNotFound(err) != nil {
			return fmt.Errorf("remove the unfinished copy of skill %s: %w", m.name, err)
		}
		if verr == nil {
			if _, err := d.cli.VolumeRemove(ctx, m.volume, client.VolumeRemoveOptions{}); ignoreNotFound(err) != nil {
				return fmt.Errorf("remove the unfinished volume of skill %s: %w", m.name, err)
			}
		}
	}
	archive, err := skillArchive(m.bundle)
	if err != nil {
		return fmt.Errorf("skill %s: %w", m.name, err)
	}
	id, err := d.createSkillCopy(ctx, m)
	if err != nil {
		return err
	}
	if _, err := d.cli.CopyToContainer(ctx, id, client.CopyToContainerOptions{DestinationPath: skillCopyTarget, Content: bytes.NewReader(archive)}); err != nil {
		return fmt.Errorf("copy skill %s into its volume: %w", m.name, err)
	}
	if _, err := d.cli.ContainerRemove(ctx, id, client.ContainerRemoveOptions{}); err != nil {
		return fmt.Errorf("remove the copy of skill %s: %w", m.name, err)
	}
	d.log.Info("skill volume made", "skill", m.name, "skill_id", m.bundle.Skill.ID, "version", m.bundle.Skill.Version, "volume", m.volume)
	return nil
}

// createSkillCopy creates the container that fills the skill's volume,
// and with it the volume.
func (d *Docker) createSkillCopy(ctx context.Context, m skillMount) (string, error) {
	labels := d.cfg.labels("", roleSkill)
	c, err := d.cli.ContainerCreate(ctx, client.ContainerCreateOptions{
		Name: d.cfg.skillCopyName(m.volume),
		Config: &container.Config{
			Image:      d.cfg.Image,
			Entrypoint: []string{"true"},
			Labels:     d.cfg.labels("", roleSkillCopy),
			// Never started: nothing runs, the engine only writes the
			// archive into the volume.
			NetworkDisabled: true,
		},
		HostConfig: &container.HostConfig{
			NetworkMode: "none",
			Mounts: []mount.Mount{{Type: mount.TypeVolume, Source: m.volume, Target: skillCopyTarget,
				VolumeOptions: &mount.VolumeOptions{NoCopy: true, Labels: labels}}},
		},
	})
	if err != nil {
		return "", fmt.Errorf("create the copy of skill %s: %w", m.name, err)
	}
	return c.ID, nil
}

// skillArchive is the skill's files as a tar owned by root: files
// readable by everyone (0444, 0555 when executable), folders 0555, so
// that the command user reads and runs them and nobody writes them.
func skillArchive(b core.SkillBundle) ([]byte, error) {
	exec := map[string]bool{}
	for _, f := range b.Skill.Files {
		exec[f.Path] = f.Executable
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	var mkdir func(dir string) error
	mkdir = func(dir string) error {
		if dir == "." || dirs[dir] {
			return nil
		}
		if err := mkdir(path.Dir(dir)); err != nil {
			return err
		}
		dirs[dir] = true
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir + "/", Mode: 0o555, Format: tar.FormatPAX})
	}
	for _, p := range slices.Sorted(maps.Keys(b.Files)) {
		if err := mkdir(path.Dir(p)); err != nil {
			return nil, err
		}
		mode := int64(0o444)
		if exec[p] {
			mode = 0o555
		}
		content := b.Files[p]
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: p, Mode: mode, Size: int64(len(content)), Format: tar.FormatPAX}); err != nil {
			return nil, err
		}
		if _, err := io.Copy(tw, bytes.NewReader(content)); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// skillMountsOf are the container mounts of a spec's skills: read-only,
// and never filled from the image.
func skillMountsOf(skills []skillMount) []mount.Mount {
	out := make([]mount.Mount, 0, len(skills))
	for _, s := range skills {
		out = append(out, mount.Mount{Type: mount.TypeVolume, Source: s.volume, Target: path.Join(core.SandboxSkills, s.name), ReadOnly: true,
			VolumeOptions: &mount.VolumeOptions{NoCopy: true}})
	}
	return out
}

// reapSkills removes the skill volumes no container of the deployment
// mounts, and the copies a crash cut short with their volumes. It
// returns how many volumes it removed.
func (d *Docker) reapSkills(ctx context.Context) (int, error) {
	f := client.Filters{}.Add("label", LabelDeployment+"="+d.cfg.Deployment)
	cs, err := d.cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return 0, fmt.Errorf("list sandboxes: %w", err)
	}
	used := map[string]bool{}
	for _, c := range cs.Items {
		if c.Labels[LabelRole] == roleSkillCopy {
			if _, err := d.cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true}); ignoreNotFound(err) != nil {
				return 0, fmt.Errorf("remove an unfinished skill copy: %w", err)
			}
			continue
		}
		for _, m := range c.Mounts {
			used[m.Name] = true
		}
	}
	vs, err := d.cli.VolumeList(ctx, client.VolumeListOptions{Filters: f.Clone().Add("label", LabelRole+"="+roleSkill)})
	if err != nil {
		return 0, fmt.Errorf("list skill volumes: %w", err)
	}
	n := 0
	for _, v := range vs.Items {
		if used[v.Name] {
			continue
		}
		// Not forced: a container made meanwhile that mounts it keeps it.
		_, err := d.cli.VolumeRemove(ctx, v.Name, client.VolumeRemoveOptions{})
		switch {
		case err == nil:
			n++
		case cerrdefs.IsNotFound(err), cerrdefs.IsConflict(err):
		default:
			return n, fmt.Errorf("remove skill volume %s: %w", v.Name, err)
		}
	}
	return n, nil
}

// skillVolumeName names the volume of a skill version by content hash;
// the double dash keeps it apart from every session's objects.
func (c Config) skillVolumeName(name, hash string) string {
	return "switchboard-" + c.Deployment + "--skill-" + name + "-" + hash
}

// skillCopyName names the container that fills volume.
func (c Config) skillCopyName(volume string) string { return volume + "-copy" }

// skillVolumes are a spec's skill volumes, for its hash: each names its
// skill and content.
func skillVolumes(skills []skillMount) []string {
	out := make([]string, 0, len(skills))
	for _, s := range skills {
		out = append(out, s.volume)
	}
	return out
}
