package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

// agentGroup is the agent command.
var agentGroup = group{name: "agent", summary: "manage agents over the API", subs: []sub{
	{"create", "", "create an agent", func(ctx context.Context, c *subcommand, args []string) error { return agentWrite(ctx, c, args, false) }},
	{"list", "", "list agents", agentList},
	{"get", "ID|NAME", "show an agent's latest version", agentGet},
	{"update", "ID|NAME", "make a new version of an agent with the given fields", func(ctx context.Context, c *subcommand, args []string) error { return agentWrite(ctx, c, args, true) }},
}}

// agentFlags are the body flags shared by create and update.
type agentFlags struct {
	name, model, system, description, file, environment string
	maxSteps, turnSeconds, maxTurns                     int
	maxTokens, maxSessionTokens                         int64
	maxSessionCostUSD                                   float64
	version                                             int
	// fileLimits records that --file gave limits: the base the limit flags
	// override, so an update needs not read the latest version.
	fileLimits bool
}

func (f *agentFlags) register(c *subcommand, update bool) {
	c.fs.StringVar(&f.name, "name", "", "agent `NAME`")
	c.fs.StringVar(&f.model, "model", "", "`MODEL`: anthropic/<model> or openai/<model>")
	c.fs.StringVar(&f.system, "system", "", "system `PROMPT`")
	c.fs.StringVar(&f.description, "description", "", "a `DESCRIPTION`")
	c.fs.IntVar(&f.maxSteps, "max-steps", 0, "limit: model calls per turn")
	c.fs.IntVar(&f.turnSeconds, "turn-seconds", 0, "limit: wall seconds per turn")
	c.fs.Int64Var(&f.maxTokens, "max-tokens", 0, "limit: tokens (input+output) per turn")
	c.fs.Int64Var(&f.maxSessionTokens, "max-session-tokens", 0, "budget: tokens per session, across its turns (reaching it pauses the turn)")
	c.fs.Float64Var(&f.maxSessionCostUSD, "max-session-cost-usd", 0, "budget: estimated US dollars per session (reaching it pauses the turn)")
	c.fs.IntVar(&f.maxTurns, "max-turns", 0, "limit: turns per session, retries included (the next input waits until it is raised)")
	c.fs.StringVar(&f.environment, "environment", "", "the `ENVIRONMENT` (id or name) its sandbox is made from; \"\" for none")
	c.fs.StringVar(&f.file, "file", "", "a `FILE` of the JSON body as in POST /v1/agents ('-' reads stdin); flags override its fields")
	if update {
		c.fs.IntVar(&f.version, "version", 0, "fail with a conflict unless the latest version is `VERSION`")
	}
}

// agentWrite is agent create and agent update.
func agentWrite(ctx context.Context, c *subcommand, args []string, update bool) error {
	n := 0
	if update {
		n = 1
	}
	var f agentFlags
	f.register(c, update)
	pos, err := c.parse(args, n)
	if err != nil {
		return err
	}
	p, err := c.agentParams(&f)
	if err != nil {
		return err
	}
	switch {
	case !update && (p.Name == nil || (p.Model == nil && (p.Runtime == nil || p.Runtime.Kind != core.RuntimeACP))):
		return &usageError{cmd: c, msg: "agent create: --name and --model are required (or give them in --file; an agent whose runtime is acp needs no model)"}
	case update && p == (client.AgentParams{Version: p.Version}):
		return &usageError{cmd: c, msg: "agent update: nothing to change; give a flag or --file"}
	}
	cl, err := c.client()
	if err != nil {
		return err
	}
	if p.Environment != nil && *p.Environment != "" {
		e, err := getEnvironment(ctx, cl, *p.Environment)
		if err != nil {
			return err
		}
		p.Environment = &e.ID
	}
	var a *core.Agent
	if update {
		a, err = c.updateAgent(ctx, cl, pos[0], &f, p)
	} else {
		a, err = cl.CreateAgent(ctx, p)
	}
	if err != nil {
		return err
	}
	return c.showAgent(a)
}

// agentParams builds the body from --file and the flags given; only given
// fields are sent, so an update changes nothing else.
func (c *subcommand) agentParams(f *agentFlags) (client.AgentParams, error) {
	var p client.AgentParams
	if f.file != "" {
		if err := c.readJSONFile(f.file, &p); err != nil {
			return p, err
		}
		f.fileLimits = p.Limits != nil
	}
	str := func(flagName, v string, dst **string) {
		if c.given(flagName) {
			*dst = &v
		}
	}
	str("name", f.name, &p.Name)
	str("model", f.model, &p.Model)
	str("system", f.system, &p.System)
	str("description", f.description, &p.Description)
	str("environment", f.environment, &p.Environment)
	if c.givenLimits() > 0 {
		if p.Limits == nil {
			p.Limits = &core.Limits{}
		}
		f.overlayLimits(c, p.Limits)
	}
	if c.given("version") {
		p.Version = &f.version
	}
	return p, nil
}

