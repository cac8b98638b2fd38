package harness

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// Default is the built-in loop: the harness of agents whose runtime is
// core.RuntimeBuiltin.
type Default struct {
	Observer Observer
	// Prices estimates each turn's cost (turn.completed cost_usd); nil
	// prices nothing.
	Prices Pricer
	// TextEvery is how often a response's text is logged while it
	// streams (agent.message_delta); 0 logs none.
	TextEvery time.Duration
}

// Pricer is the price table, as the harness uses it.
type Pricer interface {
	// Cost is the estimated cost in US dollars of u on model; ok is false
	// when the model has no price.
	Cost(model string, u core.Usage) (usd float64, ok bool)
}

// cost is the turn.completed cost_usd of u on model: nil when unpriced.
func (h *Default) cost(model string, u core.Usage) *float64 {
	if h.Prices == nil {
		return nil
	}
	usd, ok := h.Prices.Cost(model, u)
	if !ok {
		return nil
	}
	return &usd
}

var _ Harness = (*Default)(nil)

// RunsOpened says Run runs a turn the runtime opened for the cycle
// (Cycle.Opened) as a new one.
func (*Default) RunsOpened() bool { return true }

// interruptedOutput is the result a tool call gets when the process that
// ran it died; the call is not re-run, since it may have had effects.
const interruptedOutput = "interrupted by restart: the gateway stopped while this tool was running; it was not re-run and its effects are unknown"

func (h *Default) observer() Observer {
	if h.Observer == nil {
		return nopObserver{}
	}
	return h.Observer
}

// init closes the tool calls of an open turn that have no result: the
// process that ran them died. Calls still waiting for a person (custom
// tools, ask-first calls not yet confirmed) are left alone.
func (h *Default) init(ctx context.Context, c *Cycle) error {
	s := c.Session
	if s == nil {
		var err error
		if s, err = c.Log.GetSession(ctx, c.SessionID); err != nil {
			return err
		}
	}
	if s.TurnID == "" || s.TurnID == c.Opened {
		// A turn the runtime just opened has no calls yet.
		return nil
	}
	events, err := c.Contexts.Events(ctx, c)
	if err != nil {
		return err
	}
	calls, err := openCalls(events)
	if err != nil {
		return err
	}
	var results []core.Event
	for _, call := range calls {
		if call.custom {
			continue
		}
		if _, policy, _ := c.Tools.Get(call.name); policy == core.PolicyAsk && call.confirm == nil {
			continue
		}
		results = append(results, core.NewEvent(core.TypeAgentToolResult, core.LevelProgress, core.ActorSystem,
			core.ToolResultBody{ToolUseID: call.id, Output: interruptedOutput, IsError: true}))
	}
	if len(results) == 0 {
		return nil
	}
	c.Logger.Info("closed tool calls interrupted by restart", "session_id", c.SessionID, "turn_id", s.TurnID, "count", len(results))
	c.Session = nil // changed by the results
	_, err = c.Log.Append(ctx, c.SessionID, core.AppendRequest{Epoch: c.Epoch, TurnID: s.TurnID, Events: results})
	return err
}

// turnEvents returns the steps of the turn that started last with id. A
// sandbox reset logged when the session moved mid-turn is no step: a turn
// whose answer was logged before the move still ends with that answer.
func turnEvents(events []core.Event, turnID string) []core.Event {
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Type == core.TypeTurnStarted && events[i].TurnID == turnID {
			return slices.DeleteFunc(slices.Clone(events[i:]), func(e core.Event) bool { return e.Type == core.TypeSandboxReset })
		}
	}
	return nil
}

