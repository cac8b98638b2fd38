package editor

import (
	"encoding/json"
	"strings"
	"unicode"

	"github.com/coder/acp-go-sdk"

	"github.com/switchboardhq/switchboard/core"
)

// textState joins the agent's text into the editor's message stream: the
// deltas of a response as they come, then only what its agent.message
// adds; a blank line between two messages.
type textState struct {
	streamed map[string]string // a response's deltas so far
	current  string            // the response being streamed
	open     bool              // the last update was agent text
}

// rest is what a response's final text adds to its streamed deltas. The
// engines trim the final text, so the deltas may hold whitespace it
// lacks; a stream the editor joined in the middle (a session/load) saw
// only the final text's end. Text that shares nothing with the deltas is
// a message of its own.
func (t *textState) rest(final, done string) string {
	if strings.HasPrefix(final, done) {
		return final[len(done):]
	}
	d := strings.TrimSpace(done)
	if d == "" {
		return t.separate(final)
	}
	if f := strings.TrimLeftFunc(final, unicode.IsSpace); strings.HasPrefix(f, d) {
		return f[len(d):]
	}
	if strings.HasSuffix(strings.TrimRightFunc(final, unicode.IsSpace), d) {
		return ""
	}
	return t.separate(final)
}

// translate turns e into the updates the editor shows. Called with s.mu
// held; it records the tool calls and confirmations it sees.
func (s *session) translate(e core.Event, live bool) []acp.SessionUpdate {
	switch e.Type {
	case core.TypeUserMessage:
		var b core.MessageBody
		if e.Level != core.LevelUser || e.Decode(&b) != nil || (live && s.posted[e.ID]) {
			return nil
		}
		if w := s.turn; live && w != nil && w.seq == 0 && s.isOurs(e, w) {
			return nil
		}
		s.text.open = false
		return []acp.SessionUpdate{acp.UpdateUserMessageText(b.Text)}
	case core.TypeAgentMessageDelta:
		var b core.MessageDeltaBody
		if !live || e.Decode(&b) != nil || b.Text == "" {
			return nil
		}
		text := b.Text
		if b.Response != s.text.current {
			text = s.text.separate(text)
			s.text.current = b.Response
		}
		s.text.streamed[b.Response] += b.Text
		s.text.open = true
		return []acp.SessionUpdate{acp.UpdateAgentMessageText(text)}
	case core.TypeAgentMessage:
		var b core.MessageBody
		if e.Decode(&b) != nil || b.Text == "" {
			return nil
		}
		if b.Kind == core.MessageKindThought {
			return []acp.SessionUpdate{acp.UpdateAgentThoughtText(b.Text)}
		}
		text := b.Text
		if done := s.text.streamed[s.text.current]; live && done != "" {
			text = s.text.rest(text, done)
		} else {
			text = s.text.separate(text)
		}
		delete(s.text.streamed, s.text.current)
		s.text.current = ""
		s.text.open = true
		if text == "" {
			return nil
		}
		return []acp.SessionUpdate{acp.UpdateAgentMessageText(text)}
	case core.TypeAgentToolUse, core.TypeAgentCustomToolUse:
		var b core.ToolUseBody
		if e.Decode(&b) != nil {
			return nil
		}
		c := &toolCall{id: b.ToolUseID, name: b.Name, custom: e.Type == core.TypeAgentCustomToolUse}
		if len(b.Input) > 0 {
			c.input = json.RawMessage(b.Input)
		}
		s.tools[c.id] = c
		if c.name == core.PlanTool {
			return nil // its agent.plan shows it
		}
		s.text.open = false
		status := acp.ToolCallStatusInProgress
		if c.custom {
			status = acp.ToolCallStatusPending
		}
		return []acp.SessionUpdate{acp.StartToolCall(acp.ToolCallId(c.id), c.name, acp.WithStartStatus(status), acp.WithStartRawInput(c.input))}
	case core.TypeAgentToolResult, core.TypeUserCustomToolResult:
		var b core.ToolResultBody
		if e.Decode(&b) != nil {
			return nil
		}
		if c := s.tools[b.ToolUseID]; c != nil && c.name == core.PlanTool {
			return nil
		}
		status := acp.ToolCallStatusCompleted
		if b.IsError {
			status = acp.ToolCallStatusFailed
		}
		s.text.open = false
		opts := []acp.ToolCallUpdateOpt{acp.WithUpdateStatus(status)}
		if b.Output != "" {
			opts = append(opts, acp.WithUpdateContent([]acp.ToolCallContent{acp.ToolContent(acp.TextBlock(b.Output))}))
		}
		return []acp.SessionUpdate{acp.UpdateToolCall(acp.ToolCallId(b.ToolUseID), opts...)}
	case core.TypeUserToolConfirmation:
		var b core.ToolConfirmationBody
		if e.Decode(&b) == nil {
			s.answered[b.ToolUseID] = b.Result
		}
		return nil
	case core.TypeAgentPlan:
		var b core.PlanBody
		if e.Decode(&b) != nil {
			return nil
		}
		entries := make([]acp.PlanEntry, len(b.Entries))
		for i, p := range b.Entries {
			entries[i] = acp.PlanEntry{Content: p.Content, Status: acp.PlanEntryStatus(p.Status), Priority: acp.PlanEntryPriority(p.Priority)}
		}
		s.text.open = false
		return []acp.SessionUpdate{acp.UpdatePlan(entries...)}
	case core.TypeError:
		var b core.ErrorBody
		if e.Decode(&b) != nil {
			return nil
		}
		text := s.text.separate("Error: " + b.Message)
		s.text.open = true
		return []acp.SessionUpdate{acp.UpdateAgentMessageText(text)}
	}
	return nil
}

// separate starts a new message after agent text with a blank line.
func (t *textState) separate(text string) string {
	if t.open {
		return "\n\n" + text
	}
	return text
}
