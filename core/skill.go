package core

import (
	"context"
	"fmt"
	"path"
	"regexp"
	"strings"
	"unicode/utf8"
)

// PrefixSkill is the id prefix of skills.
const PrefixSkill = "skl"

// Skill is one version of a skill in the Agent Skills format: a folder
// whose SKILL.md opens with YAML front matter giving the skill's name and
// when to use it, plus any files it refers to. Every upload of a skill is
// a new, immutable version; agents pin versions (SkillRef).
type Skill struct {
	ID          string `json:"id"`
	Name        string `json:"name"` // from SKILL.md; unique among skills
	Description string `json:"description"`
	Version     int    `json:"version"`
	// Files lists the version's files, sorted by path; SKILL.md is one.
	Files []SkillFile `json:"files"`
	// Size is the uncompressed bytes of every file.
	Size      int64             `json:"size"`
	Metadata  map[string]string `json:"metadata,omitempty"`
	CreatedAt Time              `json:"created_at"` // of the skill (version 1)
	UpdatedAt Time              `json:"updated_at"` // of this version
}

// SkillFile is one file of a skill version.
type SkillFile struct {
	Path       string `json:"path"` // slash-separated, relative to the skill's folder
	Size       int64  `json:"size"`
	SHA256     string `json:"sha256"` // hex
	Executable bool   `json:"executable,omitempty"`
}

// SkillRef pins a skill on an agent. Version 0 asks for the latest
// version; the store saves the agent with the version it resolved.
type SkillRef struct {
	ID      string `json:"id"`
	Version int    `json:"version,omitempty"`
}

// SkillManifestFile is the file every skill has at its root.
const SkillManifestFile = "SKILL.md"

// Skill limits (the Agent Skills format's for name and description).
const (
	MaxSkillNameLen        = 64
	MaxSkillDescriptionLen = 1024
	MaxSkillFiles          = 200
	DefaultMaxSkillBytes   = 5 << 20
)

var skillNamePattern = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// ValidSkillName checks a skill's name: 1 to 64 lowercase letters,
// digits and single hyphens, neither first nor last. It names the
// skill's folder in sandboxes (/skills/<name>/).
func ValidSkillName(name string) error {
	if name == "" {
		return fmt.Errorf("field \"name\" is required: %w", ErrInvalid)
	}
	if len(name) > MaxSkillNameLen || !skillNamePattern.MatchString(name) {
		shown := name
		if len(shown) > 80 {
			shown = shown[:80] + "…"
		}
		return fmt.Errorf("field \"name\" (%q): want 1 to %d lowercase letters, digits and hyphens (not first, last or doubled): %w", shown, MaxSkillNameLen, ErrInvalid)
	}
	return nil
}

// ValidSkillDescription checks a skill's description: 1 to 1,024
// characters.
func ValidSkillDescription(d string) error {
	if strings.TrimSpace(d) == "" {
		return fmt.Errorf("field \"description\" is required: %w", ErrInvalid)
	}
	if n := utf8.RuneCountInString(d); n > MaxSkillDescriptionLen {
		return fmt.Errorf("field \"description\" is %d characters: at most %d: %w", n, MaxSkillDescriptionLen, ErrInvalid)
	}
	if !utf8.ValidString(d) {
		return fmt.Errorf("field \"description\" is not valid UTF-8: %w", ErrInvalid)
	}
	return nil
}

// ValidSkillPath checks a file path inside a skill: relative,
// slash-separated, clean, no "..", no empty or dot segments, no NUL or
// backslash.
func ValidSkillPath(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("empty file path: %w", ErrInvalid)
	case strings.HasPrefix(p, "/"):
		return fmt.Errorf("file %q: absolute paths are not allowed: %w", p, ErrInvalid)
	case strings.ContainsAny(p, "\x00\\"):
		return fmt.Errorf("file %q: NUL and backslash are not allowed in paths: %w", p, ErrInvalid)
	case !utf8.ValidString(p):
		return fmt.Errorf("file %q: path is not valid UTF-8: %w", p, ErrInvalid)
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return fmt.Errorf("file %q: \"..\" is not allowed in paths: %w", p, ErrInvalid)
		}
	}
	if path.Clean(p) != p || strings.HasPrefix(p, "./") || p == "." {
		return fmt.Errorf("file %q: want a clean relative path: %w", p, ErrInvalid)
	}
	return nil
}

// Validate checks what every store must refuse to save as a skill
// version: its name, description, file paths and counts. The format's
// own rules (SKILL.md's front matter, archive entries, sizes while
// reading) are core/skill's.
func (s *Skill) Validate() error {
	if err := ValidSkillName(s.Name); err != nil {
		return err
	}
	if err := ValidSkillDescription(s.Description); err != nil {
		return err
	}
	if len(s.Files) > MaxSkillFiles {
		return fmt.Errorf("%d files: at most %d: %w", len(s.Files), MaxSkillFiles, ErrInvalid)
	}
	seen := map[string]bool{}
	manifest := false
	for _, f := range s.Files {
		if err := ValidSkillPath(f.Path); err != nil {
			return err
		}
		if seen[f.Path] {
			return fmt.Errorf("file %q appears twice: %w", f.Path, ErrInvalid)
		}
		seen[f.Path] = true
		manifest = manifest || f.Path == SkillManifestFile
	}
	if !manifest {
		return fmt.Errorf("no %s at the skill's root: %w", SkillManifestFile, ErrInvalid)
	}
	return nil
}

// SkillUpload is one new version of a skill: its metadata (name and
// description parsed from SKILL.md) and every file's content by path.
type SkillUpload struct {
	Name        string
	Description string
	Metadata    map[string]string
	Files       map[string][]byte
	Executable  map[string]bool // paths whose mode has an execute bit
}

// SkillStore keeps skills and their versions' files.
type SkillStore interface {
	// CreateSkill saves version 1 of a new skill. Names are unique
	// (ErrConflict).
	CreateSkill(ctx context.Context, up SkillUpload) (*Skill, error)
	// UpdateSkill saves up as the next version of the skill named by id
	// or name. Its name may change, and must stay unique.
	UpdateSkill(ctx context.Context, idOrName string, up SkillUpload) (*Skill, error)
	// GetSkill returns a version of the skill named by id or name; 0 is
	// the latest.
	GetSkill(ctx context.Context, idOrName string, version int) (*Skill, error)
	// ListSkills pages through the skills' latest versions in id order.
	ListSkills(ctx context.Context, after string, limit int) ([]*Skill, bool, error)
	// SkillFile returns one file of a skill version (ErrNotFound when the
	// version has no such file).
	SkillFile(ctx context.Context, id string, version int, path string) ([]byte, error)
	// DeleteSkill deletes every version of the skill. It is refused
	// (ErrConflict, naming them) while an agent's latest version or a
	// session that is not archived pins the skill.
	DeleteSkill(ctx context.Context, idOrName string) error
}

// SkillBundle is a skill version with its files' contents: what a
// sandbox mounts at /skills/<name>/.
type SkillBundle struct {
	Skill *Skill
	Files map[string][]byte
}