// Run takes pending inputs and runs turns until nothing is pending. A
// cancelled ctx whose cause is ErrShutdown leaves the open turn in the log
// for the next process.
func (h *Default) Run(ctx context.Context, c *Cycle) (Outcome, error) {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	var out Outcome
	if err := h.init(ctx, c); err != nil {
		return out, fmt.Errorf("init: %w", err)
	}
	for {
		// A cancelled cycle ends here; the runtime starts a fresh one for
		// whatever is still pending.
		if ctx.Err() != nil {
			return out, nil
		}
		s, err := c.session(ctx)
		if err != nil {
			return out, err
		}
		if s.Status == core.StatusArchived {
			return out, nil
		}
		// A turn the runtime opened for this cycle runs as a new one.
		fresh := c.Opened != "" && s.TurnID == c.Opened
		c.Opened = ""
		if s.BudgetPaused() {
			// Only a raise (which queues the turn) or an interrupt moves a
			// paused turn; other inputs wait for it.
			interrupt, err := interruptPending(ctx, c)
			if err != nil || !interrupt {
				out.Paused = err == nil
				return out, err
			}
		}
		turnID := s.TurnID
		if turnID != "" && !fresh && s.Status != core.StatusRunning && s.Status != core.StatusAwaitingInput {
			// A paused turn runs again, under this runtime's lease.
			if _, err := c.Log.Append(ctx, c.SessionID, core.AppendRequest{Epoch: c.Epoch, TurnID: turnID, Holder: c.Holder, Events: []core.Event{
				StatusEvent(core.StatusRunning, ""),
			}}); err != nil {
				return out, err
			}
		}
		if turnID == "" {
			opened, again, err := OpenTurn(ctx, c)
			switch {
			case err != nil:
				return out, err
			case again:
				continue
			case opened == "":
				return out, nil
			}
			turnID = opened
		}
		// Only a turn that was open already (paused, or left by a crash)
		// has progress in the log to carry on from.
		t := &turn{h: h, c: c, id: turnID, before: s.Usage, beforeCost: s.CostUSD, turnsBefore: s.Turns, reopened: s.TurnID != "" && !fresh, copied: map[string]string{}}
		reason, err := t.run(ctx)
		out.Usage = out.Usage.Add(t.usage.Sub(t.resumed))
		if err != nil || reason == "" {
			return out, err // shutdown (reason "") or a store failure: the turn stays open
		}
		if t.paused {
			out.Paused = true
			return out, nil
		}
		out.Turns++
		out.Reason = reason
		if reason != core.ReasonCompleted && reason != core.ReasonCanceled {
			// Limits, errors and questions wait for a person; a message
			// queued meanwhile still wakes the session again.
			pending, err := c.Log.Pending(ctx, c.SessionID)
			if err != nil || len(pending) == 0 {
				return out, err
			}
		}
	}
}

// OpenTurn takes the session's pending inputs into a new turn, logged
// running, and returns its id. With nothing pending it returns "". An
// interrupt that comes first is logged with the idle, canceled status it
// leads to, as nothing runs to cancel, and again asks the caller to look
// at what is pending after it.
func OpenTurn(ctx context.Context, c *Cycle) (turnID string, again bool, err error) {
	pending, err := c.Log.Pending(ctx, c.SessionID)
	if err != nil || len(pending) == 0 {
		return "", false, err
	}
	if pending[0].Type == core.TypeUserInterrupt {
		_, err := c.Log.Append(ctx, c.SessionID, core.AppendRequest{Epoch: c.Epoch, TakeInputs: true, Events: []core.Event{
			StatusEvent(core.StatusIdle, core.ReasonCanceled),
		}})
		return "", err == nil, err
	}
	turnID = core.NewID(core.PrefixTurn)
	if _, err := c.Log.Append(ctx, c.SessionID, Opening(c, turnID)); err != nil {
		return "", false, err
	}
	return turnID, false, nil
}

// Opening is the append that opens turn turnID with the session's pending
// inputs, as OpenTurn makes it.
func Opening(c *Cycle, turnID string) core.AppendRequest {
	return core.AppendRequest{Epoch: c.Epoch, TakeInputs: true, TurnID: turnID, Holder: c.Holder, Events: []core.Event{
		StatusEvent(core.StatusRunning, ""),
		core.NewEvent(core.TypeTurnStarted, core.LevelInternal, core.ActorSystem, struct{}{}),
	}}
}

// interruptPending reports whether a user.interrupt is queued.
func interruptPending(ctx context.Context, c *Cycle) (bool, error) {
	pending, err := c.Log.Pending(ctx, c.SessionID)
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(pending, func(e core.Event) bool { return e.Type == core.TypeUserInterrupt }), nil
}

// StatusEvent is the session.status_changed a harness logs.
func StatusEvent(s core.Status, r core.Reason) core.Event {
	return core.NewEvent(core.TypeStatusChanged, core.LevelInternal, core.ActorSystem, core.StatusChangedBody{Status: s, StopReason: r})
}

// generate calls the model and reports the call to the observer.
func (h *Default) generate(ctx context.Context, c *Cycle, req core.ModelRequest) (*core.ModelResponse, error) {
	start := time.Now()
	resp, err := c.Model.Generate(ctx, req)
	var u core.Usage
	if resp != nil {
		u = resp.Usage
	}
	h.observer().ModelCall(c.Agent.Model, time.Since(start), u, err)
	return resp, err
}

// ReasonFor maps a cancelled turn context to a yield reason; "" means the
// gateway is shutting down and the turn must stay open.
func ReasonFor(ctx context.Context) core.Reason {
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, ErrShutdown), errors.Is(cause, core.ErrLeaseLost):
		// The turn stays open: for the next process, or for the runtime
		// that took the session over.
		return ""
	case errors.Is(cause, ErrInterrupted):
		return core.ReasonCanceled
	case errors.Is(cause, errDeadline), errors.Is(cause, context.DeadlineExceeded):
		return core.ReasonDeadlineExceeded
	}
	return core.ReasonCanceled
}
