package cli

import (
	"context"
	"slices"
	"strings"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/command"
	"github.com/switchboardhq/switchboard/core/web"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

// Installation is the installation command: the gateway's installations
// in Slack workspaces, GitHub accounts and Linear organizations.
func Installation(d Defaults) command.Command { return installationGroup.command(d) }

var installationGroup = group{name: "installation", summary: "manage installations: who may trigger their agent, and which agent", subs: []sub{
	{"list", "", "list installations", installationList},
	{"get", "INSTALLATION", "show an installation (its id or name)", installationGet},
	{"policy", "INSTALLATION", "set who may trigger it, and which agent serves it", installationPolicy},
	{"delete", "INSTALLATION", "revoke its tokens at the platform and forget it", installationDelete},
}}

func installationList(ctx context.Context, c *subcommand, args []string) error {
	var provider string
	c.fs.StringVar(&provider, "provider", "", "only the installations of this `PROVIDER`, a platform's name")
	_, cl, err := c.start(args, 0)
	if err != nil {
		return err
	}
	all, err := allInstallations(ctx, cl, provider)
	if err != nil {
		return err
	}
	if c.json {
		return c.printJSON(dataOf(all), false)
	}
	names, err := listAgentNames(ctx, cl, slices.ContainsFunc(all, func(in core.Installation) bool { return in.Agent != "" }))
	if err != nil {
		return err
	}
	rows := [][]string{{"ID", "PROVIDER", "NAME", "EXTERNAL_ID", "AGENT"}}
	for _, in := range all {
		rows = append(rows, []string{in.ID, in.Provider, dash(in.Name), in.ExternalID, firstOf(names.of(in.Agent), "default")})
	}
	return c.table(rows)
}

func installationGet(ctx context.Context, c *subcommand, args []string) error {
	pos, cl, err := c.start(args, 1)
	if err != nil {
		return err
	}
	in, err := findInstallation(ctx, cl, pos[0])
	if err != nil {
		return err
	}
	return c.showInstallation(&in)
}

func installationPolicy(ctx context.Context, c *subcommand, args []string) error {
	var channels, users listFlag
	var agent string
	var clearChannels, clearUsers bool
	c.fs.Var(&channels, "channel", "a `CHANNEL` where it may be triggered, as its platform names one (repeatable; replaces the channels, keeps the users)")
	c.fs.Var(&users, "user", "a `USER` who may trigger it, as its platform names one (repeatable; replaces the users, keeps the channels)")
	c.fs.BoolVar(&clearChannels, "clear-channels", false, "empty the channels: it may be triggered everywhere")
	c.fs.BoolVar(&clearUsers, "clear-users", false, "empty the users: everyone may trigger it")
	c.fs.StringVar(&agent, "agent", "", "bind its new sessions to this agent (id or `NAME`; \"\" for the agent named default)")
	pos, cl, err := c.start(args, 1)
	if err != nil {
		return err
	}
	in, err := findInstallation(ctx, cl, pos[0])
	if err != nil {
		return err
	}
	if (clearChannels && c.given("channel")) || (clearUsers && c.given("user")) {
		return &usageError{cmd: c, msg: "installation policy: --clear-channels and --channel, or --clear-users and --user, contradict each other"}
	}
	var p client.InstallationParams
	// The API replaces the whole policy: the list not named keeps its
	// current value, or one flag would open the installation wider.
	if c.given("channel") || c.given("user") || clearChannels || clearUsers {
		policy := core.AccessPolicy{Channels: orEmpty(in.Policy.Channels), Users: orEmpty(in.Policy.Users)}
		if c.given("channel") || clearChannels {
			policy.Channels = orEmpty(channels)
		}
		if c.given("user") || clearUsers {
			policy.Users = orEmpty(users)
		}
		p.Policy = &policy
	}
	if c.given("agent") {
		if agent != "" {
			a, err := getAgent(ctx, cl, agent)
			if err != nil {
				return err
			}
			agent = a.ID
		}
		p.Agent = &agent
	}
	if p == (client.InstallationParams{}) {
		return &usageError{cmd: c, msg: "installation policy: nothing to change; give --channel, --user, --clear-channels, --clear-users or --agent"}
	}
	out, err := cl.UpdateInstallation(ctx, in.ID, p)
	if err != nil {
		return err
	}
	return c.showInstallation(out)
}

func installationDelete(ctx context.Context, c *subcommand, args []string) error {
	pos, cl, err := c.start(args, 1)
	if err != nil {
		return err
	}
	in, err := findInstallation(ctx, cl, pos[0])
	if err != nil {
		return err
	}
	if err := cl.DeleteInstallation(ctx, in.ID); err != nil {
		return err
	}
	return c.deleted(in.ID)
}

func orEmpty(l listFlag) []string {
	if l == nil {
		return []string{}
	}
	return l
}

func allInstallations(ctx context.Context, cl *client.Client, provider string) ([]core.Installation, error) {
	list := func(ctx context.Context, p client.ListParams) (*web.Page[core.Installation], error) {
		return cl.ListInstallations(ctx, provider, p)
	}
	return listAll(ctx, list, func(in core.Installation) string { return in.ID })
}

func findInstallation(ctx context.Context, cl *client.Client, ref string) (core.Installation, error) {
	all, err := allInstallations(ctx, cl, "")
	if err != nil {
		return core.Installation{}, err
	}
	return find("installation", ref, all, func(in core.Installation) (string, string) { return in.ID, in.Name })
}

// getAgent gets an agent by id or name, which the API resolves; an
// unknown one names the closest.
func getAgent(ctx context.Context, cl *client.Client, ref string) (*core.Agent, error) {
	a, err := cl.GetAgent(ctx, ref)
	if err != nil {
		return nil, orClosest(ctx, err, "agent", ref, cl.ListAgents, func(a core.Agent) (string, string) { return a.ID, a.Name })
	}
	return a, nil
}

func (c *subcommand) showInstallation(in *core.Installation) error {
	if c.json {
		return c.printJSON(in, false)
	}
	return c.keyValues([][2]string{
		{"id", in.ID},
		{"provider", in.Provider},
		{"name", in.Name},
		{"external_id", in.ExternalID},
		{"agent", firstOf(in.Agent, "default")},
		{"channels", firstOf(strings.Join(in.Policy.Channels, " "), "everywhere")},
		{"users", firstOf(strings.Join(in.Policy.Users, " "), "everyone")},
		{"tenant_group", in.TenantGroup},
		{"scopes", strings.Join(in.Scopes, " ")},
	})
}
