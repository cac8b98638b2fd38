package main

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core/command"
)

// cliDoc is the CLI's reference; its synopsis of every command is made
// from the command tree by cliSynopsis, between these markers.
const (
	cliDoc      = "../../docs/cli.md"
	synopsisBeg = "<!-- synopsis: made from the commands; UPDATE_DOCS=1 go test ./cmd/switchboard -run TestCLIDocs rewrites it -->\n```\n"
	synopsisEnd = "```\n<!-- end of synopsis -->\n"
)

// commonFlags are the flags of every command over the API, said once.
var commonFlags = []string{"url", "token", "json"}

// cliSynopsis is one line per command and subcommand with its flags,
// wrapped under it; serve's flags are configuration.md's.
func cliSynopsis(cmds []command.Command) string {
	var b strings.Builder
	line := func(usage string, flags []command.Flag) {
		usage = strings.TrimSuffix(usage, " [flags]")
		text := "switchboard " + usage
		for _, f := range flags {
			if strings.Contains(usage, "--"+f.Name) {
				continue
			}
			word := "[--" + strings.TrimSpace(f.Name+" "+f.Value) + "]"
			if last := text[strings.LastIndex(text, "\n")+1:]; len(last)+1+len(word) > 100 {
				text += "\n   "
			}
			text += " " + word
		}
		b.WriteString(text + "\n")
	}
	for _, c := range cmds {
		switch {
		case c.Name == "help" || c.Name == "serve":
			line(c.Usage, nil)
		case len(c.Subcommands) == 0:
			line(c.Usage, c.Flags)
		}
		for _, s := range c.Subcommands {
			line(s.Usage, slices.DeleteFunc(slices.Clone(s.Flags), func(f command.Flag) bool { return slices.Contains(commonFlags, f.Name) }))
		}
	}
	return b.String()
}

// TestCLIDocs: the synopsis in docs/cli.md is the commands' own.
func TestCLIDocs(t *testing.T) {
	raw, err := os.ReadFile(cliDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	beg, end := strings.Index(doc, synopsisBeg), strings.Index(doc, synopsisEnd)
	if beg < 0 || end < beg {
		t.Fatalf("%s has no synopsis between %q and %q", cliDoc, synopsisBeg, synopsisEnd)
	}
	want := cliSynopsis(commands())
	if got := doc[beg+len(synopsisBeg) : end]; got != want {
		if os.Getenv("UPDATE_DOCS") == "1" {
			doc = doc[:beg+len(synopsisBeg)] + want + doc[end:]
			if err := os.WriteFile(cliDoc, []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Fatalf("%s's synopsis is not the commands'; rewrite it with UPDATE_DOCS=1 go test ./cmd/switchboard -run TestCLIDocs\ngot:\n%s\nwant:\n%s", cliDoc, got, want)
	}
}
