package command

import (
	"fmt"
	"strings"
)

// Shells lists the shells Completion writes a script for.
func Shells() []string { return []string{"bash", "zsh", "fish"} }

// Completion is the completion script of prog for shell, made from the
// command tree: the commands, each group's subcommands, and the flags of
// each command or subcommand.
func Completion(prog, shell string, cmds []Command) (string, error) {
	switch shell {
	case "bash":
		return bash(prog, cmds), nil
	case "zsh":
		return zsh(prog, cmds), nil
	case "fish":
		return fish(prog, cmds), nil
	}
	return "", fmt.Errorf("no completion for shell %q: want bash, zsh or fish", shell)
}

func listed(cmds []Command) []Command {
	var out []Command
	for _, c := range cmds {
		if c.Usage != "" {
			out = append(out, c)
		}
	}
	return out
}

func dashed(flags []Flag) string {
	out := make([]string, len(flags))
	for i, f := range flags {
		out[i] = "--" + f.Name
	}
	return strings.Join(out, " ")
}

func subNames(c Command) string {
	out := make([]string, len(c.Subcommands))
	for i, s := range c.Subcommands {
		out[i] = s.Name
	}
	return strings.Join(out, " ")
}

// cases writes the case arms of bash and zsh, which share their syntax
// and set choices (not words, zsh's array of the command line):
// a group completes its subcommands where pos2 holds, then each one's
// flags; a command completes its flags. arm formats one arm.
func cases(b *strings.Builder, cmds []Command, arm func(pattern, choices string) string, pos2 string, sub string) {
	for _, c := range listed(cmds) {
		if len(c.Subcommands) == 0 {
			b.WriteString(arm(c.Name, dashed(c.Flags)))
			continue
		}
		var inner strings.Builder
		for _, s := range c.Subcommands {
			inner.WriteString(arm(s.Name, dashed(s.Flags)))
		}
		fmt.Fprintf(b, "    %s)\n      if %s; then choices=%q\n      else case %s in\n%s      esac; fi;;\n",
			c.Name, pos2, subNames(c), sub, indent(inner.String()))
	}
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ") + "\n"
}

func bash(prog string, cmds []Command) string {
	fn := "_" + strings.ReplaceAll(prog, "-", "_")
	var b strings.Builder
	fmt.Fprintf(&b, "# bash completion for %[1]s: source <(%[1]s completion bash)\n%[2]s() {\n", prog, fn)
	b.WriteString("  local cur=${COMP_WORDS[COMP_CWORD]} cmd=${COMP_WORDS[1]} sub=${COMP_WORDS[2]} choices=\"\"\n")
	fmt.Fprintf(&b, "  if [[ $COMP_CWORD -eq 1 ]]; then choices=%q\n  else case $cmd in\n", strings.Join(Names(cmds), " "))
	cases(&b, cmds, func(p, w string) string { return fmt.Sprintf("    %s) choices=%q;;\n", p, w) }, "[[ $COMP_CWORD -eq 2 ]]", "$sub")
	fmt.Fprintf(&b, "  esac; fi\n  COMPREPLY=($(compgen -W \"$choices\" -- \"$cur\"))\n}\ncomplete -F %s %s\n", fn, prog)
	return b.String()
}

func zsh(prog string, cmds []Command) string {
	fn := "_" + strings.ReplaceAll(prog, "-", "_")
	var b strings.Builder
	fmt.Fprintf(&b, "#compdef %[1]s\n# zsh completion for %[1]s: source <(%[1]s completion zsh)\n%[2]s() {\n", prog, fn)
	b.WriteString("  local cmd=${words[2]} sub=${words[3]}\n  local choices=\"\"\n")
	fmt.Fprintf(&b, "  if (( CURRENT == 2 )); then choices=%q\n  else case $cmd in\n", strings.Join(Names(cmds), " "))
	cases(&b, cmds, func(p, w string) string { return fmt.Sprintf("    %s) choices=%q;;\n", p, w) }, "(( CURRENT == 3 ))", "$sub")
	fmt.Fprintf(&b, "  esac; fi\n  compadd -- ${=choices}\n}\ncompdef %s %s\n", fn, prog)
	return b.String()
}

func fish(prog string, cmds []Command) string {
	q := func(s string) string {
		return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# fish completion for %[1]s: %[1]s completion fish | source\ncomplete -c %[1]s -f\n", prog)
	for _, c := range listed(cmds) {
		fmt.Fprintf(&b, "complete -c %s -n __fish_use_subcommand -a %s -d %s\n", prog, c.Name, q(c.Summary))
		seen := "__fish_seen_subcommand_from " + c.Name
		for _, f := range c.Flags {
			fmt.Fprintf(&b, "complete -c %s -n %s -l %s\n", prog, q(seen), f.Name)
		}
		for _, s := range c.Subcommands {
			fmt.Fprintf(&b, "complete -c %s -n %s -a %s -d %s\n", prog, q(seen+"; and not __fish_seen_subcommand_from "+subNames(c)), s.Name, q(s.Summary))
			for _, f := range s.Flags {
				fmt.Fprintf(&b, "complete -c %s -n %s -l %s\n", prog, q(seen+"; and __fish_seen_subcommand_from "+s.Name), f.Name)
			}
		}
	}
	return b.String()
}
