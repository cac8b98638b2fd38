package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/toolset"
)

// turn runs the steps of one turn.
type turn struct {
	h     *Default
	c     *Cycle
	id    string
	steps int
	usage core.Usage
	// final is set when the last model response had no tool calls.
	final bool
	// interruptTaken is set once the turn's user.interrupt is in the log.
	interruptTaken bool
	// before and beforeCost are the session's totals over its finished
	// turns, which its budgets count with this one's.
	before     core.Usage
	beforeCost *float64
	// turnsBefore is the session's finished turns, which its max_turns
	// caps.
	turnsBefore int
	// resumed is what the turn had used before it paused, and active how
	// long it had run (TurnSoFar); paused is set when it pauses again.
	resumed core.Usage
	active  time.Duration
	paused  bool
	// reopened: the turn was open before this cycle, so it may have
	// paused; a new one has nothing to resume.
	reopened bool
	// copied are the attachments put in the sandbox this turn, and where.
	copied map[string]string
	// panicked: a tool call of the turn panicked; the turn ends with an
	// internal error once the call's result is logged.
	panicked bool
}

// resume carries on from the turn's last pause, if it paused: the steps,
// usage and running time it had then still count.
func (t *turn) resume(events []core.Event) error {
	te := turnEvents(events, t.id)
	for i := len(te) - 1; i >= 0; i-- {
		if te[i].Type != core.TypeStatusChanged {
			continue
		}
		var b core.StatusChangedBody
		if err := te[i].Decode(&b); err != nil {
			return err
		}
		if b.Turn != nil {
			t.usage, t.resumed, t.steps = b.Turn.Usage, b.Turn.Usage, b.Turn.Steps
			t.active = time.Duration(b.Turn.ActiveMS) * time.Millisecond
			return nil
		}
	}
	return nil
}

