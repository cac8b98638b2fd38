package skills

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard/core"
)

// Reader is what sessions read of the skill store.
type Reader interface {
	GetSkill(ctx context.Context, idOrName string, version int) (*core.Skill, error)
	SkillFile(ctx context.Context, id string, version int, path string) ([]byte, error)
}

// pinned returns the skill versions an agent pins, in its order. A skill
// deleted since the agent version was saved is left out: nothing of it
// remains to show.
func pinned(ctx context.Context, r Reader, refs []core.SkillRef) ([]*core.Skill, error) {
	out := make([]*core.Skill, 0, len(refs))
	for _, ref := range refs {
		s, err := r.GetSkill(ctx, ref.ID, ref.Version)
		if errors.Is(err, core.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("skill %s version %d: %w", ref.ID, ref.Version, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// isText reports whether b reads as text: UTF-8 without NUL bytes.
func isText(b []byte) bool {
	return utf8.Valid(b) && !strings.ContainsRune(string(b), 0)
}

func hasFile(s *core.Skill, p string) bool {
	for _, f := range s.Files {
		if f.Path == p {
			return true
		}
	}
	return false
}

// fileList names a skill's files for a message.
func fileList(s *core.Skill) string {
	names := make([]string, len(s.Files))
	for i, f := range s.Files {
		names[i] = fmt.Sprintf("%q", f.Path)
	}
	return strings.Join(names, ", ")
}
