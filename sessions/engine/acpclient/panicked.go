package acpclient

import (
	"context"
	"errors"

	acp "github.com/coder/acp-go-sdk"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboardhq/switchboard/core"
)

// A panic in the gateway's side of an ACP turn (a request of the agent's
// to its client, a platform tool it calls over MCP, the prompt's call)
// is recovered where it happens, on the connection's goroutine, and
// logged once with its stack there. The agent is answered an internal
// error, and the turn is told (fault): it ends as a built-in turn whose
// tool panicked does, with a retryable internal error, and its agent
// process goes, since what the agent was told is unknown.

// fault tells the turn that a panic happened in its work.
func (t *turn) fault() {
	select {
	case t.panicked <- struct{}{}:
	default:
	}
}

// faulted reports whether a fault is waiting: one told before the
// agent's answer (it was answered an error first) wins over the answer.
func (t *turn) faulted() bool {
	select {
	case <-t.panicked:
		return true
	default:
		return false
	}
}

// failPanicked ends the turn after a fault.
func (t *turn) failPanicked(ctx context.Context) (core.Reason, error) {
	t.h.end(ctx, t.c.SessionID)
	t.rec.end("the turn ended with an internal error", core.LevelUser)
	if err := t.rec.failed(); err != nil {
		return "", err
	}
	if err := t.logError(ctx, core.ErrorBody{Message: core.ErrPanicked.Error(), Retryable: true}); err != nil {
		return "", err
	}
	return t.finish(ctx, core.ReasonError)
}

// recovered, deferred before core.Recover in each request of the agent's
// to the client, answers a panic there with an internal error and faults
// the running turn.
func (c *client) recovered(err *error) {
	if !errors.Is(*err, core.ErrPanicked) {
		return
	}
	if t, _ := c.current(); t != nil {
		t.fault()
	}
	*err = acp.NewInternalError(map[string]any{"error": core.ErrPanicked.Error()})
}

// recoveredTool, deferred before core.Recover in a platform tool's call
// over MCP, answers a panic there with an error result and faults the
// session's running turn.
func (h *Harness) recoveredTool(sessionID string, res **mcp.CallToolResult, err *error) {
	if !errors.Is(*err, core.ErrPanicked) {
		return
	}
	if t := h.running(sessionID); t != nil {
		t.fault()
	}
	*res, *err = mcp.NewToolResultError("error: "+core.ErrPanicked.Error()), nil
}

// Reset ends the session's agent process: a panic ended the session's
// cycle, and what the process was told is unknown (harness.Resetter).
func (h *Harness) Reset(ctx context.Context, sessionID string) { h.end(ctx, sessionID) }
