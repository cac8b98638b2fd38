package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core/command"
)

// runHelp runs a command line in process and returns its exit code and
// output.
func runHelp(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	env := command.Env{Getenv: func(string) string { return "" }, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut}
	code := run(context.Background(), args, env)
	return code, out.String(), errOut.String()
}

// oneDash finds a flag written with one dash, as Go's flag package
// prints them, where the documentation writes two.
var oneDash = regexp.MustCompile(`(^|[\s\[(|,'"])-[a-zA-Z]`)

// TestCLIHelp walks the command tree: every command is in the top-level
// help, every command and subcommand answers help, -h and --help with
// exit 0 and a usage on stdout listing its flags with two dashes.
func TestCLIHelp(t *testing.T) {
	code, top, errOut := runHelp("help")
	if code != 0 || errOut != "" {
		t.Fatalf("help: exit %d, stderr %q", code, errOut)
	}
	for _, args := range [][]string{{"-h"}, {"--help"}} {
		if code, out, _ := runHelp(args...); code != 0 || out != top {
			t.Fatalf("%s: exit %d, a help other than switchboard help's", args[0], code)
		}
	}
	check := func(t *testing.T, flags []command.Flag, args ...string) string {
		t.Helper()
		code, out, errOut := runHelp(args...)
		line := strings.Join(args, " ")
		switch {
		case code != 0:
			t.Fatalf("%s: exit %d\nstdout: %s\nstderr: %s", line, code, out, errOut)
		case !strings.HasPrefix(out, "usage: switchboard "):
			t.Fatalf("%s printed no usage on stdout:\n%s", line, out)
		case oneDash.MatchString(out):
			t.Fatalf("%s shows a one-dash flag (%q):\n%s", line, oneDash.FindString(out), out)
		}
		for _, f := range flags {
			if !strings.Contains(out, "--"+f.Name) {
				t.Fatalf("%s does not show its flag --%s:\n%s", line, f.Name, out)
			}
		}
		return out
	}
	for _, c := range commands() {
		t.Run(c.Name, func(t *testing.T) {
			if c.Usage == "" || !strings.Contains(top, "  switchboard "+c.Name+" ") {
				t.Fatalf("%s is missing from the top-level help:\n%s", c.Name, top)
			}
			if c.Name == "help" {
				return
			}
			var group string
			for _, args := range [][]string{{c.Name, "-h"}, {c.Name, "--help"}, {"help", c.Name}} {
				group = check(t, c.Flags, args...)
			}
			for _, s := range c.Subcommands {
				if !strings.Contains(top, s.Name) || !strings.Contains(group, "switchboard "+c.Name+" "+s.Name) {
					t.Fatalf("%s %s is missing from the help", c.Name, s.Name)
				}
				for _, args := range [][]string{{c.Name, s.Name, "-h"}, {c.Name, s.Name, "--help"}, {"help", c.Name, s.Name}} {
					check(t, s.Flags, args...)
				}
			}
		})
	}
}

// TestUnknownCommand: a mistyped command exits 2 naming the command
// meant.
func TestUnknownCommand(t *testing.T) {
	for _, tt := range []struct{ args, want string }{
		{"sesion list", `unknown command "sesion"; did you mean "session"?`},
		{"frobnicate", `unknown command "frobnicate"`},
		{"session lsit", `unknown subcommand "lsit"; did you mean "list"?`},
	} {
		t.Run(tt.args, func(t *testing.T) {
			code, _, errOut := runHelp(strings.Fields(tt.args)...)
			if code != 2 || !strings.Contains(errOut, tt.want) {
				t.Fatalf("exit %d, stderr:\n%s", code, errOut)
			}
			if tt.args == "frobnicate" && strings.Contains(errOut, "did you mean") {
				t.Fatalf("a suggestion for nothing near:\n%s", errOut)
			}
		})
	}
}

// TestCompletion: each shell's script, printed by switchboard completion,
// mentions every command, subcommand and flag of the tree.
func TestCompletion(t *testing.T) {
	for _, sh := range command.Shells() {
		t.Run(sh, func(t *testing.T) {
			code, script, errOut := runHelp("completion", sh)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			for _, c := range commands() {
				if c.Usage == "" {
					continue
				}
				if !strings.Contains(script, c.Name) {
					t.Fatalf("the %s script does not mention %s", sh, c.Name)
				}
				for _, s := range c.Subcommands {
					if !strings.Contains(script, s.Name) {
						t.Fatalf("the %s script does not mention %s %s", sh, c.Name, s.Name)
					}
					for _, f := range s.Flags {
						if !strings.Contains(script, f.Name) {
							t.Fatalf("the %s script does not mention %s %s --%s", sh, c.Name, s.Name, f.Name)
						}
					}
				}
			}
		})
	}
	if code, _, errOut := runHelp("completion", "tcsh"); code != 2 || !strings.Contains(errOut, `no completion for shell "tcsh"`) {
		t.Fatalf("completion tcsh: exit %d, %s", code, errOut)
	}
}
