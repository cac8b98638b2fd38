package cli

import (
	"context"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/command"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

// Destination is the destination command: pause and resume webhook
// destinations.
func Destination(d Defaults) command.Command { return destinationGroup.command(d) }

// destinationGroup is the destination command.
var destinationGroup = group{name: "destination", summary: "manage webhook destinations and their deliveries", subs: []sub{
	{"pause", "ID", "stop a destination's deliveries until resumed", destinationChange((*client.Client).PauseDestination)},
	{"resume", "ID", "resume a paused destination's deliveries", destinationChange((*client.Client).ResumeDestination)},
}}

// destinationChange runs a subcommand that changes one destination and
// shows it as it then is.
func destinationChange(change func(*client.Client, context.Context, string) (*core.Destination, error)) func(context.Context, *subcommand, []string) error {
	return func(ctx context.Context, c *subcommand, args []string) error {
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
}
