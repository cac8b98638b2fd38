package main

import (
	"context"
	"fmt"
	"github.com/switchboardhq/switchboard/providers"

	"github.com/switchboardhq/switchboard/core/command"
	"github.com/switchboardhq/switchboard/oauth"
	"github.com/switchboardhq/switchboard/playground"
	"github.com/switchboardhq/switchboard/sessions/store/storecopy"
	"github.com/switchboardhq/switchboard/sessions/surfaces/cli"
)

// commands is every subcommand, in the order the help lists them.
func commands() []command.Command {
	clientDefaults := cli.Defaults{URL: "http://" + defaultAddr, DataDir: defaultDataDir}
	cmds := []command.Command{
		{Name: "serve", Usage: "serve [flags]", Summary: "run the gateway (see serve -h)", Run: runServe},
		playground.Command(playground.Deps{Serve: runServe}),
		cli.Agent(clientDefaults),
		cli.Session(clientDefaults),
		cli.Skill(clientDefaults),
		cli.Memory(clientDefaults),
		cli.Destination(clientDefaults),
		cli.Schedule(clientDefaults),
		storecopy.Command(storecopy.Deps{DataDir: defaultDataDir, Keys: func(key string) (storecopy.Keys, error) { return oauth.NewSealer(key) }}),
		{Name: "version", Usage: "version", Summary: "print the version", Run: func(_ context.Context, env command.Env, _ []string) int {
			fmt.Fprintln(env.Stdout, versionLine())
			return 0
		}},
	}
	return append(cmds, command.Command{Name: "help", Run: func(_ context.Context, env command.Env, _ []string) int {
		fmt.Fprint(env.Stdout, usage(cmds))
		return 0
	}})
}

// usage is the top-level help.
func usage(cmds []command.Command) string {
	return "switchboard — a self-hosted gateway for AI agents in " + providers.PlatformsOf(modules()).Labels() + "\n\nusage:\n" +
		command.Help("switchboard", cmds) + `
The agent, session, skill and memory commands reach the server at --url, $SWITCHBOARD_URL or
http://` + defaultAddr + ` with --token, $SWITCHBOARD_TOKEN or the token file
<data dir>/admin-token; --json prints JSON.
`
}

// run dispatches a command line and returns the exit code.
func run(ctx context.Context, args []string, env command.Env) int {
	cmds := commands()
	if len(args) == 0 {
		fmt.Fprint(env.Stderr, usage(cmds))
		return 2
	}
	name := args[0]
	if name == "-h" || name == "--help" {
		name = "help"
	}
	c, ok := command.Find(cmds, name)
	if !ok {
		fmt.Fprintf(env.Stderr, "switchboard: unknown command %q\n\n%s", args[0], usage(cmds))
		return 2
	}
	return c.Run(ctx, env, args[1:])
}

// runServe runs the gateway until a signal or the end of ctx.
func runServe(ctx context.Context, env command.Env, args []string) int {
	if err := serve(ctx, args, env, env.Stdout, env.Stderr); err != nil {
		fmt.Fprintln(env.Stderr, "switchboard:", err)
		return 1
	}
	return 0
}
