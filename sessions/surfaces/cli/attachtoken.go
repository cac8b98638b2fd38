package cli

import (
	"context"

	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

// attachTokenGroup is session attach-token: the tokens that let one
// person read and steer one session from their editor.
var attachTokenGroup = group{name: "session attach-token", summary: "let a person open a session in their editor (switchboard acp) with a revocable token naming them", subs: []sub{
	{"create", "SESSION", "make a token for --person; it is shown once, with the command line for their editor", attachTokenCreate},
	{"list", "SESSION", "list the session's tokens (never their secrets)", attachTokenList},
	{"revoke", "SESSION TOKEN_ID", "revoke a token: its requests are refused and its streams end", attachTokenRevoke},
}}

func attachTokens(ctx context.Context, c *subcommand, args []string) error {
	return attachTokenGroup.dispatch(ctx, c.env, args)
}

func attachTokenCreate(ctx context.Context, c *subcommand, args []string) error {
	var p client.AttachTokenParams
	c.fs.StringVar(&p.Person, "person", "", "the `NAME` of the person the token is for (shown in the thread when they write from their editor)")
	c.fs.StringVar(&p.PersonID, "person-id", "", "the person's `ID` where one is known (optional)")
	pos, err := c.parse(args, 1)
	if err != nil {
		return err
	}
	if p.Person == "" {
		return &usageError{cmd: c, msg: c.name + ": --person is required: the name of the person the token is for"}
	}
	cl, err := c.client()
	if err != nil {
		return err
	}
	t, err := cl.CreateAttachToken(ctx, pos[0], p)
	if err != nil {
		return err
	}
	if c.json {
		return c.printJSON(t, false)
	}
	return c.keyValues([][2]string{
		{"id", t.ID},
		{"session", t.SessionID},
		{"person", t.Person},
		{"created_at", showTime(t.CreatedAt)},
		{"token", t.Token + "  (shown once)"},
		{"editor", client.AttachCommand(c.baseURL(), t.Token)},
	})
}

func attachTokenList(ctx context.Context, c *subcommand, args []string) error {
	pos, cl, err := c.start(args, 1)
	if err != nil {
		return err
	}
	list, err := cl.ListAttachTokens(ctx, pos[0])
	if err != nil {
		return err
	}
	if c.json {
		return c.printJSON(dataOf(list), false)
	}
	rows := [][]string{{"ID", "PERSON", "ISSUED_BY", "CREATED_AT", "LAST_USED_AT", "REVOKED_AT"}}
	for _, t := range list {
		rows = append(rows, []string{t.ID, t.Person, t.IssuedBy, showTime(t.CreatedAt), dash(showTimePtr(t.LastUsedAt)), dash(showTimePtr(t.RevokedAt))})
	}
	return c.table(rows)
}

func attachTokenRevoke(ctx context.Context, c *subcommand, args []string) error {
	pos, cl, err := c.start(args, 2)
	if err != nil {
		return err
	}
	t, err := cl.RevokeAttachToken(ctx, pos[0], pos[1])
	if err != nil {
		return err
	}
	if c.json {
		return c.printJSON(t, false)
	}
	return c.keyValues([][2]string{{"id", t.ID}, {"person", t.Person}, {"revoked_at", showTimePtr(t.RevokedAt)}})
}
