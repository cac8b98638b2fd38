package editor

import (
	"fmt"

	"github.com/coder/acp-go-sdk"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

// The editor's options for a tool confirmation.
const (
	optionAllow = "allow"
	optionDeny  = "deny"
)

// askPermission puts a tool confirmation the session waits on to the
// editor and sends its answer to the gateway. Whoever answers first wins:
// when the thread (or the console, or another editor) answered before,
// the editor's answer changes nothing and the editor is told so.
func (s *session) askPermission(c *toolCall) {
	title := c.name
	req := acp.RequestPermissionRequest{
		SessionId: acp.SessionId(s.id),
		ToolCall:  acp.ToolCallUpdate{ToolCallId: acp.ToolCallId(c.id), Title: &title, Status: acp.Ptr(acp.ToolCallStatusPending), RawInput: c.input},
		Options: []acp.PermissionOption{
			{OptionId: optionAllow, Name: "Allow", Kind: acp.PermissionOptionKindAllowOnce},
			{OptionId: optionDeny, Name: "Deny", Kind: acp.PermissionOptionKindRejectOnce},
		},
	}
	resp, err := s.a.peer().RequestPermission(s.ctx, req)
	if err != nil {
		if s.ctx.Err() == nil {
			s.a.o.Log.Warn("permission request failed", "session", s.id, "tool_use_id", c.id, "err", err)
		}
		return
	}
	sel := resp.Outcome.Selected
	if sel == nil {
		return // the editor withdrew the question; the thread may still answer
	}
	result := "deny"
	if sel.OptionId == optionAllow {
		result = "allow"
	}
	if prior := s.answeredBefore(c.id); prior != "" {
		s.send(acp.UpdateAgentMessageText(fmt.Sprintf("\n\nThe call to %s was already answered elsewhere (%s): your %s changed nothing.", c.name, prior, result)))
		s.a.o.Log.Info("confirmation already answered", "session", s.id, "tool_use_id", c.id, "answer", prior)
		return
	}
	in := client.Input{Type: core.TypeUserToolConfirmation, ToolUseID: c.id, Result: result}
	if _, err := s.a.o.Gateway.SendEvents(s.ctx, s.id, []client.Input{in}, "editor-confirm-"+s.id+"-"+c.id); err != nil {
		s.send(acp.UpdateAgentMessageText("\n\nYour answer did not reach the gateway: " + message(s.a.rpcError("confirm "+c.name, err))))
	}
}

// answeredBefore is the answer the session already holds for the call:
// in its log, or queued and not yet taken.
func (s *session) answeredBefore(id string) string {
	s.mu.Lock()
	prior := s.answered[id]
	s.mu.Unlock()
	if prior != "" {
		return prior
	}
	queued, err := s.a.o.Gateway.Pending(s.ctx, s.id)
	if err != nil {
		return ""
	}
	for _, e := range queued {
		var b core.ToolConfirmationBody
		if e.Type == core.TypeUserToolConfirmation && e.Decode(&b) == nil && b.ToolUseID == id {
			return b.Result
		}
	}
	return ""
}
