package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

// sessionGroup is the session command.
var sessionGroup = group{name: "session", summary: "drive sessions over the API", subs: []sub{
	{"create", "", "create a session, started at once with --input", sessionCreate},
	{"list", "", "list sessions", sessionList},
	{"send", "ID TEXT", "send a message (TEXT - reads stdin)", sessionSend},
	{"status", "ID", "show a session", sessionStatus},
	{"events", "ID", "print a session's events, or stream them with --follow", sessionEvents},
	{"wake", "ID", "run a session's pending inputs", sessionAction("wake")},
	{"interrupt", "ID", "stop a session's running turn", sessionAction("interrupt")},
	{"archive", "ID", "archive a session", sessionAction("archive")},
	{"result", "ID", "print the last finished turn's answer (exit 1 when it failed)", sessionResult},
	{"limits", "ID", "set a session's own limits; raising a reached budget resumes its turn", sessionLimits},
	{"fork", "ID", "make a new session with a session's log up to the end of a turn", sessionFork},
	{"confirm", "ID TOOL_USE_ID", "allow a tool call that waits for confirmation", sessionConfirm("allow")},
	{"deny", "ID TOOL_USE_ID", "deny a tool call that waits for confirmation", sessionConfirm("deny")},
	{"tool-result", "ID TOOL_USE_ID OUTPUT", "answer a custom tool call (OUTPUT - reads stdin)", sessionToolResult},
	{"retry", "ID", "run a failed or stopped turn again", sessionRetry},
	{"attach-token", "create|list|revoke SESSION", "let a person open a session in their editor, with a token naming them", attachTokens},
}}

func sessionCreate(ctx context.Context, c *subcommand, args []string) error {
	var p client.SessionParams
	var input string
	meta := kvFlag{}
	c.fs.StringVar(&p.Agent, "agent", "default", "agent id or `NAME`")
	c.fs.IntVar(&p.AgentVersion, "agent-version", 0, "pin this agent `VERSION` (default: the latest)")
	c.fs.StringVar(&input, "input", "", "the first user `MESSAGE`; the session starts at once ('-' reads stdin)")
	c.fs.Var(meta, "metadata", "`KEY=value` metadata (repeatable)")
	c.fs.StringVar(&p.Tenant, "tenant", "", "the `TENANT` whose memory the session reads and writes (default api)")
	c.fs.StringVar(&p.IdempotencyKey, "idempotency-key", "", "a retry with the same `KEY` returns the first answer")
	var budget core.Limits
	c.fs.Int64Var(&budget.MaxSessionTokens, "max-session-tokens", 0, "pause the session's turn once it has used this many tokens in all")
	c.fs.Float64Var(&budget.MaxSessionCostUSD, "max-session-cost-usd", 0, "pause the session's turn once its estimated cost reaches this many US dollars")
	c.fs.IntVar(&budget.MaxTurns, "max-turns", 0, "the turns the session may run, retries included; the next input waits until it is raised")
	if _, err := c.parse(args, 0); err != nil {
		return err
	}
	if budget != (core.Limits{}) {
		p.Limits = &budget
	}
	if p.Agent == "" {
		return &usageError{cmd: c, msg: "session create: --agent is empty: give an agent id or name (default: the agent named default)"}
	}
	if c.given("input") {
		text, err := c.readText(input)
		if err != nil {
			return err
		}
		p.Input = &text
	}
	if len(meta) > 0 {
		p.Metadata = meta
	}
	cl, err := c.client()
	if err != nil {
		return err
	}
	s, err := cl.CreateSession(ctx, p)
	if err != nil {
		return orClosest(ctx, err, "agent", p.Agent, cl.ListAgents, func(a core.Agent) (string, string) { return a.ID, a.Name })
	}
	return c.showCreated(s, c.agentName(ctx, cl, s.Agent.ID))
}

// showCreated shows a session just made (created or forked), with the
// client token its answer holds once, and its agent's name.
func (c *subcommand) showCreated(s *client.CreatedSession, agent string) error {
	if c.json {
		return c.printJSON(s, false)
	}
	rows := [][2]string{
		{"id", s.ID},
		{"status", string(s.Status)},
		{"agent", showAgentRef(s.Agent, agent)},
		{"metadata", showMap(s.Metadata)},
		{"tenant", s.Tenant},
		{"created_at", showTime(s.CreatedAt)},
	}
	if f := s.ForkedFrom; f != nil {
		rows = append(rows, [2]string{"forked_from", fmt.Sprintf("%s at seq %d", f.Session, f.Seq)})
	}
	return c.keyValues(append(rows, [2]string{"client_token", s.ClientToken + "  (shown once)"}))
}

