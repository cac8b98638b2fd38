package cli

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/command"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

// Schedule is the schedule command: inputs sent at cron times or once.
func Schedule(d Defaults) command.Command { return scheduleGroup.command(d) }

// scheduleGroup is the schedule command.
var scheduleGroup = group{name: "schedule", summary: "send a session input, or start a session, at cron times or once", subs: []sub{
	{"create", "", "schedule an input: when (--cron, --at or --in), where (--session or --agent) and --input", scheduleCreate},
	{"list", "", "list schedules", scheduleList},
	{"get", "ID", "show a schedule", scheduleChange((*client.Client).GetSchedule)},
	{"pause", "ID", "stop a schedule's firing until resumed", scheduleChange((*client.Client).PauseSchedule)},
	{"resume", "ID", "resume a paused schedule", scheduleChange((*client.Client).ResumeSchedule)},
	{"delete", "ID", "delete a schedule", scheduleDelete},
}}

func scheduleDelete(ctx context.Context, c *subcommand, args []string) error {
	pos, cl, err := c.start(args, 1)
	if err != nil {
		return err
	}
	if err := cl.DeleteSchedule(ctx, pos[0]); err != nil {
		return err
	}
	return c.deleted(pos[0])
}

func scheduleCreate(ctx context.Context, c *subcommand, args []string) error {
	var p client.ScheduleParams
	var at, in, input string
	meta := kvFlag{}
	c.fs.StringVar(&p.Cron, "cron", "", "cron `EXPR`: minute hour day-of-month month day-of-week, or @daily…")
	c.fs.StringVar(&p.TimeZone, "time-zone", "", "IANA time zone `TZ` of the cron expression (default UTC), e.g. Europe/Berlin")
	c.fs.StringVar(&at, "at", "", "a one-off at this RFC 3339 `TIME`")
	c.fs.StringVar(&in, "in", "", "a one-off after this `DURATION` from now, e.g. 1h30m")
	c.fs.StringVar(&p.Target.SessionID, "session", "", "send the input to this session `ID`")
	c.fs.StringVar(&p.Target.Agent, "agent", "", "start a new session of this agent (id or `NAME`) at each time")
	c.fs.StringVar(&p.Target.Tenant, "tenant", "", "the new sessions' `TENANT` (with --agent)")
	c.fs.Var(meta, "metadata", "`KEY=value` metadata of the new sessions (with --agent; repeatable)")
	c.fs.StringVar(&input, "input", "", "the `MESSAGE` to send ('-' reads stdin)")
	var installation, channel string
	c.fs.StringVar(&installation, "installation", "", "with --agent and --channel: the installation (its `ID`) to post in")
	c.fs.StringVar(&channel, "channel", "", "with --agent and --installation: post the message in this `CHANNEL` of the installation's workspace; the new session answers in its thread")
	if _, err := c.parse(args, 0); err != nil {
		return err
	}
	switch {
	case at != "" && in != "":
		return &usageError{cmd: c, msg: "schedule create: give --at or --in, not both"}
	case at != "":
		t, err := time.Parse(time.RFC3339, at)
		if err != nil {
			return &usageError{cmd: c, msg: fmt.Sprintf("schedule create: --at %q is not an RFC 3339 time (e.g. 2030-05-06T09:00:00+02:00)", at)}
		}
		ct := core.NewTime(t)
		p.At = &ct
	case in != "":
		d, err := time.ParseDuration(in)
		if err != nil || d <= 0 {
			return &usageError{cmd: c, msg: fmt.Sprintf("schedule create: --in %q is not a positive duration (e.g. 45m, 2h)", in)}
		}
		ct := core.NewTime(time.Now().Add(d))
		p.At = &ct
	}
	text, err := c.readText(input)
	if err != nil {
		return err
	}
	p.Target.Input = text
	if len(meta) > 0 {
		p.Target.Metadata = meta
	}
	cl, err := c.client()
	if err != nil {
		return err
	}
	if channel != "" || installation != "" {
		if installation == "" {
			return fmt.Errorf("--channel needs --installation: the installation to post in")
		}
		// The installation says which platform it is on.
		in, err := cl.GetInstallation(ctx, installation)
		if err != nil {
			return fmt.Errorf("--installation %s: %w", installation, err)
		}
		p.Target.Post = &core.SchedulePost{Provider: in.Provider, Installation: installation, Channel: channel}
	}
	sc, err := cl.CreateSchedule(ctx, p)
	if err != nil {
		return err
	}
	return c.showSchedule(sc, c.agentName(ctx, cl, sc.Target.Agent))
}

