package cli

import (
	"context"

	"github.com/switchboardhq/switchboard/core/command"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

// Link is the link command: the other origin keys that route to a
// session, one session across Slack, GitHub and Linear.
func Link(d Defaults) command.Command { return linkGroup.command(d) }

var linkGroup = group{name: "link", summary: "route other threads (origin keys) to a session", subs: []sub{
	{"add", "SESSION KEY", "route the origin key KEY to the session", linkChange((*client.Client).AddLink)},
	{"remove", "SESSION KEY", "stop routing KEY to the session", linkChange((*client.Client).RemoveLink)},
	{"list", "SESSION", "list the keys that route to the session", linkList},
}}

func linkChange(change func(*client.Client, context.Context, string, string) (*client.SessionView, error)) func(context.Context, *subcommand, []string) error {
	return func(ctx context.Context, c *subcommand, args []string) error {
		pos, cl, err := c.start(args, 2)
		if err != nil {
			return err
		}
		s, err := change(cl, ctx, pos[0], pos[1])
		if err != nil {
			return err
		}
		return c.showLinks(s)
	}
}

func linkList(ctx context.Context, c *subcommand, args []string) error {
	pos, cl, err := c.start(args, 1)
	if err != nil {
		return err
	}
	s, err := cl.GetSession(ctx, pos[0])
	if err != nil {
		return err
	}
	return c.showLinks(s)
}

// showLinks prints a session's links; --json prints them as a list.
func (c *subcommand) showLinks(s *client.SessionView) error {
	if c.json {
		return c.printJSON(dataOf(s.Links), false)
	}
	rows := [][]string{{"KEY", "ADDED_BY", "ADDED_AT", "URL"}}
	for _, l := range s.Links {
		rows = append(rows, []string{l.Key, l.AddedBy, showTime(l.AddedAt), dash(l.URL)})
	}
	return c.table(rows)
}
