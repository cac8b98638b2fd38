package editor

import (
	"context"
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
	ctx, cancel := context.WithCancel(s.ctx)
	s.mu.Lock()
	s.asking[c.id] = cancel
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.asking, c.id)
		s.mu.Unlock()
		cancel()
	}()
	resp, err := s.a.peer().RequestPermission(ctx, req)
	if err != nil {
		if ctx.Err() == nil {
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

// withdraw cancels the editor's open permission request for a call that
// e shows answered (its confirmation or its result, logged from the
// thread, the console or another editor): the SDK withdraws the request,
// and the editor is told how it was answered. Called with s.mu held.
func (s *session) withdraw(e core.Event) []acp.SessionUpdate {
	var id, how string
	switch e.Type {
	case core.TypeUserToolConfirmation:
		var b core.ToolConfirmationBody
		if e.Decode(&b) != nil {
			return nil
		}
		id, how = b.ToolUseID, "Answered elsewhere: "+b.Result+"."
	case core.TypeAgentToolResult:
		var b core.ToolResultBody
		if e.Decode(&b) != nil {
			return nil
		}
		id = b.ToolUseID
	default:
		return nil
	}
	cancel := s.asking[id]
	if cancel == nil {
		return nil
	}
	cancel()
	delete(s.asking, id)
	if how == "" {
		return nil // its tool_call_update says how it ended
	}
	return []acp.SessionUpdate{acp.UpdateToolCall(acp.ToolCallId(id), acp.WithUpdateContent([]acp.ToolCallContent{acp.ToolContent(acp.TextBlock(how))}))}
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