func scheduleList(ctx context.Context, c *subcommand, args []string) error {
	var lp client.ListParams
	var session string
	c.fs.StringVar(&session, "session", "", "only the schedules that target this session `ID` or that its agent made")
	c.fs.StringVar(&lp.After, "after", "", "list schedules after this `ID`")
	c.fs.IntVar(&lp.Limit, "limit", 0, "at most `N` (default 100, at most 1000)")
	_, cl, err := c.start(args, 0)
	if err != nil {
		return err
	}
	page, err := cl.ListSchedules(ctx, session, lp)
	if err != nil {
		return err
	}
	if c.json {
		return c.printJSON(page, false)
	}
	names, err := listAgentNames(ctx, cl, slices.ContainsFunc(page.Data, func(s core.Schedule) bool { return s.Target.Agent != "" }))
	if err != nil {
		return err
	}
	rows := [][]string{{"ID", "WHEN", "TARGET", "STATE", "NEXT", "LAST", "FIRES"}}
	for _, s := range page.Data {
		rows = append(rows, []string{s.ID, scheduleWhen(&s), scheduleTarget(&s, names.of(s.Target.Agent)), scheduleState(&s), dash(showTimePtr(s.NextAt)), dash(showTimePtr(s.LastFiredAt)), fmt.Sprint(s.Fires)})
	}
	if err := c.table(rows); err != nil {
		return err
	}
	if page.HasMore && len(page.Data) > 0 {
		fmt.Fprintf(c.env.stderr, "more: --after %s\n", page.Data[len(page.Data)-1].ID)
	}
	return nil
}

// scheduleChange runs a subcommand about one schedule and shows it as it
// then is.
func scheduleChange(change func(*client.Client, context.Context, string) (*core.Schedule, error)) func(context.Context, *subcommand, []string) error {
	return func(ctx context.Context, c *subcommand, args []string) error {
		pos, cl, err := c.start(args, 1)
		if err != nil {
			return err
		}
		sc, err := change(cl, ctx, pos[0])
		if err != nil {
			return err
		}
		return c.showSchedule(sc, c.agentName(ctx, cl, sc.Target.Agent))
	}
}

// showSchedule shows a schedule, agent naming the agent it starts
// sessions of ("" for its id).
func (c *subcommand) showSchedule(s *core.Schedule, agent string) error {
	if c.json {
		return c.printJSON(s, false)
	}
	return c.keyValues([][2]string{
		{"id", s.ID},
		{"when", scheduleWhen(s)},
		{"target", scheduleTarget(s, firstOf(agent, s.Target.Agent))},
		{"input", clip(s.Target.Input)},
		{"state", scheduleState(s)},
		{"next_at", showTimePtr(s.NextAt)},
		{"last_fired_at", showTimePtr(s.LastFiredAt)},
		{"last_session", s.LastSessionID},
		{"fires", fmt.Sprint(s.Fires)},
		{"last_error", s.LastError},
		{"created_by", s.CreatedBy},
	})
}

func scheduleWhen(s *core.Schedule) string {
	if s.Cron == "" {
		return "once at " + showTimePtr(s.At)
	}
	zone := s.TimeZone
	if zone == "" {
		zone = "UTC"
	}
	return s.Cron + " (" + zone + ")"
}

// scheduleTarget says what a schedule sends to; agent is the name (or
// id) of the agent whose new sessions it starts.
func scheduleTarget(s *core.Schedule, agent string) string {
	if s.Target.SessionID != "" {
		return "session " + s.Target.SessionID
	}
	if p := s.Target.Post; p != nil {
		return "new session of " + agent + " in " + p.Provider + " channel " + p.Channel
	}
	return "new session of " + agent
}

func scheduleState(s *core.Schedule) string {
	switch {
	case s.Paused:
		return "paused"
	case s.NextAt == nil:
		return "done"
	}
	return "active"
}

func showTimePtr(t *core.Time) string {
	if t == nil {
		return ""
	}
	return showTime(*t)
}
