package cli

import (
	"context"
	"strings"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

// The session inputs besides a message: the answer to a tool call that
// waits for a person, a custom tool's result, a retry.

func sessionConfirm(result string) func(context.Context, *subcommand, []string) error {
	return func(ctx context.Context, c *subcommand, args []string) error {
		var msg string
		c.fs.StringVar(&msg, "message", "", "a `NOTE` for the model with the answer")
		pos, cl, err := c.start(args, 2)
		if err != nil {
			return err
		}
		return c.sendInput(ctx, cl, pos[0], client.Input{Type: core.TypeUserToolConfirmation, ToolUseID: pos[1], Result: result, Message: msg})
	}
}

func sessionToolResult(ctx context.Context, c *subcommand, args []string) error {
	var isError bool
	c.fs.BoolVar(&isError, "error", false, "the tool failed: OUTPUT is its error")
	pos, err := c.parse(args, 3)
	if err != nil {
		return err
	}
	out, err := c.readText(pos[2])
	if err != nil {
		return err
	}
	cl, err := c.client()
	if err != nil {
		return err
	}
	return c.sendInput(ctx, cl, pos[0], client.Input{Type: core.TypeUserCustomToolResult, ToolUseID: pos[1], Output: &out, IsError: isError})
}

func sessionRetry(ctx context.Context, c *subcommand, args []string) error {
	var turn string
	c.fs.StringVar(&turn, "turn", "", "the `TURN_ID` to run again (default: the last)")
	pos, cl, err := c.start(args, 1)
	if err != nil {
		return err
	}
	return c.sendInput(ctx, cl, pos[0], client.Input{Type: core.TypeUserRetry, TurnID: turn})
}

// sendInput queues one input and shows it queued.
func (c *subcommand) sendInput(ctx context.Context, cl *client.Client, id string, in client.Input) error {
	q, err := cl.SendEvents(ctx, id, []client.Input{in}, "")
	if err != nil {
		return err
	}
	if len(q) != 1 {
		return c.showQueuedAll(id, q)
	}
	return c.showQueued(id, &q[0])
}

func (c *subcommand) showQueuedAll(id string, q []client.QueuedInput) error {
	if c.json {
		return c.printJSON(web.Page[client.QueuedInput]{Data: q}, false)
	}
	var b strings.Builder
	for _, in := range q {
		b.WriteString("queued " + in.Type + " " + in.ID + " for " + id + "\n")
	}
	return c.write(b.String())
}
