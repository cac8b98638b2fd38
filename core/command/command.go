// Package command declares the subcommands of the switchboard binary. The
// package that owns a subcommand returns it as a Command (sessions/surfaces/cli
// its agent and session commands, for instance), and the binary
// dispatches over an explicit list of them, so nothing registers itself
// and the list reads in one place. The list is also the command tree the
// help, the completion scripts and their tests walk.
//
// It is apart from core/settings because a command need not read
// settings: the CLI's commands parse flags of their own, and only serve
// is configured by options.
package command

import (
	"context"
	"io"
	"strings"
)

// Env is the process as a command sees it.
type Env struct {
	Getenv func(string) string
	// Environ lists the environment as KEY=value (os.Environ); nil when
	// the command runs with Getenv alone.
	Environ func() []string
	Stdin   io.Reader
	Stdout  io.Writer
	Stderr  io.Writer
}

// Command is one subcommand.
type Command struct {
	Name string
	// Usage is the command line after the binary's name, for the
	// top-level help ("serve [flags]"); a command without one is not
	// listed there.
	Usage string
	// Summary says what the command does, in a few words.
	Summary string
	// Run runs the command with the arguments after its name, reports
	// its own errors on env.Stderr and returns the exit code. Given -h or
	// --help it prints its usage on env.Stdout and returns 0.
	Run func(ctx context.Context, env Env, args []string) int
	// Subcommands are the commands of a group (agent create, agent
	// list), each named without its group; Run dispatches to them.
	Subcommands []Command
	// Flags are the command's flags, for completion and the synopsis.
	Flags []Flag
}

// Flag is a flag of a command.
type Flag struct {
	Name  string // without dashes: "agent"
	Value string // what its value is, "NAME"; "" for a switch
}

// summaryColumn is where the summaries of Help start.
const summaryColumn = 33

// Help lists the commands for the top-level help, one "  prog usage"
// line each with the summary aligned after it, or on the next line when
// the usage reaches the summaries' column.
func Help(prog string, cmds []Command) string {
	var b strings.Builder
	for _, c := range cmds {
		if c.Usage == "" {
			continue
		}
		line := "  " + prog + " " + c.Usage
		b.WriteString(line)
		if len(line) < summaryColumn {
			b.WriteString(strings.Repeat(" ", summaryColumn-len(line)))
		} else {
			b.WriteString("\n" + strings.Repeat(" ", summaryColumn))
		}
		b.WriteString(c.Summary + "\n")
	}
	return b.String()
}

// Find returns the command of that name.
func Find(cmds []Command, name string) (Command, bool) {
	for _, c := range cmds {
		if c.Name == name {
			return c, true
		}
	}
	return Command{}, false
}

// Names are the names of cmds that Help lists.
func Names(cmds []Command) []string {
	var out []string
	for _, c := range cmds {
		if c.Usage != "" {
			out = append(out, c.Name)
		}
	}
	return out
}
