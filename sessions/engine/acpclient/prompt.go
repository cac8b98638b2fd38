package acpclient

import (
	"fmt"
	"strings"

	acp "github.com/coder/acp-go-sdk"

	"github.com/switchboardhq/switchboard/core"
)

// maxSummary bounds the log so far that a new ACP session of a session
// with history is told.
const maxSummary = 32 << 10

// promptBlocks is the prompt of turn turnID. An ACP agent takes no input
// mid-turn, so a turn's prompt holds what the previous turn took after it
// started (steering that waited) and what this turn took when it started.
// A new ACP session is first told the agent's instructions, and, when the
// session has history its agent never saw (how is RuntimeSummary), the
// log so far.
// attach turns a message's attachment into what the agent is given.
func promptBlocks(a *core.Agent, events []core.Event, turnID, how, note string, attach func(core.Attachment) []acp.ContentBlock) []acp.ContentBlock {
	started, prevStarted, prevCompleted := len(events), -1, -1
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Type == core.TypeTurnStarted && events[i].TurnID == turnID {
			started = i
			break
		}
	}
	for i := started - 1; i >= 0; i-- {
		if events[i].Type == core.TypeTurnCompleted && prevCompleted < 0 {
			prevCompleted = i
		}
		if events[i].Type == core.TypeTurnStarted {
			prevStarted = i
			break
		}
	}
	var blocks []acp.ContentBlock
	text := func(s string) {
		if s = strings.TrimSpace(s); s != "" {
			blocks = append(blocks, acp.TextBlock(s))
		}
	}
	if how == core.RuntimeNew || how == core.RuntimeSummary {
		text(instructions(a, events))
	}
	if how == core.RuntimeSummary {
		// All before this prompt but its own inputs, the previous turn's
		// answer included.
		text(transcript(events[:started], prevStarted))
	}
	text(note)
	if note != "" && (how == "" || how == core.RuntimeLoaded) {
		// A resumed turn's agent has its request already.
		return blocks
	}
	titles := map[string]string{}
	fetched, _ := core.FetchedAttachments(events) // a body that does not decode leaves the message's own
	for i, e := range events[:started] {
		if e.Type == core.TypeAgentToolUse {
			var b core.ToolUseBody
			if e.Decode(&b) == nil {
				titles[b.ToolUseID] = b.Name
			}
		}
		if i <= prevStarted {
			continue
		}
		switch e.Type {
		case core.TypeUserMessage:
			var b core.MessageBody
			if e.Decode(&b) != nil || b.Kind == core.MessageKindInstructions && e.Actor == core.ActorSystem {
				continue
			}
			if e.Actor == core.ActorSystem {
				text("[Context from where this session started]\n" + b.Text)
				continue
			}
			text(b.Text)
			if got, ok := fetched[e.Seq]; ok {
				b.Attachments = got
			}
			for _, at := range b.Attachments {
				blocks = append(blocks, attach(at)...)
			}
		case core.TypeUserRetry:
			if i > prevCompleted {
				text("[The person asked to retry the previous turn. Carry on from where it stopped; do not repeat actions whose effects stand.]")
			}
		case core.TypeUserToolConfirmation:
			if i <= prevCompleted {
				continue // answered while the turn that asked ran
			}
			var b core.ToolConfirmationBody
			if e.Decode(&b) != nil {
				continue
			}
			verb, next := "denied", "Do not run it; find another way or say what you need."
			if b.Result == "allow" {
				verb, next = "allowed", "Run it now."
			}
			s := fmt.Sprintf("[You asked permission for %q; the request expired before the answer came, so it was not run. The person has now %s it. %s]", titles[b.ToolUseID], verb, next)
			if b.Message != "" {
				s += "\n" + b.Message
			}
			text(s)
		}
	}
	if len(blocks) == 0 {
		blocks = append(blocks, acp.TextBlock("[No new message: carry on.]"))
	}
	return blocks
}

// instructions are the agent's system prompt and the session's
// instructions (skills, repository instructions), for a new ACP session:
// ACP has no system prompt of its own.
func instructions(a *core.Agent, events []core.Event) string {
	parts := []string{}
	if s := strings.TrimSpace(a.System); s != "" {
		parts = append(parts, s)
	}
	for _, e := range events {
		if e.Type != core.TypeUserMessage || e.Actor != core.ActorSystem {
			continue
		}
		var b core.MessageBody
		if e.Decode(&b) == nil && b.Kind == core.MessageKindInstructions && strings.TrimSpace(b.Text) != "" {
			parts = append(parts, strings.TrimSpace(b.Text))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "[Instructions for this session]\n" + strings.Join(parts, "\n\n")
}

// transcript is what people and the agent said in events, the end of it
// when it is long, for an agent that starts a new ACP session of a
// session with history.
// Inputs after index from are left out: the prompt holds them.
func transcript(events []core.Event, from int) string {
	var sb strings.Builder
	for i, e := range events {
		var b core.MessageBody
		switch {
		case e.Type == core.TypeUserMessage && i > from:
		case e.Type == core.TypeUserMessage && e.Actor != core.ActorSystem && e.Decode(&b) == nil:
			fmt.Fprintf(&sb, "Person: %s\n\n", b.Text)
		case e.Type == core.TypeAgentMessage && e.Level == core.LevelUser && e.Decode(&b) == nil && b.Kind == "":
			fmt.Fprintf(&sb, "You: %s\n\n", b.Text)
		case e.Type == core.TypeError:
			var eb core.ErrorBody
			if e.Decode(&eb) == nil {
				fmt.Fprintf(&sb, "(error: %s)\n\n", eb.Message)
			}
		}
	}
	s := strings.TrimSpace(sb.String())
	if s == "" {
		return ""
	}
	if len(s) > maxSummary {
		cut := len(s) - maxSummary
		for cut < len(s) && !utf8Start(s[cut]) {
			cut++
		}
		s = "…" + s[cut:]
	}
	return "[This conversation began before your session here. What was said so far:]\n\n" + s
}
