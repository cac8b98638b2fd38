package harness

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard/core"
)

// openCall is a tool call of the log that has no result yet.
type openCall struct {
	id, name string
	custom   bool
	confirm  *core.ToolConfirmationBody // the person's answer, if any
	// replied: a user.message was logged after the call, so the person
	// moved on without answering it.
	replied bool
}

// openCalls lists the log's tool calls without a result, in call order.
func openCalls(events []core.Event) ([]*openCall, error) {
	var calls []*openCall
	byID := map[string]*openCall{}
	drop := func(id string) {
		if c := byID[id]; c != nil {
			delete(byID, id)
			for i, x := range calls {
				if x == c {
					calls = append(calls[:i], calls[i+1:]...)
					break
				}
			}
		}
	}
	for _, e := range events {
		switch e.Type {
		case core.TypeAgentToolUse, core.TypeAgentCustomToolUse:
			var b core.ToolUseBody
			if err := e.Decode(&b); err != nil {
				return nil, err
			}
			c := &openCall{id: b.ToolUseID, name: b.Name, custom: e.Type == core.TypeAgentCustomToolUse}
			byID[c.id] = c
			calls = append(calls, c)
		case core.TypeAgentToolResult:
			var b core.ToolResultBody
			if err := e.Decode(&b); err != nil {
				return nil, err
			}
			drop(b.ToolUseID)
		case core.TypeUserCustomToolResult:
			var b core.CustomToolResultBody
			if err := e.Decode(&b); err != nil {
				return nil, err
			}
			drop(b.ToolUseID)
		case core.TypeUserToolConfirmation:
			var b core.ToolConfirmationBody
			if err := e.Decode(&b); err != nil {
				return nil, err
			}
			if c := byID[b.ToolUseID]; c != nil {
				c.confirm = &b
			}
		case core.TypeUserMessage:
			var b core.MessageBody
			if err := e.Decode(&b); err != nil {
				return nil, err
			}
			if b.Kind == core.MessageKindAside {
				continue // said beside the question, which stays open
			}
			for _, c := range calls {
				c.replied = true
			}
		}
	}
	return calls, nil
}

// staleAnswers finds the user.custom_tool_result and user.tool_confirmation
// events of events that answer no open call: the call was never made, or it
// already has a result. It maps each such event's id to the tool_use_id it
// names. Model APIs reject a tool result no call waits for, so a stale one
// stays in the log (at internal level, as every such input) and never
// reaches the model.
func staleAnswers(events []core.Event) (map[string]string, error) {
	open := openSet{}
	stale := map[string]string{}
	for _, e := range events {
		id, isStale, err := open.see(e)
		if err != nil {
			return nil, err
		}
		if isStale {
			stale[e.ID] = id
		}
	}
	return stale, nil
}

// openSet holds the ids of the calls made and not yet answered, as a log
// read in order leaves them.
type openSet map[string]bool

// see reads e into the set; stale is true when e is an answer to id, a
// call that waits for none.
func (open openSet) see(e core.Event) (id string, stale bool, err error) {
	switch e.Type {
	case core.TypeAgentToolUse, core.TypeAgentCustomToolUse:
		var b core.ToolUseBody
		if err := e.Decode(&b); err != nil {
			return "", false, err
		}
		open[b.ToolUseID] = true
	case core.TypeAgentToolResult:
		var b core.ToolResultBody
		if err := e.Decode(&b); err != nil {
			return "", false, err
		}
		delete(open, b.ToolUseID)
	case core.TypeUserCustomToolResult, core.TypeUserToolConfirmation:
		id, err := answeredCall(e)
		if err != nil {
			return "", false, err
		}
		if !open[id] {
			return id, true, nil
		}
		if e.Type == core.TypeUserCustomToolResult {
			delete(open, id)
		}
	}
	return "", false, nil
}

