package command

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// testTree is a command tree of each kind: a command, a group, an
// unlisted command.
func testTree() []Command {
	return []Command{
		{Name: "serve", Usage: "serve [flags]", Summary: "run it", Flags: []Flag{{Name: "addr", Value: "ADDR"}}},
		{Name: "session", Usage: "session create|send", Summary: "drive 'sessions'", Subcommands: []Command{
			{Name: "create", Usage: "session create", Flags: []Flag{{Name: "agent", Value: "NAME"}, {Name: "json"}}},
			{Name: "send", Usage: "session send ID TEXT", Flags: []Flag{{Name: "idempotency-key"}}},
		}},
		{Name: "hidden"},
	}
}

func TestCompletionMentionsTheTree(t *testing.T) {
	for _, sh := range Shells() {
		t.Run(sh, func(t *testing.T) {
			script, err := Completion("switchboard", sh, testTree())
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range []string{"serve", "session", "create", "send", "addr", "agent", "idempotency-key"} {
				if !strings.Contains(script, w) {
					t.Fatalf("the %s script does not mention %s:\n%s", sh, w, script)
				}
			}
			if strings.Contains(script, "hidden") {
				t.Fatalf("the %s script completes an unlisted command:\n%s", sh, script)
			}
		})
	}
	if _, err := Completion("switchboard", "tcsh", testTree()); err == nil {
		t.Fatal("a script for tcsh")
	}
}

// TestBashCompletion runs the bash script as bash completes a word.
func TestBashCompletion(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("no bash to run the script: %v", err)
	}
	script, _ := Completion("switchboard", "bash", testTree())
	for _, tt := range []struct {
		words string
		want  string
	}{
		{"switchboard se", "serve session"},
		{"switchboard session s", "send"},
		{"switchboard session create --a", "--agent"},
		{"switchboard serve --", "--addr"},
	} {
		t.Run(tt.words, func(t *testing.T) {
			words := strings.Fields(tt.words)
			prog := script + "\nCOMP_WORDS=(" + tt.words + "); COMP_CWORD=" + string(rune('0'+len(words)-1)) + "; _switchboard; echo \"${COMPREPLY[*]}\"\n"
			out, err := exec.Command(bash, "-c", prog).CombinedOutput()
			if err != nil || strings.TrimSpace(string(out)) != tt.want {
				t.Fatalf("completed %q, want %q (%v)", out, tt.want, err)
			}
		})
	}
}

// TestZshLeavesWordsAlone: words is zsh's array of the command line
// being completed; a local of that name would hide it from compsys.
func TestZshLeavesWordsAlone(t *testing.T) {
	script, _ := Completion("switchboard", "zsh", testTree())
	if !regexp.MustCompile(`\$\{words\[2\]\}`).MatchString(script) {
		t.Fatalf("the script does not read the command line from words:\n%s", script)
	}
	if regexp.MustCompile(`(local\s+([\w=]*\s+)*words\b|\bwords=)`).MatchString(script) {
		t.Fatalf("the script declares or assigns words:\n%s", script)
	}
}