// givenLimits counts the limit flags on the command line.
func (c *subcommand) givenLimits() int {
	n := 0
	for _, name := range []string{"max-steps", "turn-seconds", "max-tokens", "max-session-tokens", "max-session-cost-usd", "max-turns"} {
		if c.given(name) {
			n++
		}
	}
	return n
}

// overlayLimits writes the given limit flags onto l.
func (f *agentFlags) overlayLimits(c *subcommand, l *core.Limits) {
	if c.given("max-steps") {
		l.MaxSteps = f.maxSteps
	}
	if c.given("turn-seconds") {
		l.TurnSeconds = f.turnSeconds
	}
	if c.given("max-tokens") {
		l.MaxTokens = f.maxTokens
	}
	if c.given("max-session-tokens") {
		l.MaxSessionTokens = f.maxSessionTokens
	}
	if c.given("max-session-cost-usd") {
		l.MaxSessionCostUSD = f.maxSessionCostUSD
	}
	if c.given("max-turns") {
		l.MaxTurns = f.maxTurns
	}
}

// updateAgent sends the update. Limits are one field to the API, so the
// limit flags given are laid over the latest version's limits (unless
// --file gave the limits whole), and that version is pinned so a
// concurrent update is refused rather than overwritten.
func (c *subcommand) updateAgent(ctx context.Context, cl *client.Client, id string, f *agentFlags, p client.AgentParams) (*core.Agent, error) {
	if c.givenLimits() > 0 && !f.fileLimits {
		cur, err := cl.GetAgent(ctx, id)
		if err != nil {
			return nil, err
		}
		l := cur.Limits
		f.overlayLimits(c, &l)
		p.Limits = &l
		if p.Version == nil {
			p.Version = &cur.Version
		}
	}
	return cl.UpdateAgent(ctx, id, p)
}

func agentList(ctx context.Context, c *subcommand, args []string) error {
	var lp client.ListParams
	c.fs.StringVar(&lp.After, "after", "", "list agents after this `ID`")
	c.fs.IntVar(&lp.Limit, "limit", 0, "at most `N` (default 100, at most 1000)")
	_, cl, err := c.start(args, 0)
	if err != nil {
		return err
	}
	page, err := cl.ListAgents(ctx, lp)
	if err != nil {
		return err
	}
	if c.json {
		return c.printJSON(page, false)
	}
	rows := [][]string{{"ID", "NAME", "VERSION", "MODEL", "UPDATED"}}
	for _, a := range page.Data {
		rows = append(rows, []string{a.ID, a.Name, fmt.Sprint(a.Version), a.Model, showTime(a.UpdatedAt)})
	}
	if err := c.table(rows); err != nil {
		return err
	}
	if page.HasMore && len(page.Data) > 0 {
		fmt.Fprintf(c.env.stderr, "more: --after %s\n", page.Data[len(page.Data)-1].ID)
	}
	return nil
}

func agentGet(ctx context.Context, c *subcommand, args []string) error {
	pos, cl, err := c.start(args, 1)
	if err != nil {
		return err
	}
	a, err := getAgent(ctx, cl, pos[0])
	if err != nil {
		return err
	}
	return c.showAgent(a)
}

// showRuntime is the kind, and an ACP agent's command.
func showRuntime(r core.AgentRuntime) string {
	if r.Kind != core.RuntimeACP {
		return r.KindOrDefault()
	}
	return r.Kind + ": " + strings.Join(r.Command, " ")
}

func (c *subcommand) showAgent(a *core.Agent) error {
	if c.json {
		return c.printJSON(a, false)
	}
	return c.keyValues([][2]string{
		{"id", a.ID},
		{"name", a.Name},
		{"version", fmt.Sprint(a.Version)},
		{"model", a.Model},
		{"runtime", showRuntime(a.Runtime)},
		{"description", a.Description},
		{"limits", showLimits(a.Limits)},
		{"tools", fmt.Sprint(len(a.Tools))},
		{"mcp_servers", fmt.Sprint(len(a.MCPServers))},
		{"environment", a.Environment},
		{"metadata", showMap(a.Metadata)},
		{"created_at", showTime(a.CreatedAt)},
		{"updated_at", showTime(a.UpdatedAt)},
		{"system", a.System},
	})
}
