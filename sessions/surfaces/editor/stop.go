package editor

import (
	"fmt"

	"github.com/coder/acp-go-sdk"

	"github.com/switchboardhq/switchboard/core"
)

// stopReasons maps every reason a switchboard turn yields or pauses with
// to the stop reason of the prompt it answers (docs/editors.md has the
// table). ACP has no reason for a failed turn: its session.error reaches
// the editor as a message and the prompt ends its turn, as the session
// takes a new message after a failure. requires_action ends a prompt only
// when it waits on what the editor cannot give (a custom tool's result);
// tool confirmations are asked with session/request_permission and the
// prompt goes on.
var stopReasons = map[core.Reason]acp.StopReason{
	core.ReasonCompleted:        acp.StopReasonEndTurn,
	core.ReasonNeedsInput:       acp.StopReasonEndTurn,
	core.ReasonRequiresAction:   acp.StopReasonEndTurn,
	core.ReasonCanceled:         acp.StopReasonCancelled,
	core.ReasonDeadlineExceeded: acp.StopReasonMaxTurnRequests,
	core.ReasonBudgetExceeded:   acp.StopReasonMaxTokens,
	core.ReasonMaxSteps:         acp.StopReasonMaxTurnRequests,
	core.ReasonMaxTurns:         acp.StopReasonMaxTurnRequests,
	core.ReasonError:            acp.StopReasonEndTurn,
}

// stopReason is r's stop reason; a reason the table does not know (a
// newer gateway's) ends the turn.
func stopReason(r core.Reason) acp.StopReason {
	if s, ok := stopReasons[r]; ok {
		return s
	}
	return acp.StopReasonEndTurn
}

// stopNote is what the editor is told beside a stop that a person can
// lift: which limit ended or paused the turn and how to raise it. It is
// "" for the others.
func stopNote(sessionID string, r core.Reason, pause *core.BudgetPause) string {
	raise := func(flag string) string {
		return fmt.Sprintf("raise it with `switchboard session limits %s --%s N` (admin), on the console's session page, or with `budget …` in the thread where the session began", sessionID, flag)
	}
	if pause != nil {
		switch pause.Name {
		case "max_turns":
			return fmt.Sprintf("The session has run its %v turns (limits.max_turns) and the turn waits: %s; the turn then answers, and this editor shows it.", pause.Limit, raise("max-turns"))
		case "max_session_cost_usd":
			return fmt.Sprintf("The session's cost budget paused the turn (spent $%.4f of $%.4f): %s; the turn then resumes, and this editor shows it.", pause.Spent, pause.Limit, raise("max-session-cost-usd"))
		default:
			return fmt.Sprintf("The session's token budget paused the turn (spent %v of %v tokens): %s; the turn then resumes, and this editor shows it.", pause.Spent, pause.Limit, raise("max-session-tokens"))
		}
	}
	switch r {
	case core.ReasonBudgetExceeded:
		return "The turn reached its token limit (limits.max_tokens). Send a message to go on, or " + raise("max-tokens") + "."
	case core.ReasonMaxSteps:
		return "The turn reached its limit of model calls (limits.max_steps). Send a message to go on, or " + raise("max-steps") + "."
	case core.ReasonDeadlineExceeded:
		return "The turn ran out of time (limits.turn_seconds). Send a message to go on, or " + raise("turn-seconds") + "."
	case core.ReasonRequiresAction:
		return "The turn waits for the result of a custom tool, which the API client that defined the tool sends."
	}
	return ""
}
