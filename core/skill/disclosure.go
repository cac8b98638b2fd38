package skill

import (
	"fmt"
	"strings"
)

// Entry is one skill as the model is told of it.
type Entry struct {
	Name        string
	Description string
	// Location says where the files are: a folder in the sandbox
	// ("/skills/deploy/"), or how to read them without one.
	Location string
	// Source labels where the skill comes from when it is not the
	// agent's own ("repository acme/app").
	Source string
}

// Disclose is the system prompt's section on skills: each skill's name,
// description and where its SKILL.md is, so the model reads a skill's
// instructions only when a task calls for them. Empty for no entries.
func Disclose(entries []Entry) string {
	if len(entries) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("# Skills\n\nYou have these skills: folders of instructions and files for particular tasks. ")
	b.WriteString("When a task matches a skill's description, read its SKILL.md first and follow it; read its other files when SKILL.md points to them.\n")
	for _, e := range entries {
		fmt.Fprintf(&b, "\n- %s: %s\n  Files: %s", e.Name, oneLine(e.Description), e.Location)
		if e.Source != "" {
			fmt.Fprintf(&b, " (from %s)", e.Source)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// oneLine folds a description's line breaks so each entry stays one item.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
