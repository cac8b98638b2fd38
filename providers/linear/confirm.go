package linear

import (
	"context"
	"slices"
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// Questions the sink asks in the agent session: a tool call waiting for a
// person (an ask-first tool, an ACP agent's permission request) and a
// budget pause, as elicitations whose select options are the answers a
// prompt gives (intake.go reads them back).

// The answers to a confirmation, as a prompt gives them.
const (
	answerAllow = "allow"
	answerDeny  = "deny"
)

// confirmOptions are a confirmation's choices: Linear sends a choice back
// as a prompt with its value.
var confirmOptions = []option{{Label: "Allow", Value: answerAllow}, {Label: "Deny", Value: answerDeny}}

// answerOf reads a prompt that answers a confirmation: allow or deny
// (any case, a closing . or ! allowed), or an option's label.
func answerOf(text string) (string, bool) {
	t := strings.TrimRight(strings.TrimSpace(text), ".!")
	for _, o := range confirmOptions {
		if strings.EqualFold(t, o.Value) || strings.EqualFold(t, o.Label) {
			return o.Value, true
		}
	}
	return "", false
}

// ask posts the question for the calls ids that a turn waits on and that
// were not asked yet: one elicitation per wait, Allow and Deny as its
// options when a person can answer (a custom tool's result comes from the
// application, not from Linear). inTurn: the turn waits inside itself
// (an ACP agent's permission request). Either way a message queues
// beside the question (an aside), which stays open.
func (rc *render) ask(ctx context.Context, seq uint64, ids []string, inTurn bool) (bool, error) {
	var confirm, custom []toolRef
	var asked []string
	for _, id := range ids {
		t, ok := rc.st.Tools[id]
		switch {
		case ok && t.Asked:
			continue
		case !ok:
			t = toolRef{Name: "a tool"}
		}
		if t.Custom {
			custom = append(custom, t)
		} else {
			confirm = append(confirm, t)
		}
		asked = append(asked, id)
	}
	if len(asked) == 0 {
		return false, nil
	}
	var parts []string
	if len(confirm) > 0 {
		parts = append(parts, confirmText(confirm))
	}
	for _, t := range custom {
		parts = append(parts, "Waiting for the application to return the result of `"+t.Name+"`: there is nothing to answer here.")
	}
	var sel []option
	if len(confirm) > 0 {
		sel = confirmOptions
	}
	if err := rc.answer(ctx, "elicitation", seq, strings.Join(parts, "\n\n"), sel...); err != nil {
		return true, err
	}
	for _, id := range asked {
		if t, ok := rc.st.Tools[id]; ok {
			t.Asked = true
			rc.st.Tools[id] = t
		}
	}
	if inTurn {
		rc.st.Parked = append(rc.st.Parked, asked...)
	}
	return true, nil
}

// confirmText asks a person to allow or deny calls, each with its
// arguments, and says what another message does.
func confirmText(calls []toolRef) string {
	var b strings.Builder
	b.WriteString("**Allow this?** I want to run ")
	for i, t := range calls {
		if i > 0 {
			b.WriteString("\n\nand ")
		}
		b.WriteString("`" + t.Name + "`")
		if t.Input != "" && t.Input != "{}" {
			b.WriteString(" with:\n```\n" + t.Input + "\n```")
		}
	}
	b.WriteString("\n\nReply **allow** or **deny** (a member of the workspace). Anything else you write reaches me once this is answered; the question stays open.")
	return b.String()
}

// waitingAck answers a message that arrived while the turn waits for a
// confirmation: the message is queued, and the question stays open.
const waitingAck = "Got your message: I will read it once the question above is answered. Reply **allow** or **deny** to it."

// budgetOptions are the answers to a budget pause: budget commands that
// raise the budget that paused the turn (read from the status change
// logged with the note), which a budget approver's prompt runs.
func (rc *render) budgetOptions(ctx context.Context, seq uint64) ([]option, error) {
	evs, err := rc.p.cfg.Sessions.Events(ctx, rc.session, seq, 5)
	if err != nil {
		return nil, err
	}
	for _, e := range evs {
		var b core.StatusChangedBody
		if e.Type != core.TypeStatusChanged || e.Decode(&b) != nil || b.PendingAction == nil || b.PendingAction.Budget == nil {
			continue
		}
		var out []option
		for _, n := range []float64{2, 4} {
			cmd := core.RaiseCommand(b.PendingAction.Budget, n)
			out = append(out, option{Label: cmd, Value: cmd})
		}
		return out, nil
	}
	return nil, nil
}

// keepAsked keeps, of the turn's calls, those still waiting (ids): the
// turn that resumes after the answer runs them, and shows their results.
func (rc *render) keepAsked(ids []string) {
	for id := range rc.st.Tools {
		if !slices.Contains(ids, id) {
			delete(rc.st.Tools, id)
		}
	}
}