func sessionList(ctx context.Context, c *subcommand, args []string) error {
	var f client.SessionFilter
	c.fs.StringVar(&f.Status, "status", "", "only this `STATUS`: queued, running, awaiting_input, idle, failed or archived")
	c.fs.StringVar(&f.Agent, "agent", "", "only sessions of this agent (id or `NAME`)")
	c.fs.StringVar(&f.OriginKey, "origin-key", "", "only the session of this origin `KEY`, <provider>:<the platform's address of the thread>")
	c.fs.StringVar(&f.Provider, "provider", "", "only sessions of this `PROVIDER`: a platform's name, or api for sessions created over the API")
	c.fs.StringVar(&f.Tenant, "tenant", "", "only sessions of this `TENANT`, <provider>:<workspace, organization or repository>")
	c.fs.StringVar(&f.Text, "text", "", "only sessions whose first message holds this `TEXT`, ignoring case")
	c.fs.StringVar(&f.After, "after", "", "list sessions after this `ID`")
	c.fs.IntVar(&f.Limit, "limit", 0, "at most `N` (default 100, at most 1000)")
	_, cl, err := c.start(args, 0)
	if err != nil {
		return err
	}
	if f.Agent, err = resolveAgent(ctx, cl, f.Agent); err != nil {
		return err
	}
	page, err := cl.ListSessions(ctx, f)
	if err != nil {
		return err
	}
	if c.json {
		return c.printJSON(page, false)
	}
	names, err := listAgentNames(ctx, cl, len(page.Data) > 0)
	if err != nil {
		return err
	}
	rows := [][]string{{"ID", "STATUS", "STOP_REASON", "AGENT", "ORIGIN", "FIRST_MESSAGE", "LAST_SEQ", "UPDATED"}}
	for _, s := range page.Data {
		reason := string(s.StopReason)
		rows = append(rows, []string{s.ID, string(s.Status), dash(reason), fmt.Sprintf("%s@%d", names.of(s.Agent.ID), s.Agent.Version),
			listedOrigin(s.Origin), dash(core.Clip(s.FirstMessage, listColumn)), fmt.Sprint(s.LastSeq), showTime(s.UpdatedAt)})
	}
	if err := c.table(rows); err != nil {
		return err
	}
	if page.Capped {
		fmt.Fprintln(c.env.stderr, "the search stopped at the sessions one page may read; go on with --after")
	}
	if page.HasMore {
		next := page.Next
		if next == "" && len(page.Data) > 0 {
			next = page.Data[len(page.Data)-1].ID // a server of an earlier release
		}
		fmt.Fprintf(c.env.stderr, "more: --after %s\n", next)
	}
	return nil
}

// listColumn is how many characters of free text a list's column shows.
const listColumn = 40

