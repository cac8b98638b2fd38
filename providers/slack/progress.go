package slack

import (
	"context"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// startProgress shows that a turn runs: the assistant thread status where
// the workspace allows it, else a status message with a Stop button.
func (rc *render) startProgress(ctx context.Context) error {
	st := rc.st
	if st.Mode != "message" {
		err := rc.a.setStatus(ctx, rc.channel, rc.thread, "is thinking…")
		if err == nil {
			st.Mode = "status"
			return nil
		}
		if slackError(err) == "" {
			return err // not an answer from Slack: try again
		}
		rc.p.log.Info("assistant thread status unavailable; using a status message", "session_id", rc.session, "slack_error", slackError(err))
		st.Mode = "message"
	}
	ts, err := rc.postOnce(ctx, rc.key(0), statusMsg("⏳ Working on it…", rc.session, true), false)
	if err == nil {
		st.StatusTS = ts
	}
	return err
}

// progress updates the status, at most once per StatusEvery.
func (rc *render) progress(ctx context.Context, status, line string) (bool, error) {
	st := rc.st
	now := time.Now().UnixMilli()
	if now-st.StatusAt < rc.p.cfg.StatusEvery.Milliseconds() {
		return false, nil
	}
	st.StatusAt = now
	switch {
	case st.Mode == "status":
		return true, rc.a.setStatus(ctx, rc.channel, rc.thread, status)
	case st.StatusTS != "":
		return true, rc.a.update(ctx, rc.channel, st.StatusTS, statusMsg("⏳ Working on it… "+line+st.Plan, rc.session, true).options()...)
	}
	return false, nil
}

// pause shows a turn paused by a session budget (or max_turns), named
// by budget, as waiting, not ended: the status message stays (without
// its Stop button) for the resumed turn's progress to take up again.
func (rc *render) pause(ctx context.Context, budget string) error {
	st := rc.st
	if st.Stream != nil && !st.Stream.Off {
		// A pause may outlast a stream: this one ends, and the resumed
		// turn streams anew.
		if err := rc.endStream(ctx); err != nil {
			return err
		}
		st.Stream = &streamState{Last: st.LastStream}
	}
	switch {
	case st.Mode == "status":
		if err := rc.a.setStatus(ctx, rc.channel, rc.thread, ""); err != nil && slackError(err) == "" {
			return err
		}
	case st.StatusTS != "":
		if err := rc.a.update(ctx, rc.channel, st.StatusTS, statusMsg("⏸ "+core.PauseTitle(budget), rc.session, false).options()...); err != nil && slackError(err) == "" {
			return err
		}
	}
	// The resumed turn's first step shows at once.
	st.StatusAt = 0
	return nil
}

// finish ends a turn's progress and explains how it ended when a person
// should know: limits, a stop, tool calls waiting for an allow or deny.
func (rc *render) finish(ctx context.Context, b core.TurnCompletedBody, turn string) error {
	st := rc.st
	final, note := outcome(b.YieldReason)
	if rc.p.cfg.Agent && st.Mode == "" && b.YieldReason == core.ReasonCanceled {
		note = final // no status to say it: the thread does
	}
	switch {
	case st.Mode == "status":
		if err := rc.a.setStatus(ctx, rc.channel, rc.thread, ""); err != nil && slackError(err) == "" {
			return err
		}
		if b.YieldReason == core.ReasonCanceled {
			note = final
		}
	case st.StatusTS != "":
		if err := rc.a.update(ctx, rc.channel, st.StatusTS, statusMsg(final, rc.session, false).options()...); err != nil && slackError(err) == "" {
			return err
		}
	}
	var msgs []outMsg
	if note != "" {
		m := outMsg{texts: []string{note}}
		if b.YieldReason == core.ReasonMaxSteps || b.YieldReason == core.ReasonDeadlineExceeded {
			m.extra = retryBlocks(rc.session, turn)
		}
		msgs = append(msgs, m)
	}
	for _, id := range b.PendingToolUseIDs {
		t, ok := st.Tools[id]
		switch {
		case !ok, t.Asked:
			continue
		case t.Custom:
			msgs = append(msgs, outMsg{texts: []string{"⏸ Waiting for the application to return the result of `" + escapeText(t.Name) + "`."}})
		default:
			msgs = append(msgs, confirmMsg(rc.session, id, t))
		}
	}
	return rc.postParts(ctx, msgs, false)
}

// ask posts the Allow and Deny of calls a running turn waits on.
func (rc *render) ask(ctx context.Context, ids []string) error {
	st := rc.st
	var msgs []outMsg
	var asked []string
	for _, id := range ids {
		if t, ok := st.Tools[id]; ok && !t.Asked {
			msgs = append(msgs, confirmMsg(rc.session, id, t))
			asked = append(asked, id)
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	if _, err := rc.progress(ctx, "is waiting for a decision…", "⏸ Waiting for a decision"); err != nil {
		return err
	}
	if err := rc.postParts(ctx, msgs, false); err != nil {
		return err
	}
	for _, id := range asked {
		t := st.Tools[id]
		t.Asked = true
		st.Tools[id] = t
	}
	return nil
}

// outcome is the status message's last words for a turn's yield reason,
// and a note for the thread when the reason needs one.
func outcome(r core.Reason) (final, note string) {
	switch r {
	case core.ReasonCompleted:
		return "✅ Done", ""
	case core.ReasonNeedsInput:
		return "❓ Waiting for your answer", ""
	case core.ReasonRequiresAction:
		return "⏸ Waiting for a decision", ""
	case core.ReasonCanceled:
		return "⏹ Stopped", ""
	case core.ReasonMaxSteps:
		return "⚠️ Stopped: step limit", "⚠️ I stopped because I reached my limit of steps for one turn. Press Retry, or reply in this thread, to let me continue."
	case core.ReasonDeadlineExceeded:
		return "⚠️ Stopped: time limit", "⚠️ I stopped because this turn ran out of time. Press Retry, or reply in this thread, to let me continue."
	case core.ReasonBudgetExceeded:
		return "⚠️ Stopped: token budget", "⚠️ I stopped because this turn used up its token budget. Reply in this thread to let me continue."
	case core.ReasonError:
		return "⚠️ Failed", ""
	}
	return "Stopped (" + string(r) + ")", ""
}
