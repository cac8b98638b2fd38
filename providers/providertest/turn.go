package providertest

import (
	"encoding/json"

	"github.com/switchboardhq/switchboard/core"
)

// turn logs a turn of a session the way the runtime's harness does: one
// append that takes the queued inputs and starts it, one per step.
type turn struct {
	w  *world
	s  string
	id string
}

// turn starts a turn on the session, taking its queued inputs.
func (w *world) turn(sessionID string) *turn {
	w.t.Helper()
	tn := &turn{w: w, s: sessionID, id: core.NewID(core.PrefixTurn)}
	tn.append(true, status(core.StatusRunning, ""), core.NewEvent(core.TypeTurnStarted, core.LevelInternal, core.ActorSystem, struct{}{}))
	return tn
}

func (tn *turn) append(take bool, evs ...core.Event) {
	tn.w.t.Helper()
	req := core.AppendRequest{TakeInputs: take, TurnID: tn.id, Events: evs}
	if take {
		req.Holder = "conformance"
	}
	if _, err := tn.w.store.Append(tn.w.t.Context(), tn.s, req); err != nil {
		tn.w.t.Fatal(err)
	}
}

// step logs events of the running turn.
func (tn *turn) step(evs ...core.Event) {
	tn.w.t.Helper()
	tn.append(false, evs...)
}

// end ends the turn with reason; pending names the tool calls it waits
// on (requires_action).
func (tn *turn) end(reason core.Reason, pending ...string) {
	tn.w.t.Helper()
	tn.append(false, core.NewEvent(core.TypeTurnCompleted, core.LevelInternal, core.ActorSystem,
		core.TurnCompletedBody{YieldReason: reason, PendingToolUseIDs: pending}),
		status(core.StatusAfter(reason), reason))
}

func status(st core.Status, why core.Reason) core.Event {
	return core.NewEvent(core.TypeStatusChanged, core.LevelInternal, core.ActorSystem, core.StatusChangedBody{Status: st, StopReason: why})
}

// answer is the agent's answer to the thread.
func answer(text string) core.Event {
	return core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorAgent, core.MessageBody{Text: text})
}

func toolUse(id, name string, input any) core.Event {
	raw, _ := json.Marshal(input)
	return core.NewEvent(core.TypeAgentToolUse, core.LevelProgress, core.ActorAgent, core.ToolUseBody{ToolUseID: id, Name: name, Input: raw})
}
