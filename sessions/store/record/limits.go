package record

import "github.com/switchboardhq/switchboard/core"

// SetLimits merges the non-zero fields of l into the session's own
// limits. For a turn paused by a session budget it returns the events
// that queue the turn to run again (a session.status_changed to queued,
// by actor), which the store logs, with a wake now, in the transaction
// that saves the limits: the runtime resumes the turn, and pauses it
// again if the budget still does not fit.
func SetLimits(sess *core.Session, l core.Limits, actor core.Actor) ([]LogEvent, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	merged := l
	if sess.Limits != nil {
		merged = l.Or(*sess.Limits)
	}
	sess.Limits = &merged
	if !sess.BudgetPaused() {
		return nil, nil
	}
	ev := core.NewEvent(core.TypeStatusChanged, core.LevelInternal, actor,
		core.StatusChangedBody{Status: core.StatusQueued, StopReason: sess.StopReason})
	return PrepareEvents([]core.Event{ev})
}
