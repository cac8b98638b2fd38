package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/switchboardhq/switchboard/core"

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
	var serveFlags []command.Flag
	for _, o := range allServeOptions() {
		serveFlags = append(serveFlags, command.Flag{Name: o.Flag, Value: "STRING"})
	}
	cmds := []command.Command{
		{Name: "serve", Usage: "serve [flags]", Summary: "run the gateway (see serve --help)", Run: runServe, Flags: serveFlags},
		playground.Command(playground.Deps{Serve: runServe}),
		cli.Agent(clientDefaults),
		cli.Session(clientDefaults),
		cli.Skill(clientDefaults),
		cli.Memory(clientDefaults),
		cli.Destination(clientDefaults),
		cli.Schedule(clientDefaults),
		cli.Vault(clientDefaults),
		cli.Credential(clientDefaults),
		cli.Environment(clientDefaults),
		cli.Installation(clientDefaults),
		cli.Link(clientDefaults),
		cli.ACP(clientDefaults, cli.ACPDeps{Describe: describeOrigin, Version: versionLine()}),
		storecopy.Command(storecopy.Deps{DataDir: defaultDataDir, Keys: func(key string) (storecopy.Keys, error) { return oauth.NewSealer(key) }}),
	}
	cmds = append(cmds, appCommands(modules())...)
	cmds = append(cmds, command.Command{Name: "version", Usage: "version [--json]", Summary: "print the version", Run: runVersion, Flags: []command.Flag{{Name: "json"}}})
	cmds = append(cmds, completionCommand(&cmds))
	cmds = append(cmds, command.Command{Name: "help", Usage: "help [COMMAND [SUBCOMMAND]]", Summary: "print this help, or a command's"})
	cmds[len(cmds)-1].Run = func(ctx context.Context, env command.Env, args []string) int {
		if len(args) == 0 || command.IsHelp(args[0]) {
			fmt.Fprint(env.Stdout, usage(cmds))
			return 0
		}
		return run(ctx, append(args, "--help"), env)
	}
	return cmds
}

// describeOrigin says where a session began, as the editor's session
// list shows it: the platform's label and its address of the thread.
func describeOrigin(o core.Origin) string {
	p, ok := providers.PlatformsOf(modules()).Lookup(o.Provider)
	if !ok {
		return o.Key
	}
	return p.Label + " " + strings.TrimPrefix(o.Key, o.Provider+":")
}

// usage is the top-level help.
func usage(cmds []command.Command) string {
	return "switchboard — a self-hosted gateway for AI agents in " + providers.PlatformsOf(modules()).Labels() + "\n\nusage:\n" +
		command.Help("switchboard", cmds) + `
The commands over the API reach the server at --url, $SWITCHBOARD_URL or
http://` + defaultAddr + ` with --token, $SWITCHBOARD_TOKEN or the token file
<data dir>/admin-token; --json prints JSON.
Run 'switchboard COMMAND --help' for a command's subcommands and flags.
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
	if command.IsHelp(name) {
		name = "help"
	}
	c, ok := command.Find(cmds, name)
	if !ok {
		fmt.Fprintf(env.Stderr, "switchboard: unknown command %q", args[0])
		if near := command.Suggest(args[0], command.Names(cmds)); near != "" {
			fmt.Fprintf(env.Stderr, "; did you mean %q?", near)
		}
		fmt.Fprintf(env.Stderr, "\n\n%s", usage(cmds))
		return 2
	}
	return c.Run(ctx, env, args[1:])
}

// runServe runs the gateway until a signal or the end of ctx.
func runServe(ctx context.Context, env command.Env, args []string) int {
	err := serve(ctx, args, env, env.Stdout, env.Stderr)
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	}
	fmt.Fprintln(env.Stderr, "switchboard:", err)
	return 1
}

// runVersion prints the version, as a line or with --json as an object.
func runVersion(_ context.Context, env command.Env, args []string) int {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	asJSON := fs.Bool("json", false, "print {\"version\", \"commit\"} as JSON")
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(env.Stdout, "usage: switchboard version [flags]\n\nprint the version and the commit it was built from\n\nflags:\n"+command.FlagUsage(fs))
		return 0
	case err != nil:
		fmt.Fprintln(env.Stderr, "switchboard: version:", err)
		return 2
	case fs.NArg() > 0:
		fmt.Fprintf(env.Stderr, "switchboard: version takes no arguments (got %q)\n", fs.Args())
		return 2
	case !*asJSON:
		fmt.Fprintln(env.Stdout, versionLine())
		return 0
	}
	v, c := buildVersion()
	b, _ := json.Marshal(map[string]string{"version": v, "commit": c}) // strings always marshal
	fmt.Fprintf(env.Stdout, "%s\n", b)
	return 0
}
