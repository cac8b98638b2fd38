package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/command"
	"github.com/switchboardhq/switchboard/core/web"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

// Destination is the destination command: webhook destinations and
// their deliveries.
func Destination(d Defaults) command.Command { return destinationGroup.command(d) }

// destinationGroup is the destination command.
var destinationGroup = group{name: "destination", summary: "manage webhook destinations and their deliveries", subs: []sub{
	{"create", "URL", "create a global destination (its secret is shown once)", destinationCreate},
	{"list", "", "list destinations", destinationList},
	{"get", "ID", "show a destination", destinationChange((*client.Client).GetDestination)},
	{"delete", "ID", "delete a destination; its pending deliveries end dead", destinationDelete},
	{"pause", "ID", "stop a destination's deliveries until resumed", destinationChange((*client.Client).PauseDestination)},
	{"resume", "ID", "resume a paused destination's deliveries", destinationChange((*client.Client).ResumeDestination)},
	{"deliveries", "", "list deliveries", deliveryList},
	{"redeliver", "DELIVERY", "deliver a delivered or dead delivery again, at once", deliveryRedeliver},
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
		return c.showDestination(d)
	}
}

func (c *subcommand) showDestination(d *core.Destination) error {
	if c.json {
		return c.printJSON(d, false)
	}
	return c.keyValues(destinationRows(d))
}

func destinationRows(d *core.Destination) [][2]string {
	return [][2]string{
		{"id", d.ID},
		{"url", d.URL},
		{"session", d.SessionID},
		{"agent", d.AgentID},
		{"level", string(d.Level)},
		{"types", firstOf(strings.Join(d.Types, " "), "every type")},
		{"status", string(d.Status)},
		{"failing_since", showTimePtr(d.FailingSince)},
		{"paused_at", showTimePtr(d.PausedAt)},
		{"created_at", showTime(d.CreatedAt)},
	}
}

func destinationCreate(ctx context.Context, c *subcommand, args []string) error {
	var spec core.DestinationSpec
	var level, secretFile string
	var types listFlag
	c.fs.StringVar(&level, "level", "", "the `LEVEL` of the events sent: user, progress or internal (default user)")
	c.fs.Var(&types, "type", "only events of this `TYPE` (repeatable; none: every type)")
	c.fs.StringVar(&spec.Agent, "agent", "", "only sessions of this agent (id or `NAME`)")
	c.fs.StringVar(&secretFile, "secret-file", "", "a `FILE` holding the signing secret (- reads stdin); default: generated and shown once")
	pos, cl, err := c.start(args, 1)
	if err != nil {
		return err
	}
	spec.URL, spec.Level, spec.Types = pos[0], core.Level(level), types
	if secretFile != "" {
		if spec.Secret, err = c.readSecret("secret-file", secretFile); err != nil {
			return err
		}
	}
	if spec.Agent != "" {
		a, err := getAgent(ctx, cl, spec.Agent)
		if err != nil {
			return err
		}
		spec.Agent = a.ID
	}
	d, err := cl.CreateDestination(ctx, spec)
	if err != nil {
		return err
	}
	if c.json {
		return c.printJSON(d, false)
	}
	rows := destinationRows(&d.Destination)
	if d.Secret != "" {
		rows = append(rows, [2]string{"secret", d.Secret + "  (shown once)"})
	}
	return c.keyValues(rows)
}

func destinationList(ctx context.Context, c *subcommand, args []string) error {
	var p client.DestinationListParams
	c.fs.StringVar(&p.Session, "session", "", "only the destinations of this session `ID`")
	c.fs.StringVar(&p.Agent, "agent", "", "only the global destinations of this agent (id or `NAME`)")
	_, cl, err := c.start(args, 0)
	if err != nil {
		return err
	}
	list := func(ctx context.Context, lp client.ListParams) (*web.Page[core.Destination], error) {
		p.ListParams = lp
		return cl.ListDestinations(ctx, p)
	}
	all, err := listAll(ctx, list, func(d core.Destination) string { return d.ID })
	if err != nil {
		return err
	}
	if c.json {
		return c.printJSON(dataOf(all), false)
	}
	names, err := listAgentNames(ctx, cl, slices.ContainsFunc(all, func(d core.Destination) bool { return d.AgentID != "" }))
	if err != nil {
		return err
	}
	rows := [][]string{{"ID", "URL", "STATUS", "LEVEL", "SESSION", "AGENT"}}
	for _, d := range all {
		rows = append(rows, []string{d.ID, d.URL, string(d.Status), string(d.Level), dash(d.SessionID), dash(names.of(d.AgentID))})
	}
	return c.table(rows)
}

func destinationDelete(ctx context.Context, c *subcommand, args []string) error {
	pos, cl, err := c.start(args, 1)
	if err != nil {
		return err
	}
	if err := cl.DeleteDestination(ctx, pos[0]); err != nil {
		return err
	}
	return c.deleted(pos[0])
}

func deliveryList(ctx context.Context, c *subcommand, args []string) error {
	var p client.DeliveryListParams
	var state string
	c.fs.StringVar(&p.Destination, "destination", "", "only the deliveries of this destination `ID`")
	c.fs.StringVar(&p.Session, "session", "", "only the deliveries of this session `ID`")
	c.fs.StringVar(&state, "state", "", "only deliveries in this `STATE`: pending, delivered or dead")
	c.fs.StringVar(&p.After, "after", "", "list deliveries after this `ID`")
	c.fs.IntVar(&p.Limit, "limit", 0, "at most `N` (default 100, at most 1000)")
	_, cl, err := c.start(args, 0)
	if err != nil {
		return err
	}
	p.State = core.DeliveryState(state)
	page, err := cl.ListDeliveries(ctx, p)
	if err != nil {
		return err
	}
	if c.json {
		return c.printJSON(page, false)
	}
	rows := [][]string{{"ID", "DESTINATION", "SESSION", "EVENT", "STATE", "ATTEMPTS", "UPDATED"}}
	for _, d := range page.Data {
		rows = append(rows, []string{d.ID, d.DestinationID, d.SessionID, fmt.Sprintf("#%d %s", d.Seq, d.EventType), string(d.State), fmt.Sprint(d.AttemptCount), showTime(d.UpdatedAt)})
	}
	if err := c.table(rows); err != nil {
		return err
	}
	if page.HasMore && len(page.Data) > 0 {
		fmt.Fprintf(c.env.stderr, "more: --after %s\n", page.Data[len(page.Data)-1].ID)
	}
	return nil
}

func deliveryRedeliver(ctx context.Context, c *subcommand, args []string) error {
	pos, cl, err := c.start(args, 1)
	if err != nil {
		return err
	}
	d, err := cl.Redeliver(ctx, pos[0])
	if err != nil {
		return err
	}
	if c.json {
		return c.printJSON(d, false)
	}
	return c.keyValues([][2]string{
		{"id", d.ID},
		{"destination", d.DestinationID},
		{"state", string(d.State)},
		{"next_attempt_at", showTimePtr(d.NextAttemptAt)},
	})
}
