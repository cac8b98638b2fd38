package acpclient

import (
	"context"
	"fmt"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/engine/harness"
)

// Metered is told the usage of a model response the egress proxy relayed
// for the session's sandbox, with the agent's key injected: it counts to
// the running turn, whose limits and the session's budgets it checks.
func (h *Harness) Metered(sessionID, model string, u core.Usage) {
	t := h.running(sessionID)
	if t == nil {
		// A call made between turns (by a process the agent left running):
		// counted nowhere, and said so.
		h.logger().Warn("model usage outside an ACP turn is not counted", "session_id", sessionID, "model", model,
			"input_tokens", u.InputTokens, "output_tokens", u.OutputTokens)
		return
	}
	t.meter(u)
}

// running is the session's turn whose prompt is in flight here, or nil.
func (h *Harness) running(sessionID string) *turn {
	h.mu.Lock()
	ap := h.agents[sessionID]
	h.mu.Unlock()
	if ap == nil {
		return nil
	}
	t, _ := ap.client.current()
	return t
}

// meter adds usage the proxy read to the turn and stops the turn at its
// max_tokens, or pauses it at a session budget.
func (t *turn) meter(u core.Usage) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.usage = t.usage.Add(u)
	t.metered = true
	var l limitHit
	switch {
	case t.usage.Total() >= t.c.Limits.MaxTokens:
		l.reason = core.ReasonBudgetExceeded
	default:
		if over := core.OverBudget(t.c.Limits, t.before.Total()+t.usage.Total(), core.AddCost(t.beforeCost, t.cost())); over != nil {
			l.reason, l.pause = core.ReasonBudgetExceeded, over
		}
	}
	if l.reason == "" {
		return
	}
	select {
	case t.limits <- l:
	default: // one is enough
	}
}

// limitHit is a limit the metered usage reached: the turn's (reason) or a
// session budget (pause).
type limitHit struct {
	reason core.Reason
	pause  *core.BudgetPause
}

// cost is the turn's estimated cost so far; t.mu is held.
func (t *turn) cost() *float64 {
	if t.h.Prices == nil || t.c.Agent.Model == "" {
		return nil
	}
	usd, ok := t.h.Prices.Cost(t.c.Agent.Model, t.usage)
	if !ok {
		return nil
	}
	return &usd
}

// pauseTurn leaves the turn open, waiting for its budget to be raised: the
// thread is told, the session awaits input with the budget pending, and
// the raise resumes the turn with a prompt that says so.
func (t *turn) pauseTurn(ctx context.Context, over *core.BudgetPause, active time.Duration) error {
	t.mu.Lock()
	so := core.TurnSoFar{Usage: t.usage, ActiveMS: active.Milliseconds()}
	t.mu.Unlock()
	body := core.StatusChangedBody{Status: core.StatusAwaitingInput, StopReason: over.Reason(),
		PendingAction: &core.PendingAction{ToolUseIDs: []string{}, Budget: over}, Turn: &so}
	note := core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorSystem, core.MessageBody{Text: harness.BudgetNote(over), Kind: core.MessageKindBudget, Budget: over.Name})
	if _, err := t.c.Log.Append(ctx, t.c.SessionID, core.AppendRequest{Epoch: t.c.Epoch, TurnID: t.id, Events: []core.Event{
		note, core.NewEvent(core.TypeStatusChanged, core.LevelInternal, core.ActorSystem, body),
	}}); err != nil {
		return fmt.Errorf("log budget pause: %w", err)
	}
	t.c.Logger.Info("ACP turn paused by a session budget", "session_id", t.c.SessionID, "turn_id", t.id, "budget", over.Name, "limit", over.Limit, "spent", over.Spent)
	t.paused = true
	return nil
}

// start prompts the turn just opened with its inputs, or, when the
// session has run its max_turns, pauses it first: the inputs stay taken
// into it, and the raise prompts them (resume).
func (t *turn) start(ctx context.Context, s *core.Session) (core.Reason, error) {
	if over := core.OverTurns(t.c.Limits, s.Turns); over != nil {
		return "", t.pauseTurn(context.WithoutCancel(ctx), over, 0)
	}
	return t.run(ctx, "")
}

// stillOver is the limit that still holds a turn paused for why, under
// the limits it resumes with, or nil: max_turns for a turn paused before
// its prompt, then the session budgets, as the built-in loop checks them
// before its next model call.
func (t *turn) stillOver(s *core.Session, why core.Reason) *core.BudgetPause {
	if why == core.ReasonMaxTurns {
		if over := core.OverTurns(t.c.Limits, s.Turns); over != nil {
			return over
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return core.OverBudget(t.c.Limits, t.before.Total()+t.usage.Total(), core.AddCost(t.beforeCost, t.cost()))
}

// budgetRaisedNote opens the prompt of a turn resumed after its budget
// was raised.
const budgetRaisedNote = "[Your previous request was paused when the session reached its budget; the budget has been raised. Carry on from where you stopped.]"
