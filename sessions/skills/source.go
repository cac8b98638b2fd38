package skills

import (
	"context"
	"fmt"

	"github.com/switchboardhq/switchboard/core"
)

// SourceStore is what Source reads of the store.
type SourceStore interface {
	GetSession(ctx context.Context, id string) (*core.Session, error)
	GetAgentVersion(ctx context.Context, id string, version int) (*core.Agent, error)
	Reader
}

// Source gives a session's sandbox the skills to mount: those the
// session's agent version pins, with their files.
type Source struct {
	Store SourceStore
}

// SessionSkills returns the session's skills, in the order its agent
// lists them; none for an agent without skills.
func (s *Source) SessionSkills(ctx context.Context, sessionID string) ([]core.SkillBundle, error) {
	sess, err := s.Store.GetSession(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	a, err := s.Store.GetAgentVersion(ctx, sess.Agent.ID, sess.Agent.Version)
	if err != nil {
		return nil, fmt.Errorf("agent %s version %d: %w", sess.Agent.ID, sess.Agent.Version, err)
	}
	skills, err := pinned(ctx, s.Store, a.Skills)
	if err != nil {
		return nil, err
	}
	out := make([]core.SkillBundle, 0, len(skills))
	for _, sk := range skills {
		files := make(map[string][]byte, len(sk.Files))
		for _, f := range sk.Files {
			if files[f.Path], err = s.Store.SkillFile(ctx, sk.ID, sk.Version, f.Path); err != nil {
				return nil, fmt.Errorf("skill %s version %d, file %q: %w", sk.Name, sk.Version, f.Path, err)
			}
		}
		out = append(out, core.SkillBundle{Skill: sk, Files: files})
	}
	return out, nil
}
