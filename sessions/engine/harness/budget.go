package harness

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// overBudget is the session budget the session reached, this turn
// included, or nil.
func (t *turn) overBudget() *core.BudgetPause {
	cost := core.AddCost(t.beforeCost, t.h.cost(t.c.Agent.Model, t.usage))
	return core.OverBudget(t.c.Limits, t.before.Total()+t.usage.Total(), cost)
}

// pause stops the turn before its next model call until the budget is
// raised: the turn stays open, the session awaits input, and the thread
// is told what was spent and how to raise it. The pause releases the
// turn's lease, so a restart does not resume it.
func (t *turn) pause(ctx context.Context, over *core.BudgetPause, active time.Duration) (core.Reason, error) {
	body := core.StatusChangedBody{Status: core.StatusAwaitingInput, StopReason: core.ReasonBudgetExceeded,
		PendingAction: &core.PendingAction{ToolUseIDs: []string{}, Budget: over},
		Turn:          &core.TurnSoFar{Usage: t.usage, Steps: t.steps, ActiveMS: active.Milliseconds()}}
	st := core.NewEvent(core.TypeStatusChanged, core.LevelInternal, core.ActorSystem, body)
	note := core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorSystem,
		core.MessageBody{Text: BudgetNote(over), Kind: core.MessageKindBudget})
	if _, err := t.c.Log.Append(ctx, t.c.SessionID, core.AppendRequest{Epoch: t.c.Epoch, TurnID: t.id, Events: []core.Event{note, st}}); err != nil {
		return "", fmt.Errorf("log budget pause: %w", err)
	}
	t.c.Logger.Info("turn paused by a session budget", "session_id", t.c.SessionID, "turn_id", t.id,
		"budget", over.Name, "limit", over.Limit, "spent", over.Spent)
	t.paused = true
	return core.ReasonBudgetExceeded, nil
}

// BudgetNote is what the thread is told when a session budget pauses a
// turn: what was spent, and the ways to raise it.
func BudgetNote(over *core.BudgetPause) string {
	raise := "`budget " + strconv.FormatInt(int64(over.Limit)*2, 10) + " tokens`"
	spent := core.FormatBudget(over.Name, over.Spent)
	if over.Name == core.BudgetCostUSD {
		raise = "`budget $" + strconv.FormatFloat(over.Limit*2, 'f', 2, 64) + "`"
		spent = "about " + spent
	}
	return fmt.Sprintf("⏸ I paused: this session has used %s of its %s budget (%s). Nothing is lost: raise the budget and I continue where I stopped. "+
		"A budget approver can reply %s here; an admin can raise it with `switchboard session limits`, the API or the console.",
		spent, core.FormatBudget(over.Name, over.Limit), over.Name, raise)
}
