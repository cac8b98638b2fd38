package cli

import (
	"context"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/command"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

// Destination is the destination command: pause and resume webhook
// destinations.
func Destination(d Defaults) command.Command {
	return command.Command{Name: "destination", Usage: "destination pause|resume ID [flags]",
		Summary: "pause and resume webhook destinations (see destination -h)", Run: runner(d, destinationCommand)}
}

// destinationUsage lists the destination subcommands, for help and usage
// errors.
var destinationUsage = []string{
	"pause ID",
	"resume ID",
}

func destinationCommand(ctx context.Context, env cliIO, args []string) error {
	sub := ""
	if len(args) > 0 {
		sub, args = args[0], args[1:]
	}
	switch sub {
	case "pause":
		return destinationChange(ctx, env, args, "pause", destinationUsage[0], (*client.Client).PauseDestination)
	case "resume":
		return destinationChange(ctx, env, args, "resume", destinationUsage[1], (*client.Client).ResumeDestination)
	}
	return groupHelp(env, "destination", sub, destinationUsage)
}

// destinationChange runs a subcommand that changes one destination and
// shows it as it then is.
func destinationChange(ctx context.Context, env cliIO, args []string, name, usage string,
	change func(*client.Client, context.Context, string) (*core.Destination, error)) error {
	c := newSubcommand(env, "destination "+name, usage)
	pos, cl, err := c.start(args, 1)
	if err != nil {
		return err
	}
	d, err := change(cl, ctx, pos[0])
	if err != nil {
		return err
	}
	if c.json {
		return c.printJSON(d, false)
	}
	paused := ""
	if d.PausedAt != nil {
		paused = showTime(*d.PausedAt)
	}
	return c.keyValues([][2]string{
		{"id", d.ID},
		{"url", d.URL},
		{"status", string(d.Status)},
		{"paused_at", paused},
	})
}
