package sandbox

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/moby/moby/client"

	"github.com/switchboardhq/switchboard/core"
)

// skillTable is a SkillSource of fixed skills per session.
type skillTable struct {
	mu sync.Mutex
	m  map[string][]core.SkillBundle
}

func (s *skillTable) set(session string, bundles ...core.SkillBundle) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string][]core.SkillBundle{}
	}
	s.m[session] = bundles
}

func (s *skillTable) SessionSkills(_ context.Context, session string) ([]core.SkillBundle, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[session], nil
}

// bundle makes a skill version of files, the paths in exec executable.
func bundle(id, name string, version int, files map[string]string, exec ...string) core.SkillBundle {
	sk := &core.Skill{ID: id, Name: name, Description: "d", Version: version}
	b := core.SkillBundle{Skill: sk, Files: map[string][]byte{}}
	for p, c := range files {
		b.Files[p] = []byte(c)
		x := false
		for _, e := range exec {
			x = x || e == p
		}
		sk.Files = append(sk.Files, core.SkillFile{Path: p, Size: int64(len(c)), Executable: x})
	}
	return b
}

// skillVolumesOf lists the deployment's skill volumes.
func skillVolumesOf(t *testing.T, d *Docker) []string {
	t.Helper()
	f := client.Filters{}.Add("label", LabelDeployment+"="+d.cfg.Deployment, LabelRole+"="+roleSkill)
	vs, err := d.cli.VolumeList(context.Background(), client.VolumeListOptions{Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, v := range vs.Items {
		out = append(out, v.Name)
	}
	return out
}

// TestSkillMounts: a session's skills are read-only folders under
// /skills, their files readable by the command user and scripts still
// executable; a second session mounts the same volume; a new version is
// a new volume, and a container whose skills changed is made again at
// its next start; the reaper removes volumes no container mounts.
func TestSkillMounts(t *testing.T) {
	skills := &skillTable{}
	d := newDocker(t, func(c *Config) { c.Skills = skills; c.AfterFunc = manualTimers })
	deploy := bundle("skl_1", "deploy", 1, map[string]string{
		"SKILL.md":           "---\nname: deploy\ndescription: Ship it.\n---\nRun scripts/ship.sh.\n",
		"scripts/ship.sh":    "#!/bin/sh\necho shipped \"$@\"\n",
		"reference/notes.md": "notes\n",
	}, "scripts/ship.sh")
	first, second := newSession(), newSession()
	skills.set(first, deploy)
	skills.set(second, deploy)

	for _, tc := range []struct {
		name, script, want string
	}{
		{"read SKILL.md", "cat /skills/deploy/SKILL.md", "Run scripts/ship.sh.\n"},
		{"run a script", "/skills/deploy/scripts/ship.sh now && stat -c '%a %U' /skills/deploy/scripts/ship.sh /skills/deploy/reference/notes.md", "shipped now\n555 root\n444 root\n"},
		{"nothing writable", "for p in /skills/new /skills/deploy/new /skills/deploy/SKILL.md /skills/deploy/reference/x; do (echo x > $p) 2>/dev/null && echo wrote $p; done; chmod u+w /skills/deploy/SKILL.md 2>/dev/null && echo chmod; echo done", "done\n"},
		{"mounted read-only", "grep ' /skills/deploy ' /proc/mounts | cut -d' ' -f4 | cut -d, -f1", "ro\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := sh(t, d, first, tc.script)
			if !strings.HasSuffix(string(r.Stdout), tc.want) || r.ExitCode != 0 {
				t.Fatalf("%s: exit %d, stdout %q, stderr %q; want stdout ending %q", tc.script, r.ExitCode, r.Stdout, r.Stderr, tc.want)
			}
		})
	}
	if r := sh(t, d, second, "cat /skills/deploy/SKILL.md"); !strings.Contains(string(r.Stdout), "name: deploy") {
		t.Fatalf("second session: %q %q", r.Stdout, r.Stderr)
	}
	vols := skillVolumesOf(t, d)
	if len(vols) != 1 {
		t.Fatalf("skill volumes %v, want one shared by both sessions", vols)
	}

	// Version 2 of the skill: the first session's stopped container is
	// made again with the new volume, its workspace kept.
	sh(t, d, first, "echo kept > /workspace/f")
	v2 := bundle("skl_1", "deploy", 2, map[string]string{"SKILL.md": "---\nname: deploy\ndescription: Ship it.\n---\nVersion two.\n"})
	skills.set(first, v2)
	b, err := d.acquire(first)
	if err != nil {
		t.Fatal(err)
	}
	b.mu.Lock()
	if err := d.stop(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	b.mu.Unlock()
	d.release(b)
	if r := sh(t, d, first, "cat /skills/deploy/SKILL.md /workspace/f; ls /skills/deploy"); !strings.Contains(string(r.Stdout), "Version two.\nkept\nSKILL.md\n") {
		t.Fatalf("after the new version: %q %q", r.Stdout, r.Stderr)
	}
	if vols := skillVolumesOf(t, d); len(vols) != 2 {
		t.Fatalf("skill volumes %v, want the two versions'", vols)
	}

	// The second session goes away: version 1's volume is no longer
	// mounted and the reaper removes it; version 2's stays.
	if err := d.Remove(context.Background(), second); err != nil {
		t.Fatal(err)
	}
	res, err := d.reapSkills(context.Background())
	if err != nil || res != 1 {
		t.Fatalf("reaped %d skill volumes (%v), want 1", res, err)
	}
	left := skillVolumesOf(t, d)
	if len(left) != 1 || !strings.Contains(left[0], bundleHash(v2)) {
		t.Fatalf("skill volumes left %v, want version 2's", left)
	}
}

// TestSkillVolumeUnfinished: a volume whose copy a crash cut short (its
// copying container still there) is made again, not mounted half full.
func TestSkillVolumeUnfinished(t *testing.T) {
	skills := &skillTable{}
	d := newDocker(t, func(c *Config) { c.Skills = skills })
	b := bundle("skl_2", "lint", 1, map[string]string{"SKILL.md": "---\nname: lint\ndescription: Lint.\n---\nLint it.\n"})
	m := skillMount{name: "lint", volume: d.cfg.skillVolumeName("lint", bundleHash(b)), bundle: b}
	// What a crash between creating the copy and copying leaves: the
	// container, and its empty volume.
	if _, err := d.createSkillCopy(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	if vols := skillVolumesOf(t, d); len(vols) != 1 {
		t.Fatalf("skill volumes %v after the copy's creation, want its volume", vols)
	}
	s := newSession()
	skills.set(s, b)
	if r := sh(t, d, s, "cat /skills/lint/SKILL.md"); !strings.Contains(string(r.Stdout), "Lint it.") {
		t.Fatalf("after an unfinished copy: %q %q", r.Stdout, r.Stderr)
	}
	if _, err := d.cli.ContainerInspect(context.Background(), d.cfg.skillCopyName(m.volume), client.ContainerInspectOptions{}); err == nil {
		t.Fatal("the copying container is still there")
	}
}
