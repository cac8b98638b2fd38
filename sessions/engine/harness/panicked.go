package harness

import (
	"context"
	"errors"
	"fmt"

	"github.com/switchboardhq/switchboard/core"
)

// notFinishedOutput is the result of a tool call that was open when its
// turn ended on a panic: the call panicked, was running beside the code
// that did, or was not run yet. It is not run again; what it did, if it
// ran, stands.
const notFinishedOutput = "not finished: the turn ended with an internal error; this call was not run again and its effects, if it ran, are unknown"

// panicEvents are what a turn that panicked logs before its
// turn.completed: a result for each of its calls still open, since the
// turn will run none of them, and the retryable session.error a person
// sees (the panic itself is in the gateway's log, with its stack).
func panicEvents(events []core.Event, turnID string) ([]core.Event, error) {
	calls, err := openCalls(turnEvents(events, turnID))
	if err != nil {
		return nil, err
	}
	var evs []core.Event
	for _, c := range calls {
		evs = append(evs, core.NewEvent(core.TypeAgentToolResult, core.LevelProgress, core.ActorSystem,
			core.ToolResultBody{ToolUseID: c.id, Output: notFinishedOutput, IsError: true}))
	}
	return append(evs, core.NewEvent(core.TypeError, core.LevelUser, core.ActorSystem,
		core.ErrorBody{Message: core.ErrPanicked.Error(), Retryable: true})), nil
}

// failPanicked ends the turn after one of its tool calls panicked.
func (t *turn) failPanicked(ctx context.Context) (core.Reason, error) {
	events, err := t.c.Log.Events(ctx, t.c.SessionID, 0, 0)
	if err != nil {
		return "", fmt.Errorf("read log: %w", err)
	}
	evs, err := panicEvents(events, t.id)
	if err != nil {
		return "", err
	}
	if _, err := t.c.Log.Append(ctx, t.c.SessionID, core.AppendRequest{Epoch: t.c.Epoch, TurnID: t.id, Events: evs}); err != nil {
		return "", fmt.Errorf("log error: %w", err)
	}
	return t.finish(ctx, core.ReasonError)
}

// EndPanicked ends the session's turn after a panic stopped its cycle
// (any runtime's): the open turn, or, when none is open, a turn that
// takes the inputs that were pending, so that whoever sent them hears.
// The turn ends as one whose tool call panicked does: its open calls
// closed, a retryable session.error "internal error", reason error and
// status failed, which a user.retry runs again. Its usage so far is not
// known here and not counted. ended is false when there was nothing to
// end: the session is archived or gone, or nothing is open or pending.
func EndPanicked(ctx context.Context, c *Cycle) (ended bool, err error) {
	s, err := c.Log.GetSession(ctx, c.SessionID)
	if errors.Is(err, core.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if s.Status == core.StatusArchived {
		return false, nil
	}
	turnID := s.TurnID
	for again := turnID == ""; again; {
		if turnID, again, err = OpenTurn(ctx, c); err != nil {
			return false, err
		}
	}
	if turnID == "" {
		return false, nil
	}
	events, err := c.Log.Events(ctx, c.SessionID, 0, 0)
	if err != nil {
		return false, fmt.Errorf("read log: %w", err)
	}
	evs, err := panicEvents(events, turnID)
	if err != nil {
		return false, err
	}
	evs = append(evs,
		core.NewEvent(core.TypeTurnCompleted, core.LevelInternal, core.ActorSystem, core.TurnCompletedBody{YieldReason: core.ReasonError}),
		StatusEvent(core.StatusAfter(core.ReasonError), core.ReasonError))
	if _, err := c.Log.Append(ctx, c.SessionID, core.AppendRequest{Epoch: c.Epoch, TurnID: turnID, Events: evs}); err != nil {
		return false, fmt.Errorf("end the turn that panicked: %w", err)
	}
	return true, nil
}

// Resetter is a harness that keeps state of a session beyond its log
// (an ACP agent's process): Reset drops it once a panic ended the
// session's cycle, so the next turn starts clean.
type Resetter interface {
	Reset(ctx context.Context, sessionID string)
}
