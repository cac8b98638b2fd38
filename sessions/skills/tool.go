package skills

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard/core"
)

// toolName is the skill tool's name (core.ReservedToolNames holds it).
const toolName = "skill"

// maxToolOutput bounds what one call returns of a file.
const maxToolOutput = 100 << 10

// Tools offers the skill tool to sessions whose agent version pins
// skills (a providers.SessionTools). It is for gateways without
// sandboxes: with one, the model reads the files at core.SandboxSkills.
type Tools struct {
	Store Reader
}

// Tools returns the skill tool, or none for an agent without skills.
func (t *Tools) Tools(_ context.Context, _ *core.Session, a *core.Agent) ([]core.Tool, error) {
	if a == nil || len(a.Skills) == 0 {
		return nil, nil
	}
	return []core.Tool{&skillTool{store: t.Store, refs: a.Skills}}, nil
}

// skillTool reads the files of the skills one agent version pins.
type skillTool struct {
	store Reader
	refs  []core.SkillRef
}

func (*skillTool) Def() core.ToolDef {
	return core.ToolDef{
		Name:        toolName,
		Description: "Read one of your skills (listed under Skills in your instructions): its SKILL.md by default, or another of its files by path. Read SKILL.md first; it says which other files matter.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"name":{"type":"string","description":"The skill's name."},` +
			`"path":{"type":"string","description":"A file of the skill, relative to its folder (default SKILL.md)."}},` +
			`"required":["name"]}`),
	}
}

func (t *skillTool) Call(ctx context.Context, call core.ToolCall) (core.ToolResult, error) {
	var in struct {
		Name string `json:"name"`
		Path string `json:"path"`
	}
	if err := json.Unmarshal(call.Input, &in); err != nil {
		return failed("input must be a JSON object with a string \"name\" and an optional string \"path\": %v", err), nil
	}
	skills, err := pinned(ctx, t.store, t.refs)
	if err != nil {
		return core.ToolResult{}, err
	}
	var sk *core.Skill
	names := make([]string, len(skills))
	for i, s := range skills {
		names[i] = fmt.Sprintf("%q", s.Name)
		if s.Name == in.Name {
			sk = s
		}
	}
	if sk == nil {
		return failed("no skill named %q; your skills are %s", in.Name, strings.Join(names, ", ")), nil
	}
	p := strings.TrimPrefix(in.Path, "./")
	if p == "" {
		p = core.SkillManifestFile
	}
	if !hasFile(sk, p) {
		return failed("skill %q has no file %q; its files are %s", sk.Name, in.Path, fileList(sk)), nil
	}
	b, err := t.store.SkillFile(ctx, sk.ID, sk.Version, p)
	if errors.Is(err, core.ErrNotFound) {
		return failed("skill %q: file %q is gone", sk.Name, p), nil
	}
	if err != nil {
		return core.ToolResult{}, fmt.Errorf("skill %s version %d, file %q: %w", sk.Name, sk.Version, p, err)
	}
	if !isText(b) {
		return failed("%q of skill %q is a binary file (%d bytes); this tool reads text files only", p, sk.Name, len(b)), nil
	}
	return core.ToolResult{Output: output(sk, p, b)}, nil
}

// output is a file's text, cut at maxToolOutput; SKILL.md is followed by
// the list of the skill's other files, which the model cannot list
// otherwise.
func output(sk *core.Skill, p string, b []byte) string {
	text := string(b)
	if len(text) > maxToolOutput {
		cut := maxToolOutput
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut] + fmt.Sprintf("\n[cut: the file is %d bytes; the first %d are shown]", len(b), cut)
	}
	if p != core.SkillManifestFile || len(sk.Files) < 2 {
		return text
	}
	var others []string
	for _, f := range sk.Files {
		if f.Path != core.SkillManifestFile {
			others = append(others, f.Path)
		}
	}
	return text + fmt.Sprintf("\n\n[Other files of skill %q, read with this tool's path: %s]", sk.Name, strings.Join(others, ", "))
}

func failed(format string, args ...any) core.ToolResult {
	return core.ToolResult{Output: fmt.Sprintf(format, args...), IsError: true}
}
