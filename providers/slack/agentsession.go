package slack

import (
	"context"
	"fmt"
	"strings"

	slackapi "github.com/slack-go/slack"
	"github.com/switchboardhq/switchboard/core"
)

// Slack agent sessions (an app configured as an agent): the thread's
// session shows processing while a turn runs (with Slack's own stop, which
// arrives as agent_session_stopped), suspended while it waits for a person
// or a budget, active between turns and closed once the session is
// archived. Statuses are idempotent, so they are simply set again after a
// restart.

// agentStatus sets the thread's agent session status. Slack's refusal (the
// app is not declared an agent) is logged, not retried: the answer still
// reaches the thread.
func (rc *render) agentStatus(ctx context.Context, status string) error {
	if !rc.p.cfg.Agent {
		return nil
	}
	err := rc.a.setAgentStatus(ctx, slackapi.AgentSessionSetStatusParameters{Status: status, ChannelID: rc.channel, ThreadTS: rc.thread,
		Title: rc.st.Title, InitiatorUserID: rc.st.Asker})
	if e := slackError(err); e != "" {
		rc.p.log.Info("agent session status not set", "session_id", rc.session, "status", status, "slack_error", e)
		return nil
	}
	return err
}

// working marks the turn processing, once per turn (and again after it
// waited): at its first input from Slack, whose text titles a new agent
// session, or at the agent's first output.
func (rc *render) working(ctx context.Context) error {
	if rc.st.Processing || rc.st.Stream == nil {
		return nil
	}
	if err := rc.agentStatus(ctx, slackapi.AgentSessionStatusProcessing); err != nil {
		return err
	}
	rc.st.Processing = true
	return nil
}

// waiting marks the session suspended: a person or a budget must act.
func (rc *render) waiting(ctx context.Context) error {
	rc.st.Processing = false
	return rc.agentStatus(ctx, slackapi.AgentSessionStatusSuspended)
}

// noteAsker remembers who asked: the stream's recipient, and the first
// message's words as the agent session's title.
func (rc *render) noteAsker(e core.Event) {
	var b inputBody
	if e.Decode(&b) != nil || b.Slack == nil {
		return
	}
	rc.st.Asker, rc.st.AskerTeam = b.Slack.User, b.Slack.Team
	if rc.st.Title == "" {
		// The model reads who said it; the title is what was said.
		said := strings.TrimPrefix(b.Text, "<@"+b.Slack.User+">: ")
		line, _, _ := strings.Cut(strings.TrimSpace(said), "\n")
		rc.st.Title = clip(line, 80)
	}
}

// endStatus is the agent session status after a turn ended for r.
func endStatus(r core.Reason) string {
	switch r {
	case core.ReasonRequiresAction, core.ReasonNeedsInput:
		return slackapi.AgentSessionStatusSuspended
	}
	return slackapi.AgentSessionStatusActive
}

// planChunks are a plan's stream chunks: its title (how far it got) and a
// task card per entry.
func planChunks(p core.PlanBody) []slackapi.StreamChunk {
	done := 0
	chunks := []slackapi.StreamChunk{nil}
	for i, e := range p.Entries {
		status := slackapi.TaskCardStatusPending
		switch e.Status {
		case "in_progress":
			status = slackapi.TaskCardStatusInProgress
		case "completed":
			status = slackapi.TaskCardStatusComplete
			done++
		}
		t := slackapi.NewTaskUpdateChunk(fmt.Sprintf("plan-%d", i+1), clip(e.Content, 200))
		t.Status = status
		chunks = append(chunks, t)
	}
	chunks[0] = slackapi.NewPlanUpdateChunk(fmt.Sprintf("Plan: %d of %d done", done, len(p.Entries)))
	return chunks
}

// checklist is a plan as mrkdwn lines, for the status message.
func checklist(p core.PlanBody) string {
	var b strings.Builder
	for _, e := range p.Entries {
		mark := "▫️"
		switch e.Status {
		case "in_progress":
			mark = "▶️"
		case "completed":
			mark = "✅"
		}
		fmt.Fprintf(&b, "\n%s %s", mark, escapeText(clip(e.Content, 200)))
	}
	return b.String()
}

// currentStep is the entry a plan is at: the first in progress, else the
// first not done.
func currentStep(p core.PlanBody) string {
	for _, want := range []string{"in_progress", "pending"} {
		for _, e := range p.Entries {
			if e.Status == want {
				return e.Content
			}
		}
	}
	return ""
}

// plan shows a plan: in the stream, else as a checklist in the status
// message, or its current step as the thread status.
func (rc *render) plan(ctx context.Context, p core.PlanBody) (bool, error) {
	st := rc.st
	if rc.streaming() {
		if err := rc.working(ctx); err != nil {
			return true, err
		}
		if st.Stream.TS == "" {
			st.Stream.Mode = string(slackapi.TaskDisplayModePlan)
		}
		return rc.task(ctx, planChunks(p)...)
	}
	st.Plan = checklist(p)
	switch {
	case st.Mode == "status":
		if step := currentStep(p); step != "" {
			return true, rc.a.setStatus(ctx, rc.channel, rc.thread, "is working on: "+clip(step, 80))
		}
	case st.StatusTS != "":
		return true, rc.a.update(ctx, rc.channel, st.StatusTS, statusMsg("⏳ Working on it…"+st.Plan, rc.session, true).options()...)
	}
	return false, nil
}