// answeredCall returns the tool_use_id a user.custom_tool_result or
// user.tool_confirmation answers.
func answeredCall(e core.Event) (string, error) {
	var b struct {
		ToolUseID string `json:"tool_use_id"`
	}
	err := e.Decode(&b)
	return b.ToolUseID, err
}

// resolve settles the calls a person was asked about: an allowed call
// runs now, a denied one gets an error result, a call the person moved on
// from is closed. It returns the calls still waiting and whether it logged
// anything; ok is false when the turn's context ended while a tool ran.
func (t *turn) resolve(ctx, wctx context.Context, events []core.Event) (waiting []string, changed, ok bool, err error) {
	calls, err := openCalls(events)
	if err != nil || len(calls) == 0 {
		return nil, false, true, err
	}
	for _, c := range calls {
		var res core.ToolResult
		switch {
		case c.custom && !c.replied:
			waiting = append(waiting, c.id)
			continue
		case c.custom:
			res = core.ToolResult{Output: "not run: the person sent a message instead of a result for this call", IsError: true}
		case c.confirm != nil && c.confirm.Result == "allow":
			call := core.ToolCall{ID: c.id, Name: c.name}
			if call.Input, err = callInput(events, c.id); err != nil {
				return nil, changed, true, err
			}
			if res, ok = t.callTool(ctx, call); !ok {
				return nil, changed, false, nil
			}
		case c.confirm != nil:
			res = core.ToolResult{Output: "denied: the person did not allow this call", IsError: true}
			if c.confirm.Message != "" {
				res.Output += ": " + c.confirm.Message
			}
		case c.replied:
			res = core.ToolResult{Output: "not run: the person replied without allowing this call", IsError: true}
		default:
			waiting = append(waiting, c.id)
			continue
		}
		if err := t.logResult(wctx, c.id, res); err != nil {
			return nil, changed, true, err
		}
		changed = true
		if t.panicked {
			return nil, changed, true, nil
		}
	}
	return waiting, changed, true, nil
}

// callInput finds the input the model gave a call.
func callInput(events []core.Event, id string) ([]byte, error) {
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Type != core.TypeAgentToolUse {
			continue
		}
		var b core.ToolUseBody
		if err := events[i].Decode(&b); err != nil {
			return nil, err
		}
		if b.ToolUseID == id {
			return b.Input, nil
		}
	}
	return nil, fmt.Errorf("tool call %s is not in the log", id)
}

// logResult logs a tool's result, and the user-level message it produced.
func (t *turn) logResult(ctx context.Context, id string, res core.ToolResult) error {
	var out []core.Event
	if res.UserMessage != "" {
		out = append(out, core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorAgent, core.MessageBody{Text: res.UserMessage, ToolUseID: id}))
	}
	if res.Plan != nil {
		out = append(out, core.NewEvent(core.TypeAgentPlan, core.LevelProgress, core.ActorAgent, *res.Plan))
	}
	output := capOutput(res.Output, t.c.MaxToolOutput)
	out = append(out, core.NewEvent(core.TypeAgentToolResult, core.LevelProgress, core.ActorSystem, core.ToolResultBody{ToolUseID: id, Output: output, IsError: res.IsError}))
	if _, err := t.c.Log.Append(ctx, t.c.SessionID, core.AppendRequest{Epoch: t.c.Epoch, TurnID: t.id, Events: out}); err != nil {
		return fmt.Errorf("log tool result: %w", err)
	}
	return nil
}

const defaultMaxToolOutput = 64 << 10

// capOutput keeps tool output inside the budget, telling the model what was
// cut, and summarises binary output instead of passing it on.
func capOutput(s string, max int) string {
	if max <= 0 {
		max = defaultMaxToolOutput
	}
	if !utf8.ValidString(s) || containsNUL(s) {
		return fmt.Sprintf("[binary output of %d bytes not shown]", len(s))
	}
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n[output truncated: showing the first %d of %d bytes]", cut, len(s))
}

func containsNUL(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return true
		}
	}
	return false
}