// run steps until the turn yields. It returns "" with a nil error when the
// gateway is shutting down: the turn stays open for the next process.
func (t *turn) run(ctx context.Context) (core.Reason, error) {
	c := t.c
	// Log writes must land even when the turn was just cancelled.
	wctx := context.WithoutCancel(ctx)
	if t.reopened {
		events, err := c.Contexts.Events(wctx, c)
		if err != nil {
			return "", err
		}
		if err := t.resume(events); err != nil {
			return "", err
		}
	}
	started := time.Now()
	tctx, cancel := context.WithTimeoutCause(ctx, time.Duration(c.Limits.TurnSeconds)*time.Second-t.active, errDeadline)
	defer cancel()
	for {
		taken, err := c.Log.Append(wctx, c.SessionID, core.AppendRequest{Epoch: c.Epoch, TakeInputs: true, TurnID: t.id})
		if err != nil {
			return "", fmt.Errorf("take inputs: %w", err)
		}
		for _, e := range taken {
			if e.Type == core.TypeUserInterrupt {
				t.interruptTaken = true
				return t.finish(wctx, core.ReasonCanceled)
			}
		}
		if tctx.Err() != nil {
			return t.stopped(wctx, tctx)
		}
		if len(taken) == 0 && t.final {
			return t.finish(wctx, core.ReasonCompleted)
		}
		events, err := c.Contexts.Events(wctx, c)
		if err != nil {
			return "", err
		}
		if len(taken) > 0 {
			if err := t.noteStale(events, taken); err != nil {
				return "", err
			}
		}
		if len(taken) == 0 {
			if finalAnswer(turnEvents(events, t.id)) {
				return t.finish(wctx, core.ReasonCompleted)
			}
			if r := t.yieldedTool(turnEvents(events, t.id)); r != "" {
				return t.finish(wctx, r)
			}
		}
		t.final = false
		waiting, changed, ok, err := t.resolve(tctx, wctx, events)
		switch {
		case err != nil:
			return "", err
		case t.panicked:
			return t.failPanicked(wctx)
		case !ok:
			return t.stopped(wctx, tctx)
		case len(waiting) > 0:
			return t.finish(wctx, core.ReasonRequiresAction, waiting...)
		case changed:
			continue // read the results just logged
		}
		if t.steps >= c.Limits.MaxSteps {
			return t.finish(wctx, core.ReasonMaxSteps)
		}
		if t.usage.Total() >= c.Limits.MaxTokens {
			return t.finish(wctx, core.ReasonBudgetExceeded)
		}
		if over := t.overBudget(); over != nil {
			return t.pause(wctx, over, t.active+time.Since(started))
		}
		fetched, err := c.Attachments.Fetch(tctx, wctx, c, t.id, events)
		if err != nil {
			if tctx.Err() != nil {
				continue
			}
			return "", err
		}
		events = append(events, fetched...)
		mc, err := c.Contexts.Context(wctx, c, events)
		if err != nil {
			return "", err
		}
		if t.h.shouldCompact(c, mc) {
			u, err := t.h.compact(tctx, c, mc, t.id)
			t.usage = t.usage.Add(u)
			if err != nil {
				if tctx.Err() != nil {
					continue
				}
				c.Logger.Warn("compaction failed; continuing with the full context", "session_id", c.SessionID, "err", err)
			} else {
				continue // derive again from the summary
			}
		}
		var at Attachments
		if c.Attachments != nil {
			at = *c.Attachments
		}
		msgs, err := at.resolve(tctx, c.SessionID, c.Images, mc, t.copied)
		if err != nil {
			return "", err
		}
		req := core.ModelRequest{Model: c.Agent.Model, System: mc.System, Messages: msgs, Tools: c.Tools.Defs(), Conversation: c.SessionID}
		resp, err := t.respond(tctx, wctx, req)
		if err != nil {
			if tctx.Err() != nil {
				continue
			}
			return t.fail(wctx, err)
		}
		t.steps++
		t.usage = t.usage.Add(resp.Usage)
		calls, evs := responseEvents(resp, c.Tools)
		if c.Failpoint != nil {
			c.Failpoint("after_response")
		}
		if len(evs) > 0 {
			// One append per response, so a crash leaves a response either
			// wholly logged or not at all.
			if _, err := c.Log.Append(wctx, c.SessionID, core.AppendRequest{Epoch: c.Epoch, TurnID: t.id, Events: evs}); err != nil {
				return "", fmt.Errorf("log response: %w", err)
			}
		}
		if len(calls) == 0 {
			if len(evs) > 0 && c.Failpoint != nil {
				c.Failpoint("after_answer")
			}
			t.final = true
			continue
		}
		var yield core.Reason
		waiting = nil
		for _, call := range calls {
			if tool, policy, found := c.Tools.Get(call.Name); found {
				if _, custom := tool.(core.Custom); custom || policy == core.PolicyAsk {
					waiting = append(waiting, call.ID)
					continue
				}
			}
			res, ok := t.callTool(tctx, call)
			if !ok {
				if ReasonFor(tctx) == "" {
					return "", nil // shutdown: the next process closes the call
				}
				res = core.ToolResult{Output: "stopped: " + string(ReasonFor(tctx)), IsError: true}
			}
			if err := t.logResult(wctx, call.ID, res); err != nil {
				return "", err
			}
			if t.panicked {
				return t.failPanicked(wctx)
			}
			if res.Yield != "" {
				yield = res.Yield
			}
		}
		if len(waiting) > 0 {
			return t.finish(wctx, core.ReasonRequiresAction, waiting...)
		}
		if yield != "" {
			return t.finish(wctx, yield)
		}
	}
}

// respond calls the model, logging its text as it streams when the
// harness asks for that. The deltas stop when the call ends, however it
// ends (a panic in the model's client included).
func (t *turn) respond(tctx, wctx context.Context, req core.ModelRequest) (*core.ModelResponse, error) {
	if t.h.TextEvery > 0 {
		deltas := newTextDeltas(wctx, t.c, t.id, t.h.TextEvery)
		req.OnText = deltas.add
		defer deltas.close()
	}
	return t.h.generate(tctx, t.c, req)
}