// listedOrigin is a session's origin as a list shows it: the thread's
// title where the platform names it, else its key; api without one.
func listedOrigin(o *core.Origin) string {
	switch {
	case o == nil:
		return "api"
	case o.Title != "":
		return core.Clip(o.Title, listColumn)
	}
	return o.Key
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func sessionSend(ctx context.Context, c *subcommand, args []string) error {
	var key string
	c.fs.StringVar(&key, "idempotency-key", "", "a retry with the same `KEY` queues the message once")
	pos, err := c.parse(args, 2)
	if err != nil {
		return err
	}
	text, err := c.readText(pos[1])
	if err != nil {
		return err
	}
	if strings.TrimSpace(text) == "" {
		return &usageError{cmd: c, msg: "session send: the message is empty"}
	}
	cl, err := c.client()
	if err != nil {
		return err
	}
	q, err := cl.SendMessage(ctx, pos[0], text, key)
	if err != nil {
		return err
	}
	return c.showQueued(pos[0], q)
}

func (c *subcommand) showQueued(id string, q *client.QueuedInput) error {
	if c.json {
		return c.printJSON(web.Page[client.QueuedInput]{Data: []client.QueuedInput{*q}}, false)
	}
	return c.write(fmt.Sprintf("queued %s %s for %s\n", q.Type, q.ID, id))
}

func sessionStatus(ctx context.Context, c *subcommand, args []string) error {
	pos, cl, err := c.start(args, 1)
	if err != nil {
		return err
	}
	s, err := cl.GetSession(ctx, pos[0])
	if err != nil {
		return err
	}
	return c.showSession(s, c.agentName(ctx, cl, s.Agent.ID))
}

// sessionResult prints the last finished turn's answer: its text, or with
// --json the session's result. A session whose last turn failed (reason
// error) exits 1 after printing it, so a script can tell; one with no
// finished turn exits 1 too.
func sessionResult(ctx context.Context, c *subcommand, args []string) error {
	pos, cl, err := c.start(args, 1)
	if err != nil {
		return err
	}
	s, err := cl.GetSession(ctx, pos[0])
	if err != nil {
		return err
	}
	r := s.Result
	if r == nil {
		return fmt.Errorf("session %s has no finished turn yet (status %s)", s.ID, s.Status)
	}
	if c.json {
		err = c.printJSON(r, false)
	} else {
		err = c.write(strings.TrimRight(r.Text, "\n") + "\n")
	}
	if err != nil {
		return err
	}
	if r.YieldReason == core.ReasonError {
		return fmt.Errorf("the last turn (%s) failed", r.TurnID)
	}
	return nil
}

// sessionFork makes a new session with a session's log up to the end of
// a turn.
func sessionFork(ctx context.Context, c *subcommand, args []string) error {
	var at uint64
	c.fs.Uint64Var(&at, "at-seq", 0, "the `SEQ` of a turn's turn.completed (or its status change); default: the end of the last completed turn")
	pos, cl, err := c.start(args, 1)
	if err != nil {
		return err
	}
	s, err := cl.ForkSession(ctx, pos[0], at)
	if err != nil {
		return err
	}
	return c.showCreated(s, c.agentName(ctx, cl, s.Agent.ID))
}

// sessionLimits sets a session's own limits; raising the budget (or the
// max_turns) that paused its turn resumes the turn.
func sessionLimits(ctx context.Context, c *subcommand, args []string) error {
	var l core.Limits
	c.fs.Int64Var(&l.MaxSessionTokens, "max-session-tokens", 0, "the session's token budget, across its turns")
	c.fs.Float64Var(&l.MaxSessionCostUSD, "max-session-cost-usd", 0, "the session's budget of estimated cost, in US dollars")
	c.fs.IntVar(&l.MaxTurns, "max-turns", 0, "turns the session may run, retries included")
	c.fs.IntVar(&l.MaxSteps, "max-steps", 0, "model calls per turn")
	c.fs.Int64Var(&l.MaxTokens, "max-tokens", 0, "tokens per turn")
	c.fs.IntVar(&l.TurnSeconds, "turn-seconds", 0, "seconds per turn")
	pos, cl, err := c.start(args, 1)
	if err != nil {
		return err
	}
	if l == (core.Limits{}) {
		return &usageError{cmd: c, msg: "session limits: give at least one limit to set"}
	}
	s, err := cl.SetLimits(ctx, pos[0], l)
	if err != nil {
		return err
	}
	return c.showSession(s, c.agentName(ctx, cl, s.Agent.ID))
}

// sessionLimitsText shows a session's own limits over its agent's.
func sessionLimitsText(l *core.Limits) string {
	if l == nil {
		return "the agent's"
	}
	return showLimits(*l) + " (over the agent's)"
}

// showSession shows a session, agent naming its agent.
func (c *subcommand) showSession(s *client.SessionView, agent string) error {
	if c.json {
		return c.printJSON(s, false)
	}
	reason, pending, origin := string(s.StopReason), "", "api"
	switch pa := s.PendingAction; {
	case pa != nil && pa.Budget != nil:
		pending = fmt.Sprintf("budget %s: spent %s of %s (raise it with session limits)", pa.Budget.Name,
			core.FormatBudget(pa.Budget.Name, pa.Budget.Spent), core.FormatBudget(pa.Budget.Name, pa.Budget.Limit))
	case pa != nil:
		pending = "tool calls " + strings.Join(pa.ToolUseIDs, ", ")
	}
	if s.Origin != nil {
		origin = showOrigin(s.Origin)
	}
	return c.keyValues([][2]string{
		{"id", s.ID},
		{"status", string(s.Status)},
		{"stop_reason", reason},
		{"pending_action", pending},
		{"agent", showAgentRef(s.Agent, agent)},
		{"origin", origin},
		{"environment", s.Environment},
		{"tenant", s.Tenant},
		{"metadata", showMap(s.Metadata)},
		{"limits", sessionLimitsText(s.Limits)},
		{"usage", showUsage(s.Usage)},
		{"cost_usd", showCost(s.CostUSD)},
		{"turns", fmt.Sprint(s.Turns)},
		{"result", showResult(s.Result)},
		{"last_seq", fmt.Sprint(s.LastSeq)},
		{"created_at", showTime(s.CreatedAt)},
		{"updated_at", showTime(s.UpdatedAt)},
	})
}

func sessionEvents(ctx context.Context, c *subcommand, args []string) error {
	var follow bool
	var level string
	var after uint64
	var limit int
	c.fs.BoolVar(&follow, "follow", false, "stream: the history, then live events until interrupted")
	c.fs.StringVar(&level, "level", "", "`LEVEL`: user, progress or internal (default: all)")
	c.fs.Uint64Var(&after, "after", 0, "start after this `SEQ`")
	c.fs.IntVar(&limit, "limit", 0, "without --follow: at most `N` (default: all)")
	pos, cl, err := c.start(args, 1)
	if err != nil {
		return err
	}
	id := pos[0]
	if follow {
		err := cl.Follow(ctx, id, after, level, func(e core.Event) error {
			if c.json {
				return c.printJSON(e, true)
			}
			return c.write(formatEvent(e))
		})
		if errors.Is(err, context.Canceled) {
			return nil // interrupted: the normal end of following
		}
		return err
	}
	return c.listEvents(ctx, cl, id, client.EventsQuery{After: after, Limit: limit, Level: level})
}

// listEvents prints the log after q.After: one page with --limit, else
// every page.
func (c *subcommand) listEvents(ctx context.Context, cl *client.Client, id string, q client.EventsQuery) error {
	all := web.Page[core.Event]{Data: []core.Event{}}
	for {
		page, err := cl.Events(ctx, id, q)
		if err != nil {
			return err
		}
		all.Data = append(all.Data, page.Data...)
		all.HasMore = page.HasMore
		if !page.HasMore || q.Limit > 0 || len(page.Data) == 0 {
			break
		}
		q.After = page.Data[len(page.Data)-1].Seq
	}
	if c.json {
		return c.printJSON(all, false)
	}
	var b strings.Builder
	for _, e := range all.Data {
		b.WriteString(formatEvent(e))
	}
	if err := c.write(b.String()); err != nil {
		return err
	}
	if all.HasMore && len(all.Data) > 0 {
		fmt.Fprintf(c.env.stderr, "more: --after %d\n", all.Data[len(all.Data)-1].Seq)
	}
	return nil
}

// sessionAction is wake, interrupt and archive: one call on one session.
func sessionAction(action string) func(context.Context, *subcommand, []string) error {
	return func(ctx context.Context, c *subcommand, args []string) error {
		pos, cl, err := c.start(args, 1)
		if err != nil {
			return err
		}
		id := pos[0]
		switch action {
		case "interrupt":
			q, err := cl.Interrupt(ctx, id)
			if err != nil {
				return err
			}
			return c.showQueued(id, q)
		case "wake":
			s, err := cl.Wake(ctx, id)
			if err != nil {
				return err
			}
			if c.json {
				return c.printJSON(s, false)
			}
			return c.write(fmt.Sprintf("woke %s (status: %s)\n", s.ID, s.Status))
		}
		s, err := cl.Archive(ctx, id)
		if err != nil {
			return err
		}
		if c.json {
			return c.printJSON(s, false)
		}
		return c.write(fmt.Sprintf("archived %s\n", s.ID))
	}
}

// showUsage reads a usage as a person would say it, cached tokens only
// when there were some.
func showUsage(u core.Usage) string {
	out := fmt.Sprintf("%d input tokens, %d output tokens", u.InputTokens, u.OutputTokens)
	if u.CacheReadInputTokens > 0 || u.CacheCreationInputTokens > 0 {
		out += fmt.Sprintf(", %d read from the prompt cache, %d written to it", u.CacheReadInputTokens, u.CacheCreationInputTokens)
	}
	return out
}

// showCost is an estimated cost in dollars, or says there is no price.
func showCost(usd *float64) string {
	if usd == nil {
		return "none: no turn of a priced model yet"
	}
	return fmt.Sprintf("$%.4f (estimate)", *usd)
}

// showResult is a result's reason and the start of its text.
func showResult(r *core.TurnResult) string {
	if r == nil {
		return ""
	}
	return fmt.Sprintf("%s: %s", r.YieldReason, clip(r.Text))
}
