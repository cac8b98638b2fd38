// Package skill is the Agent Skills format: a skill is a folder whose
// SKILL.md opens with YAML front matter (name, description, optional
// metadata) followed by Markdown instructions, plus any files the
// instructions refer to. The package parses SKILL.md, reads uploads of
// skill folders with their limits, and writes what a model is told about
// the skills it has (names, descriptions and where the files are; the
// bodies are read on demand).
package skill

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/switchboardhq/switchboard/core"
	"go.yaml.in/yaml/v3"
)

// Manifest is what SKILL.md's front matter says of a skill.
type Manifest struct {
	Name        string
	Description string
	// Metadata holds the front matter's other scalar fields (license,
	// compatibility, metadata.*), as text.
	Metadata map[string]string
	// Body is the Markdown after the front matter.
	Body string
}

// ParseManifest parses a SKILL.md: front matter between a first line
// "---" and the next "---", a YAML mapping with name and description.
// The error names the field or line at fault.
func ParseManifest(b []byte) (*Manifest, error) {
	b = bytes.TrimPrefix(b, []byte("\ufeff"))
	text := strings.ReplaceAll(string(b), "\r\n", "\n")
	if !strings.HasPrefix(text, "---\n") {
		return nil, fmt.Errorf("%s: must start with a \"---\" line opening the YAML front matter: %w", core.SkillManifestFile, core.ErrInvalid)
	}
	rest := text[len("---\n"):]
	var front, body string
	switch i := strings.Index(rest, "\n---"); {
	case strings.HasPrefix(rest, "---"):
		front, body = "", rest[3:]
	case i >= 0:
		front, body = rest[:i+1], rest[i+len("\n---"):]
	default:
		return nil, fmt.Errorf("%s: the front matter has no closing \"---\" line: %w", core.SkillManifestFile, core.ErrInvalid)
	}
	// The closing line is "---" alone (trailing spaces allowed).
	line, after, _ := strings.Cut(body, "\n")
	if strings.TrimRight(line, " \t") != "" {
		return nil, fmt.Errorf("%s: the front matter's closing line must be \"---\" alone: %w", core.SkillManifestFile, core.ErrInvalid)
	}
	var fields map[string]any
	if err := yaml.Unmarshal([]byte(front), &fields); err != nil {
		return nil, fmt.Errorf("%s: front matter is not valid YAML: %s: %w", core.SkillManifestFile, yamlError(err), core.ErrInvalid)
	}
	m := &Manifest{Body: after, Metadata: map[string]string{}}
	var err error
	if m.Name, err = stringField(fields, "name"); err != nil {
		return nil, err
	}
	if m.Description, err = stringField(fields, "description"); err != nil {
		return nil, err
	}
	m.Description = strings.TrimSpace(m.Description)
	if err := core.ValidSkillName(m.Name); err != nil {
		return nil, fmt.Errorf("%s: %w", core.SkillManifestFile, err)
	}
	if err := core.ValidSkillDescription(m.Description); err != nil {
		return nil, fmt.Errorf("%s: %w", core.SkillManifestFile, err)
	}
	flatten(m.Metadata, "", fields)
	delete(m.Metadata, "name")
	delete(m.Metadata, "description")
	return m, nil
}

// stringField returns a front matter field that must be a string.
func stringField(fields map[string]any, name string) (string, error) {
	v, ok := fields[name]
	if !ok || v == nil {
		return "", fmt.Errorf("%s: field %q is required: %w", core.SkillManifestFile, name, core.ErrInvalid)
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%s: field %q must be a string, not %T: %w", core.SkillManifestFile, name, v, core.ErrInvalid)
	}
	return s, nil
}

// flatten keeps the scalar fields of the front matter as text, nested
// mappings under dotted keys (metadata.author); lists are left out.
func flatten(out map[string]string, prefix string, fields map[string]any) {
	for k, v := range fields {
		switch v := v.(type) {
		case map[string]any:
			flatten(out, prefix+k+".", v)
		case string:
			out[prefix+k] = v
		case bool, int, int64, float64:
			out[prefix+k] = fmt.Sprint(v)
		}
	}
}

// yamlError shortens the YAML decoder's message to one line.
func yamlError(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return msg
}
