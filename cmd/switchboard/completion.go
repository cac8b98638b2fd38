package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/switchboardhq/switchboard/core/command"
)

// completionCommand is switchboard completion SHELL: a completion script
// made from cmds, the whole command tree (itself included, once the
// list is made).
func completionCommand(cmds *[]command.Command) command.Command {
	c := command.Command{Name: "completion", Usage: "completion bash|zsh|fish", Summary: "print a shell completion script"}
	for _, sh := range command.Shells() {
		c.Subcommands = append(c.Subcommands, command.Command{Name: sh, Usage: "completion " + sh, Summary: "print the completion script of " + sh})
	}
	help := "usage: switchboard completion bash|zsh|fish\n\nprint a script that completes switchboard's commands, subcommands and flags:\n" +
		"  bash: source <(switchboard completion bash)\n  zsh:  source <(switchboard completion zsh)\n  fish: switchboard completion fish | source\n"
	c.Run = func(_ context.Context, env command.Env, args []string) int {
		switch {
		case len(args) == 0:
			fmt.Fprint(env.Stderr, "switchboard: completion: name a shell\n"+help)
			return 2
		case command.IsHelp(args[0]) || slices.ContainsFunc(args[1:], command.IsHelp):
			fmt.Fprint(env.Stdout, help)
			return 0
		case len(args) > 1:
			fmt.Fprintf(env.Stderr, "switchboard: completion: want one shell, got %q\n", args)
			return 2
		}
		script, err := command.Completion("switchboard", args[0], *cmds)
		if err != nil {
			fmt.Fprintln(env.Stderr, "switchboard: completion:", err)
			return 2
		}
		fmt.Fprint(env.Stdout, script)
		return 0
	}
	return c
}