// noteStale logs the taken answers that answer no open call; Derive
// leaves them out of the model's context.
func (t *turn) noteStale(events, taken []core.Event) error {
	stale, err := staleAnswers(events)
	if err != nil {
		return err
	}
	for _, e := range taken {
		if id, ok := stale[e.ID]; ok {
			t.c.Logger.Warn("ignored an answer to a tool call that waits for none; the model does not see it",
				"session_id", t.c.SessionID, "turn_id", t.id, "type", e.Type, "tool_use_id", id, "seq", e.Seq)
		}
	}
	return nil
}

// stopped ends a turn whose context was cancelled.
func (t *turn) stopped(ctx context.Context, tctx context.Context) (core.Reason, error) {
	r := ReasonFor(tctx)
	if r == "" {
		return "", nil
	}
	return t.finish(ctx, r)
}

// fail logs a model error and ends the turn with reason error.
func (t *turn) fail(ctx context.Context, err error) (core.Reason, error) {
	body := core.ErrorBody{Message: err.Error()}
	if me, ok := err.(*core.ModelError); ok {
		body.Retryable = me.Retryable
	}
	t.c.Logger.Warn("model call failed", "session_id", t.c.SessionID, "turn_id", t.id, "err", err)
	ev := core.NewEvent(core.TypeError, core.LevelUser, core.ActorSystem, body)
	if _, err := t.c.Log.Append(ctx, t.c.SessionID, core.AppendRequest{Epoch: t.c.Epoch, TurnID: t.id, Events: []core.Event{ev}}); err != nil {
		return "", fmt.Errorf("log error: %w", err)
	}
	return t.finish(ctx, core.ReasonError)
}

// finish logs turn.completed and the status it leads to; waiting lists the
// calls a requires_action yield waits on.
func (t *turn) finish(ctx context.Context, r core.Reason, waiting ...string) (core.Reason, error) {
	cost := t.h.cost(t.c.Agent.Model, t.usage)
	body := core.TurnCompletedBody{YieldReason: r, Usage: t.usage, CostUSD: cost, PendingToolUseIDs: waiting}
	req := core.AppendRequest{
		Epoch:  t.c.Epoch,
		TurnID: t.id,
		// A cancelled turn takes the interrupt that cancelled it, and what
		// was queued before it, but nothing queued after.
		TakeInputs: r == core.ReasonCanceled && !t.interruptTaken,
		Events: []core.Event{
			core.NewEvent(core.TypeTurnCompleted, core.LevelInternal, core.ActorSystem, body),
			StatusEvent(core.StatusAfter(r), r),
		},
	}
	if _, err := t.c.Log.Append(ctx, t.c.SessionID, req); err != nil {
		return "", fmt.Errorf("log turn completed: %w", err)
	}
	t.h.observer().TurnCompleted(TurnReport{Agent: t.c.Agent.Name, Installation: t.c.Installation, Model: t.c.Agent.Model,
		Reason: r, Usage: t.usage, CostUSD: cost})
	return r, nil
}

// callTool runs one call; ok is false when the turn's context ended first.
// A tool that ignores its context is abandoned, not waited for. A tool
// that panics gets notFinishedOutput as its result and sets t.panicked:
// the caller logs the result, then ends the turn (failPanicked).
func (t *turn) callTool(ctx context.Context, call core.ToolCall) (core.ToolResult, bool) {
	tool, _, found := t.c.Tools.Get(call.Name)
	if !found {
		return core.ToolResult{Output: fmt.Sprintf("unknown tool %q", call.Name), IsError: true}, true
	}
	call.SessionID, call.TurnID = t.c.SessionID, t.id
	type called struct {
		res      core.ToolResult
		panicked bool
	}
	done := make(chan called, 1)
	go func() {
		res, err := t.runTool(ctx, tool, call)
		switch {
		case errors.Is(err, core.ErrPanicked):
			done <- called{core.ToolResult{Output: notFinishedOutput, IsError: true}, true}
			return
		case err != nil:
			res = core.ToolResult{Output: "error: " + err.Error(), IsError: true}
		}
		done <- called{res: res}
	}()
	select {
	case c := <-done:
		if ctx.Err() != nil {
			return c.res, false
		}
		t.panicked = c.panicked
		return c.res, true
	case <-ctx.Done():
		return core.ToolResult{}, false
	}
}

