package harness

import (
	"context"
	"fmt"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// overBudget is the session budget the session reached, this turn
// included, or nil; or, before the turn's first model call, its
// max_turns when this turn is one past it.
func (t *turn) overBudget() *core.BudgetPause {
	if t.steps == 0 {
		if over := core.OverTurns(t.c.Limits, t.turnsBefore); over != nil {
			return over
		}
	}
	cost := core.AddCost(t.beforeCost, t.h.cost(t.c.Agent.Model, t.usage))
	return core.OverBudget(t.c.Limits, t.before.Total()+t.usage.Total(), cost)
}

// pause stops the turn before its next model call until the budget is
// raised: the turn stays open, the session awaits input, and the thread
// is told what was spent and how to raise it. A turn past max_turns
// pauses the same way, with its own reason, its input taken and kept. The pause releases the
// turn's lease, so a restart does not resume it.
func (t *turn) pause(ctx context.Context, over *core.BudgetPause, active time.Duration) (core.Reason, error) {
	body := core.StatusChangedBody{Status: core.StatusAwaitingInput, StopReason: over.Reason(),
		PendingAction: &core.PendingAction{ToolUseIDs: []string{}, Budget: over},
		Turn:          &core.TurnSoFar{Usage: t.usage, Steps: t.steps, ActiveMS: active.Milliseconds()}}
	st := core.NewEvent(core.TypeStatusChanged, core.LevelInternal, core.ActorSystem, body)
	note := core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorSystem,
		core.MessageBody{Text: BudgetNote(over), Kind: core.MessageKindBudget, Budget: over.Name})
	if _, err := t.c.Log.Append(ctx, t.c.SessionID, core.AppendRequest{Epoch: t.c.Epoch, TurnID: t.id, Events: []core.Event{note, st}}); err != nil {
		return "", fmt.Errorf("log budget pause: %w", err)
	}
	t.c.Logger.Info("turn paused by a session budget", "session_id", t.c.SessionID, "turn_id", t.id,
		"budget", over.Name, "limit", over.Limit, "spent", over.Spent)
	t.paused = true
	return over.Reason(), nil
}

// BudgetNote is what the thread is told when a session budget pauses a
// turn: what was spent, and the ways to raise it.
func BudgetNote(over *core.BudgetPause) string {
	raise := "`" + core.RaiseCommand(over, 2) + "`"
	if over.Name == core.BudgetTurns {
		return fmt.Sprintf("⏸ I paused: this session has run its limit of %s (max_turns). Your message is kept: raise the limit and I answer it. "+
			"A budget approver can reply %s here; an admin can raise it with `switchboard session limits`, the API or the console.",
			core.FormatBudget(over.Name, over.Limit), raise)
	}
	spent := core.FormatBudget(over.Name, over.Spent)
	if over.Name == core.BudgetCostUSD {
		spent = "about " + spent
	}
	return fmt.Sprintf("⏸ I paused: this session has used %s of its %s budget (%s). Nothing is lost: raise the budget and I continue where I stopped. "+
		"A budget approver can reply %s here; an admin can raise it with `switchboard session limits`, the API or the console.",
		spent, core.FormatBudget(over.Name, over.Limit), over.Name, raise)
}
