package record

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// NewSkillVersion is the skill version both stores save for up at now:
// its files sorted by path with their sizes, digests and modes, checked
// by (*core.Skill).Validate. The store assigns ID, Version and CreatedAt.
func NewSkillVersion(up core.SkillUpload, now core.Time) (*core.Skill, error) {
	for p, x := range up.Executable {
		if _, ok := up.Files[p]; x && !ok {
			return nil, fmt.Errorf("executable file %q is not among the files: %w", p, core.ErrInvalid)
		}
	}
	sk := &core.Skill{
		Name:        up.Name,
		Description: up.Description,
		Metadata:    maps.Clone(up.Metadata),
		Files:       make([]core.SkillFile, 0, len(up.Files)),
		CreatedAt:   now,
		UpdatedAt:   now,
	}
	for _, p := range slices.Sorted(maps.Keys(up.Files)) {
		content := up.Files[p]
		sum := sha256.Sum256(content)
		sk.Files = append(sk.Files, core.SkillFile{Path: p, Size: int64(len(content)), SHA256: hex.EncodeToString(sum[:]), Executable: up.Executable[p]})
		sk.Size += int64(len(content))
	}
	if err := sk.Validate(); err != nil {
		return nil, err
	}
	return sk, nil
}

// NewSkill is version 1 of a new skill for up at now.
func NewSkill(up core.SkillUpload, now core.Time) (*core.Skill, error) {
	sk, err := NewSkillVersion(up, now)
	if err != nil {
		return nil, err
	}
	sk.ID, sk.Version = core.NewID(core.PrefixSkill), 1
	return sk, nil
}

// NextSkill makes next, a NewSkillVersion, the version after cur, the
// skill's latest.
func NextSkill(cur, next *core.Skill) {
	next.ID, next.Version, next.CreatedAt = cur.ID, cur.Version+1, cur.CreatedAt
}

// SkillFileOf is the file at path in a skill version, whose digest keys
// its content; ErrNotFound when the version has no such file.
func SkillFileOf(sk *core.Skill, path string) (core.SkillFile, error) {
	for _, f := range sk.Files {
		if f.Path == path {
			return f, nil
		}
	}
	return core.SkillFile{}, fmt.Errorf("skill %s version %d has no file %q: %w", sk.ID, sk.Version, path, core.ErrNotFound)
}

// ResolveSkills checks an agent version's skills and pins each: the id
// (a skill's name is accepted and replaced by its id) and the version, 0
// meaning the skill's latest. get reads a skill's version by id or name
// (0: the latest; core.ErrNotFound when there is none) in the
// transaction that saves the agent. One skill may not be pinned twice,
// nor two skills of one name, since a sandbox mounts each skill at
// /skills/<name>/.
func ResolveSkills(refs []core.SkillRef, get func(idOrName string, version int) (*core.Skill, error)) ([]core.SkillRef, error) {
	if len(refs) == 0 {
		return refs, nil
	}
	out := make([]core.SkillRef, len(refs))
	ids, names := map[string]int{}, map[string]int{}
	for i, ref := range refs {
		if ref.ID == "" {
			return nil, fmt.Errorf("skills[%d]: id is required: %w", i, core.ErrInvalid)
		}
		if ref.Version < 0 {
			return nil, fmt.Errorf("skills[%d]: version %d: want 0 (the latest) or a version number: %w", i, ref.Version, core.ErrInvalid)
		}
		latest, err := get(ref.ID, 0)
		if errors.Is(err, core.ErrNotFound) {
			return nil, fmt.Errorf("skills[%d]: no skill has the id or name %q: %w", i, ref.ID, core.ErrInvalid)
		}
		if err != nil {
			return nil, fmt.Errorf("skills[%d]: %w", i, err)
		}
		pinned := latest
		if ref.Version != 0 && ref.Version != latest.Version {
			pinned, err = get(latest.ID, ref.Version)
			if errors.Is(err, core.ErrNotFound) {
				return nil, fmt.Errorf("skills[%d]: skill %q (%s) has no version %d (the latest is %d): %w", i, latest.Name, latest.ID, ref.Version, latest.Version, core.ErrInvalid)
			}
			if err != nil {
				return nil, fmt.Errorf("skills[%d]: %w", i, err)
			}
		}
		if j, dup := ids[pinned.ID]; dup {
			return nil, fmt.Errorf("skills[%d]: skill %q (%s) is also skills[%d]: %w", i, latest.Name, latest.ID, j, core.ErrInvalid)
		}
		if j, dup := names[pinned.Name]; dup {
			return nil, fmt.Errorf("skills[%d]: skill %s version %d is named %q, as is skills[%d]: %w", i, pinned.ID, pinned.Version, pinned.Name, j, core.ErrInvalid)
		}
		ids[pinned.ID], names[pinned.Name] = i, i
		out[i] = core.SkillRef{ID: pinned.ID, Version: pinned.Version}
	}
	return out, nil
}

