package record

import (
	"encoding/json"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard/core"
)

// LogEvent is an event to append with the bodies a store's projection
// reads, decoded once before the write.
type LogEvent struct {
	Ev     core.Event
	Status *core.StatusChangedBody
	Done   *core.TurnCompletedBody
	// Said is the text of a user-level message of the agent or the
	// system (an answer, a question, an error), nil for other events.
	Said *string
}

// MaxResultText bounds a result's text (core.TurnResult.Text): the
// session record carries it, and a list page carries a hundred records.
// The log keeps the whole message.
const MaxResultText = 32 << 10

// clipResult cuts s to MaxResultText bytes at a character's boundary,
// marking the cut with an ellipsis.
func clipResult(s string) string {
	if len(s) <= MaxResultText {
		return s
	}
	const mark = "…"
	cut := MaxResultText - len(mark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}

// FollowResult folds one logged event e into the session's result: a
// turn's user-level messages are remembered as it runs, and its
// turn.completed makes the last of them the session's result. Call it
// before the projection that closes the turn.
func FollowResult(sess *core.Session, le LogEvent, e core.Event) {
	switch {
	case e.Type == core.TypeTurnStarted:
		sess.TurnText = ""
	case le.Said != nil:
		sess.TurnText = clipResult(*le.Said)
	case le.Done != nil:
		turn := sess.TurnID
		if turn == "" {
			turn = e.TurnID
		}
		sess.Result = &core.TurnResult{TurnID: turn, YieldReason: le.Done.YieldReason, Text: sess.TurnText, CompletedAt: e.CreatedAt}
		sess.TurnText = ""
	}
}

// PrepareEvents validates events and fixes their ids before the write, so
// a malformed event fails alone and a write run again is deterministic.
func PrepareEvents(in []core.Event) ([]LogEvent, error) {
	out := make([]LogEvent, len(in))
	for i, e := range in {
		if e.Type == "" {
			return nil, fmt.Errorf("event %d: type is required: %w", i, core.ErrInvalid)
		}
		e, err := PrepareEvent(e)
		if err != nil {
			return nil, fmt.Errorf("event %d (%s): %w", i, e.Type, err)
		}
		le := LogEvent{Ev: e}
		switch e.Type {
		case core.TypeStatusChanged:
			le.Status = &core.StatusChangedBody{}
			if err := json.Unmarshal(e.Body, le.Status); err != nil || !KnownStatus(le.Status.Status) {
				return nil, fmt.Errorf("event %d: %s body %s: %w", i, e.Type, e.Body, core.ErrInvalid)
			}
		case core.TypeTurnCompleted:
			le.Done = &core.TurnCompletedBody{}
			if err := json.Unmarshal(e.Body, le.Done); err != nil {
				return nil, fmt.Errorf("event %d: %s body: %v: %w", i, e.Type, err, core.ErrInvalid)
			}
		case core.TypeAgentMessage, core.TypeError:
			if e.Level == core.LevelUser {
				var said struct{ Text, Message string }
				if err := json.Unmarshal(e.Body, &said); err != nil {
					return nil, fmt.Errorf("event %d: %s body: %v: %w", i, e.Type, err, core.ErrInvalid)
				}
				text := said.Text + said.Message
				le.Said = &text
			}
		}
		out[i] = le
	}
	return out, nil
}

// Lease is what a logged status change does to the lease of the session's
// open turn (the holder OpenTurns reports for recovery after a crash).
type Lease int

const (
	LeaseKept     Lease = iota
	LeaseReleased       // a session budget paused the turn: no one holds it
	LeaseTaken          // the paused turn runs again, under the appender
)

// FollowPause folds a status change into the session's pending action: a
// turn paused by a session budget waits on its raise and holds no lease,
// so a restart does not resume it; its resumption (queued once raised,
// then running) clears the wait. A turn whose agent waits inside it for
// a person's answer (an ACP agent's permission request) shows the calls
// it waits on, so that their answers are taken, and keeps its lease: a
// restart finds the turn and ends it.
func FollowPause(sess *core.Session, st *core.StatusChangedBody) Lease {
	switch {
	case st.PendingAction != nil && st.PendingAction.Budget == nil && len(st.PendingAction.ToolUseIDs) > 0 && sess.TurnID != "":
		pa := core.PendingAction{ToolUseIDs: slices.Clone(st.PendingAction.ToolUseIDs)}
		sess.PendingAction = &pa
		return LeaseKept
	case st.PendingAction != nil && st.PendingAction.Budget != nil && sess.TurnID != "":
		pa := *st.PendingAction
		pa.ToolUseIDs = []string{}
		sess.PendingAction = &pa
		return LeaseReleased
	case st.Status == core.StatusQueued && sess.BudgetPaused():
		sess.PendingAction = nil
	case st.Status == core.StatusRunning && sess.TurnID != "":
		sess.PendingAction = nil
		return LeaseTaken
	}
	return LeaseKept
}
