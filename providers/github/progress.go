package github

import (
	"context"

	gh "github.com/google/go-github/v62/github"
	"github.com/switchboardhq/switchboard/core"
)

// working shows the turn at work again: at its start, and when it runs
// on after a wait or a pause.
func (r *renderer) working(ctx context.Context, st *sinkState) error {
	p, resumed := r.p, st.Waiting || st.Paused
	st.Waiting, st.Paused = false, false
	if st.CheckRun != 0 {
		if err := p.updateCheckRun(ctx, st, gh.UpdateCheckRunOptions{Status: gh.String("in_progress"),
			Output: st.output("Working", "The agent is working on it.")}); err != nil {
			return err
		}
	}
	if st.StatusComment != 0 && resumed {
		return r.editStatus(ctx, st, workingStatus)
	}
	return nil
}

// pause shows a turn paused by a session budget (or max_turns), named by
// budget. Paused, not ended: the run stays open (Stop still ends the
// turn) until the budget is raised.
func (r *renderer) pause(ctx context.Context, st *sinkState, budget, note string) error {
	st.Paused = true
	if st.CheckRun != 0 {
		if err := r.p.updateCheckRun(ctx, st, gh.UpdateCheckRunOptions{Status: gh.String("in_progress"),
			Output: st.output(core.PauseTitle(budget), note)}); err != nil {
			return err
		}
	}
	if st.StatusComment != 0 {
		return r.editStatus(ctx, st, "⏸ "+core.PauseTitle(budget)+".")
	}
	return nil
}

// end completes the turn's run and its status comment with how it
// ended, and forgets the turn.
func (r *renderer) end(ctx context.Context, st *sinkState, reason core.Reason) error {
	p := r.p
	title, emoji := outcome(reason)
	summary := title + " (" + string(reason) + ")."
	if st.CheckRun != 0 {
		opts := gh.UpdateCheckRunOptions{Status: gh.String("completed"), Conclusion: gh.String(conclusion(reason)), Output: st.output(title, summary)}
		if core.Retryable(reason) {
			opts.Output = st.output(title, summary+" Retry runs the turn again.")
			opts.Actions = []*gh.CheckRunAction{{Label: "Retry", Description: "Run the turn again", Identifier: retryAction}}
		}
		if err := p.updateCheckRun(ctx, st, opts); err != nil {
			return err
		}
		st.CheckRun = 0
	}
	if st.StatusComment != 0 {
		if err := r.editStatus(ctx, st, emoji+" "+summary); err != nil {
			return err
		}
		st.StatusComment = 0
	}
	st.Calls, st.Asked, st.Plan, st.Waiting, st.Paused, st.Status = nil, nil, nil, false, false, ""
	return nil
}

// outcome is a finished turn's title, and the sign its status comment
// starts with.
func outcome(r core.Reason) (title, emoji string) {
	switch r {
	case core.ReasonCompleted:
		return "Done", "✅"
	case core.ReasonNeedsInput:
		return "Waiting for an answer", "❓"
	case core.ReasonCanceled:
		return "Stopped", "⏹"
	case core.ReasonError:
		return "Failed", "⚠️"
	case core.ReasonMaxSteps:
		return "Stopped: step limit", "⚠️"
	case core.ReasonDeadlineExceeded:
		return "Stopped: time limit", "⚠️"
	case core.ReasonBudgetExceeded:
		return "Stopped: token budget", "⚠️"
	}
	return "Ended", "⏹"
}

// conclusion is a finished check run's conclusion for a turn that ended
// with r.
func conclusion(r core.Reason) string {
	switch r {
	case core.ReasonCompleted:
		return "success"
	case core.ReasonError:
		return "failure"
	case core.ReasonCanceled:
		return "cancelled"
	case core.ReasonDeadlineExceeded:
		return "timed_out"
	}
	return "neutral"
}