// runTool calls the tool; a panic in it is this turn's alone.
func (t *turn) runTool(ctx context.Context, tool core.Tool, call core.ToolCall) (res core.ToolResult, err error) {
	defer core.Recover(t.c.Logger, &err, "session_id", t.c.SessionID, "turn_id", t.id, "tool", call.Name, "tool_use_id", call.ID)
	return tool.Call(ctx, call)
}

// yieldedTool finds a turn whose last step was a yielding tool (ask) that
// completed before a crash: the turn yields instead of asking the model again.
func (t *turn) yieldedTool(te []core.Event) core.Reason {
	n := len(te)
	if n == 0 || te[n-1].Type != core.TypeAgentToolResult {
		return ""
	}
	var res core.ToolResultBody
	if te[n-1].Decode(&res) != nil || res.IsError {
		return ""
	}
	for i := n - 2; i >= 0; i-- {
		var use core.ToolUseBody
		if te[i].Type != core.TypeAgentToolUse || te[i].Decode(&use) != nil || use.ToolUseID != res.ToolUseID {
			continue
		}
		tool, _, _ := t.c.Tools.Get(use.Name)
		if y, ok := tool.(Yielder); ok {
			return y.YieldReason()
		}
		return ""
	}
	return ""
}

// finalAnswer reports whether a turn's last event is the model's answer.
func finalAnswer(te []core.Event) bool {
	n := len(te)
	if n == 0 || te[n-1].Type != core.TypeAgentMessage || te[n-1].Level != core.LevelUser {
		return false
	}
	var b core.MessageBody
	return te[n-1].Decode(&b) == nil && b.ToolUseID == "" && b.Kind != core.MessageKindBudget
}

// responseEvents turns a model response into log events: its text as one
// agent.message (user level when it is the answer, progress beside tool
// calls) and one agent.tool_use per call (agent.custom_tool_use for the
// client's custom tools).
func responseEvents(resp *core.ModelResponse, tools *toolset.Registry) ([]core.ToolCall, []core.Event) {
	var text strings.Builder
	var calls []core.ToolCall
	for _, b := range resp.Content {
		switch b.Type {
		case core.BlockText:
			text.WriteString(b.Text)
		case core.BlockToolUse:
			input := b.Input
			if len(input) == 0 {
				input = json.RawMessage(`{}`)
			}
			calls = append(calls, core.ToolCall{ID: b.ToolUseID, Name: b.Name, Input: input})
		}
	}
	var evs []core.Event
	if s := strings.TrimSpace(text.String()); s != "" {
		level := core.LevelUser
		if len(calls) > 0 {
			level = core.LevelProgress
		}
		evs = append(evs, core.NewEvent(core.TypeAgentMessage, level, core.ActorAgent, core.MessageBody{Text: s}))
	}
	for _, call := range calls {
		typ := core.TypeAgentToolUse
		if tool, _, ok := tools.Get(call.Name); ok {
			if _, custom := tool.(core.Custom); custom {
				typ = core.TypeAgentCustomToolUse
			}
		}
		evs = append(evs, core.NewEvent(typ, core.LevelProgress, core.ActorAgent, core.ToolUseBody{ToolUseID: call.ID, Name: call.Name, Input: call.Input}))
	}
	return calls, evs
}
