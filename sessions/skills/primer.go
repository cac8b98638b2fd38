package skills

import (
	"context"
	"fmt"
	"path"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/skill"
)

// Primer tells the model of the skills its agent version pins: each one's
// name, description and where to read it, in one instructions message
// before the first turn (a providers.Primer). The skills' contents are
// read on demand.
type Primer struct {
	Store Reader
	// Sandbox says sessions run in sandboxes, which mount each skill at
	// core.SandboxSkills/<name>/; without, the model reads skills with
	// the skill tool.
	Sandbox bool
}

// Prime returns the instructions message, or nothing for an agent
// without skills.
func (p *Primer) Prime(ctx context.Context, s *core.Session, a *core.Agent) ([]core.Event, error) {
	if a == nil || len(a.Skills) == 0 {
		return nil, nil
	}
	skills, err := pinned(ctx, p.Store, a.Skills)
	if err != nil || len(skills) == 0 {
		return nil, err
	}
	entries := make([]skill.Entry, len(skills))
	for i, sk := range skills {
		entries[i] = skill.Entry{Name: sk.Name, Description: sk.Description, Location: p.location(sk.Name)}
	}
	ev := core.NewEvent(core.TypeUserMessage, core.LevelInternal, core.ActorSystem,
		core.MessageBody{Text: skill.Disclose(entries), Kind: core.MessageKindInstructions})
	return []core.Event{ev}, nil
}

// location says where the model finds a skill's SKILL.md.
func (p *Primer) location(name string) string {
	if p.Sandbox {
		return path.Join(core.SandboxSkills, name, core.SkillManifestFile)
	}
	return fmt.Sprintf("call the %s tool with name %q", toolName, name)
}