// SkillUse gathers what pins a skill, for DeleteSkill's refusal: a store
// feeds it every agent version that may pin the skill (at least those
// whose JSON holds its id), then the latest versions of the agents
// Pinned names, then the sessions of those agents that are not archived.
type SkillUse struct {
	skill    *core.Skill
	pins     map[core.AgentRef]bool
	agents   []string
	sessions []string
	agentIDs [][]byte // Pinned's, once sessions are noted
}

// NewSkillUse starts gathering what pins sk.
func NewSkillUse(sk *core.Skill) *SkillUse {
	return &SkillUse{skill: sk, pins: map[core.AgentRef]bool{}}
}

// AgentVersion notes the agent version whose JSON is body if it pins the
// skill.
func (u *SkillUse) AgentVersion(body []byte) error {
	if !bytes.Contains(body, []byte(u.skill.ID)) {
		return nil
	}
	var a core.Agent
	if err := json.Unmarshal(body, &a); err != nil {
		return fmt.Errorf("decode agent version: %w", err)
	}
	if slices.ContainsFunc(a.Skills, func(r core.SkillRef) bool { return r.ID == u.skill.ID }) {
		u.pins[core.AgentRef{ID: a.ID, Version: a.Version}] = true
	}
	return nil
}

// Pinned lists the agents with a version that pins the skill, in id
// order: only their latest versions and sessions can refuse the delete.
func (u *SkillUse) Pinned() []string {
	var ids []string
	for ref := range u.pins {
		ids = append(ids, ref.ID)
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// Agent notes an agent's latest version.
func (u *SkillUse) Agent(id, name string, version int) {
	if u.pins[core.AgentRef{ID: id, Version: version}] {
		u.agents = append(u.agents, name)
	}
}

// Session notes the session whose JSON is body, unless it is archived.
func (u *SkillUse) Session(body []byte) error {
	if u.agentIDs == nil {
		for _, id := range u.Pinned() {
			u.agentIDs = append(u.agentIDs, []byte(id))
		}
	}
	// Most sessions run other agents: no need to decode them.
	if !slices.ContainsFunc(u.agentIDs, func(id []byte) bool { return bytes.Contains(body, id) }) {
		return nil
	}
	var sess struct {
		ID     string        `json:"id"`
		Status core.Status   `json:"status"`
		Agent  core.AgentRef `json:"agent"`
	}
	if err := json.Unmarshal(body, &sess); err != nil {
		return fmt.Errorf("decode session: %w", err)
	}
	if sess.Status != core.StatusArchived && u.pins[sess.Agent] {
		u.sessions = append(u.sessions, sess.ID)
	}
	return nil
}

// maxSessionsNamed bounds the sessions Err names.
const maxSessionsNamed = 10

// Err refuses the delete (ErrConflict) while what was noted pins the
// skill, naming the agents and the first sessions; nil when nothing does.
func (u *SkillUse) Err() error {
	if len(u.agents) == 0 && len(u.sessions) == 0 {
		return nil
	}
	var by []string
	if len(u.agents) > 0 {
		slices.Sort(u.agents)
		by = append(by, "the latest version of agents "+strings.Join(u.agents, ", "))
	}
	if len(u.sessions) > 0 {
		slices.Sort(u.sessions)
		shown := u.sessions[:min(len(u.sessions), maxSessionsNamed)]
		s := "sessions that are not archived: " + strings.Join(shown, ", ")
		if n := len(u.sessions) - len(shown); n > 0 {
			s += fmt.Sprintf(" and %d more", n)
		}
		by = append(by, s)
	}
	return fmt.Errorf("skill %q (%s) is pinned by %s: update the agents and archive the sessions first: %w",
		u.skill.Name, u.skill.ID, strings.Join(by, "; and by "), core.ErrConflict)
}
