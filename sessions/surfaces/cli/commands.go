package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/switchboardhq/switchboard/core/command"
)

// Defaults are where the commands find the server and its token when
// neither flags nor environment say: the gateway's own defaults, which
// the binary knows.
type Defaults struct {
	URL     string // base URL of the server, e.g. http://127.0.0.1:8080
	DataDir string // the gateway's data directory, holding admin-token
}

// Agent is the agent command: create, list, get and update agents.
func Agent(d Defaults) command.Command { return agentGroup.command(d) }

// Session is the session command: create, list and drive sessions.
func Session(d Defaults) command.Command { return sessionGroup.command(d) }

// Skill is the skill command: upload skill folders, list, read and
// delete skills.
func Skill(d Defaults) command.Command { return skillGroup.command(d) }

// runner runs a command group until it ends or the process is
// interrupted, which ends a follow cleanly.
func runner(d Defaults, group func(context.Context, cliIO, []string) error) func(context.Context, command.Env, []string) int {
	return func(ctx context.Context, e command.Env, args []string) int {
		env := cliIO{getenv: e.Getenv, stdin: e.Stdin, stdout: e.Stdout, stderr: e.Stderr, defaults: d}
		ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
		return report(env.stderr, group(ctx, env, args))
	}
}

// report writes err to stderr and returns the exit code: 2 with a usage
// hint for a malformed command line, 1 for any other error.
func report(stderr io.Writer, err error) int {
	var ue *usageError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "switchboard: %s\n", ue.msg)
		if ue.cmd != nil {
			fmt.Fprintf(stderr, "usage: switchboard %s\nrun 'switchboard %s --help' for its flags\n", ue.cmd.usage, ue.cmd.name)
		}
		return 2
	}
	fmt.Fprintln(stderr, "switchboard:", err)
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "dial" {
		fmt.Fprintln(stderr, "is switchboard serve running there? point at it with --url or SWITCHBOARD_URL")
	}
	return 1
}
