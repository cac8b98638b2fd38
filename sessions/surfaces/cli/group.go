package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/switchboardhq/switchboard/core/command"
)

// group is a command of subcommands (agent, session, vault): the tree
// its help, its dispatch and the completion scripts are made from.
type group struct {
	name, summary string
	subs          []sub
}

// sub is one subcommand of a group. Its run registers its own flags on
// c, then parses the command line with c.parse or c.start, which print
// its help for -h and --help.
type sub struct {
	name    string // "send"
	args    string // the positional arguments, "ID TEXT"
	summary string
	run     func(ctx context.Context, c *subcommand, args []string) error
}

// usage is the sub's command line after the group's name.
func (s sub) usage() string {
	return strings.Join(strings.Fields(s.name+" "+s.args+" [flags]"), " ")
}

// command is the group as the binary lists it.
func (g group) command(d Defaults) command.Command {
	names := make([]string, len(g.subs))
	var subs []command.Command
	for i, s := range g.subs {
		names[i] = s.name
		subs = append(subs, command.Command{Name: s.name, Usage: g.name + " " + s.usage(), Summary: s.summary, Flags: g.flags(d, s)})
	}
	return command.Command{Name: g.name, Usage: g.name + " " + strings.Join(names, "|") + " [flags]",
		Summary: g.summary + " (see " + g.name + " --help)", Run: runner(d, g.dispatch), Subcommands: subs}
}

// flags are the flags s registers, read by asking it for its help.
func (g group) flags(d Defaults, s sub) []command.Flag {
	c := g.newSub(cliIO{getenv: func(string) string { return "" }, stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, defaults: d}, s)
	_ = s.run(context.Background(), c, []string{"--help"})
	return command.Flags(c.fs)
}

func (g group) newSub(env cliIO, s sub) *subcommand {
	c := newSubcommand(env, g.name+" "+s.name, s.usage())
	c.usage = g.name + " " + s.usage() // a group under another names both
	c.summary = s.summary
	return c
}

// dispatch runs the subcommand args name; help, -h and --help print the
// group's help, or with a name after them that subcommand's.
func (g group) dispatch(ctx context.Context, env cliIO, args []string) error {
	name := ""
	if len(args) > 0 {
		name, args = args[0], args[1:]
	}
	if command.IsHelp(name) {
		if len(args) == 0 {
			fmt.Fprint(env.stdout, g.help(env))
			return flag.ErrHelp
		}
		name, args = args[0], []string{"--help"}
	}
	for _, s := range g.subs {
		if s.name == name {
			return s.run(ctx, g.newSub(env, s), args)
		}
	}
	fmt.Fprint(env.stderr, g.help(env))
	if name == "" {
		return &usageError{msg: g.name + ": missing subcommand"}
	}
	msg := fmt.Sprintf("%s: unknown subcommand %q", g.name, name)
	names := make([]string, len(g.subs))
	for i, s := range g.subs {
		names[i] = s.name
	}
	if near := command.Suggest(name, names); near != "" {
		msg += fmt.Sprintf("; did you mean %q?", near)
	}
	return &usageError{msg: msg}
}

// help lists the group's subcommands and the flags they all take.
func (g group) help(env cliIO) string {
	subs := make([]command.Command, len(g.subs))
	for i, s := range g.subs {
		subs[i] = command.Command{Name: s.name, Usage: g.name + " " + s.usage(), Summary: s.summary}
	}
	common := newSubcommand(env, g.name, "")
	return "usage: switchboard " + g.name + " COMMAND [flags]\n\n" + g.summary + "\n\ncommands:\n" +
		command.Help("switchboard", subs) + "\nflags of every command:\n" + command.FlagUsage(common.fs) +
		"\nrun 'switchboard " + g.name + " COMMAND --help' for a command's own flags\n"
}
