package harness

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// Context is a model context derived from a log.
type Context struct {
	System   string
	Messages []core.Message
	// Compacted is true when the context starts from a summary.
	Compacted bool
	// LastSeq is the seq of the last event the context covers.
	LastSeq uint64

	// lastEnd is how the last turn read so far ended, and lastError the
	// error it logged, for a user.retry's note.
	lastEnd   core.Reason
	lastError string
	// fetched are the attachments of messages as a turn fetched them,
	// by the message's seq (core.FetchedAttachments).
	fetched map[uint64][]core.Attachment
	// blockBytes is what EstimateTokens counts of the messages, and
	// attachedFrom one more than the index of the first message with an
	// attachment block (0: none): add keeps both, so that a step of a
	// long conversation walks only what is new.
	blockBytes   int
	attachedFrom int
}

// ending says how a turn that ended with r (and err, for an error) ended,
// as the retry note reads it.
func ending(r core.Reason, err string) string {
	switch r {
	case core.ReasonError:
		if err == "" {
			return "failed with an error"
		}
		return "failed with this error: " + err
	case core.ReasonCanceled:
		return "was stopped by a person"
	case core.ReasonDeadlineExceeded:
		return "ran out of its time limit"
	case core.ReasonMaxSteps:
		return "reached its limit of steps"
	case "":
		return "ended"
	}
	return "ended (" + string(r) + ")"
}

const summaryPreamble = "Earlier parts of this conversation were compacted. Summary of everything before this point:\n\n"

const interruptNote = "[The person interrupted the previous turn.]"

// retryNote asks the model to run a turn that failed or was stopped
// again: %s is how it ended. What it did before stands (its tool calls
// are above with their results) and is not to be done twice.
const retryNote = "[The person asked to retry the previous turn, which %s. Continue the work from where it stopped: " +
	"the tool calls above already ran, and their effects (messages sent, comments posted, branches pushed) stand; do not repeat them.]"

// sandboxResetNote tells the model that its sandbox starts afresh: files
// it made or changed before are gone.
const sandboxResetNote = "[The sandbox was reset (%s): files from before this point are gone; the workspace starts empty.]"

// Derive builds a model context from a session's events. Only events after
// the last session.compacted count; the summary stands in for the rest.
// Instructions (system messages of kind core.MessageKindInstructions)
// extend the system prompt wherever they are in the log, so compaction
// never drops them.
func Derive(system string, events []core.Event) (*Context, error) {
	d, err := derive(system, events)
	if err != nil {
		return nil, err
	}
	return d.mc, nil
}

// derivation is a context with what extending it by later events needs:
// the calls still open since the last compaction (staleAnswers).
type derivation struct {
	mc   *Context
	open openSet
}

// derive is Derive, keeping the state that extend carries on from.
func derive(system string, events []core.Event) (*derivation, error) {
	start := 0
	system, err := withInstructions(system, events)
	if err != nil {
		return nil, err
	}
	fetched, err := core.FetchedAttachments(events)
	if err != nil {
		return nil, err
	}
	d := &derivation{mc: &Context{System: system, fetched: fetched}, open: openSet{}}
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Type == core.TypeCompacted {
			var b core.CompactedBody
			if err := events[i].Decode(&b); err != nil {
				return nil, err
			}
			d.mc.add(core.RoleUser, core.Block{Type: core.BlockText, Text: summaryPreamble + b.Summary})
			d.mc.Compacted = true
			start = i + 1
			break
		}
	}
	for _, e := range events[start:] {
		if err := d.step(e); err != nil {
			return nil, err
		}
	}
	if n := len(events); n > 0 {
		d.mc.LastSeq = events[n-1].Seq
	}
	return d, nil
}

// extendable reports whether tail, the events after those d covers, can
// be added to d: a compaction restarts the context and fetched
// attachments change messages already in it, so either needs a full
// derivation.
func extendable(tail []core.Event) bool {
	for _, e := range tail {
		if e.Type == core.TypeCompacted || e.Type == core.TypeAttachmentsFetched {
			return false
		}
	}
	return true
}

// extend adds tail, the events after those d covers, as derive over the
// whole log would have; tail must be extendable.
func (d *derivation) extend(tail []core.Event) error {
	if n := len(d.mc.Messages); n > 0 {
		// The last message's blocks may be shared with a context handed
		// out before; adding to it must not write into them.
		last := &d.mc.Messages[n-1]
		last.Content = slices.Clip(last.Content)
	}
	for _, e := range tail {
		if e.Type == core.TypeUserMessage && e.Actor == core.ActorSystem {
			instr, err := withInstructions("", []core.Event{e})
			if err != nil {
				return err
			}
			if instr != "" {
				if d.mc.System != "" {
					d.mc.System += "\n\n"
				}
				d.mc.System += instr
			}
		}
		if err := d.step(e); err != nil {
			return err
		}
	}
	if n := len(tail); n > 0 {
		d.mc.LastSeq = tail[n-1].Seq
	}
	return nil
}

// step adds one event after the last compaction, leaving out answers to
// calls that wait for none (staleAnswers).
func (d *derivation) step(e core.Event) error {
	if _, stale, err := d.open.see(e); err != nil || stale {
		return err
	}
	return d.mc.addEvent(e)
}

// withInstructions appends the log's instructions to the agent's system
// prompt, in log order, each after a blank line.
func withInstructions(system string, events []core.Event) (string, error) {
	var sb strings.Builder
	sb.WriteString(system)
	for _, e := range events {
		if e.Type != core.TypeUserMessage || e.Actor != core.ActorSystem {
			continue
		}
		var b core.MessageBody
		if err := e.Decode(&b); err != nil {
			return "", err
		}
		if b.Kind != core.MessageKindInstructions || strings.TrimSpace(b.Text) == "" {
			continue
		}
		if sb.Len() > 0 {
			sb.WriteString("\n\n")
		}
		sb.WriteString(strings.TrimSpace(b.Text))
	}
	return sb.String(), nil
}

func (mc *Context) addEvent(e core.Event) error {
	switch e.Type {
	case core.TypeUserMessage:
		var b core.MessageBody
		if err := e.Decode(&b); err != nil {
			return err
		}
		if b.Kind == core.MessageKindInstructions && e.Actor == core.ActorSystem {
			return nil // in the system prompt (withInstructions)
		}
		mc.add(core.RoleUser, core.Block{Type: core.BlockText, Text: b.Text})
		if got, ok := mc.fetched[e.Seq]; ok {
			b.Attachments = got
		}
		for i := range b.Attachments {
			// Stands for the attachment until the turn reads it
			// (Attachments.resolve); a note of it until then.
			a := b.Attachments[i]
			mc.add(core.RoleUser, core.Block{Type: core.BlockText, Text: attachmentLabel(a) + "]", Attachment: &a})
		}
	case core.TypeUserInterrupt:
		mc.add(core.RoleUser, core.Block{Type: core.BlockText, Text: interruptNote})
	case core.TypeTurnStarted:
		mc.lastError = ""
	case core.TypeError:
		var b core.ErrorBody
		if err := e.Decode(&b); err != nil {
			return err
		}
		mc.lastError = b.Message
	case core.TypeTurnCompleted:
		var b core.TurnCompletedBody
		if err := e.Decode(&b); err != nil {
			return err
		}
		mc.lastEnd = b.YieldReason
	case core.TypeUserRetry:
		mc.add(core.RoleUser, core.Block{Type: core.BlockText, Text: fmt.Sprintf(retryNote, ending(mc.lastEnd, mc.lastError))})
	case core.TypeSandboxReset:
		var b core.SandboxResetBody
		if err := e.Decode(&b); err != nil {
			return err
		}
		mc.add(core.RoleUser, core.Block{Type: core.BlockText, Text: fmt.Sprintf(sandboxResetNote, b.Reason)})
	case core.TypeUserCustomToolResult:
		var b core.CustomToolResultBody
		if err := e.Decode(&b); err != nil {
			return err
		}
		mc.add(core.RoleUser, core.Block{Type: core.BlockToolResult, ToolUseID: b.ToolUseID, Output: b.Output, IsError: b.IsError})
	case core.TypeAgentMessage:
		var b core.MessageBody
		if err := e.Decode(&b); err != nil {
			return err
		}
		// A tool's message (say, ask) is already in the context as the
		// tool call's input; the system's budget note is not the model's.
		if b.ToolUseID == "" && b.Text != "" && b.Kind != core.MessageKindBudget && b.Kind != core.MessageKindNote {
			mc.add(core.RoleAssistant, core.Block{Type: core.BlockText, Text: b.Text})
		}
	case core.TypeAgentToolUse, core.TypeAgentCustomToolUse:
		var b core.ToolUseBody
		if err := e.Decode(&b); err != nil {
			return err
		}
		mc.add(core.RoleAssistant, core.Block{Type: core.BlockToolUse, ToolUseID: b.ToolUseID, Name: b.Name, Input: b.Input})
	case core.TypeAgentToolResult:
		var b core.ToolResultBody
		if err := e.Decode(&b); err != nil {
			return err
		}
		mc.add(core.RoleUser, core.Block{Type: core.BlockToolResult, ToolUseID: b.ToolUseID, Output: b.Output, IsError: b.IsError})
	}
	return nil
}

// add appends a block, merging into the last message when the role is the
// same: both wire formats want roles to alternate. Tool results go before
// any text of the same user message, as Anthropic requires.
func (mc *Context) add(role core.Role, b core.Block) {
	mc.blockBytes += blockBytes(b)
	n := len(mc.Messages)
	if n == 0 || mc.Messages[n-1].Role != role {
		mc.Messages = append(mc.Messages, core.Message{Role: role, Content: []core.Block{b}})
		n++
	} else {
		mc.addToLast(b)
	}
	if b.Attachment != nil && mc.attachedFrom == 0 {
		mc.attachedFrom = n
	}
}

// addToLast adds b to the last message, tool results before its other
// blocks.
func (mc *Context) addToLast(b core.Block) {
	last := &mc.Messages[len(mc.Messages)-1]
	if b.Type == core.BlockToolResult {
		i := 0
		for i < len(last.Content) && last.Content[i].Type == core.BlockToolResult {
			i++
		}
		last.Content = append(last.Content[:i], append([]core.Block{b}, last.Content[i:]...)...)
		return
	}
	last.Content = append(last.Content, b)
}

// EstimateTokens is a cheap, deliberately generous estimate (four bytes a
// token) of what mc costs the model: its system prompt and what each
// block says, counted as the blocks were added.
func EstimateTokens(mc *Context) int {
	return (len(mc.System)+mc.blockBytes)/4 + 1
}

// blockBytes is what EstimateTokens counts of one block.
func blockBytes(b core.Block) int {
	return len(b.Text) + len(b.Name) + len(b.Input) + len(b.Output) + 16
}

// shouldCompact reports whether mc passes the compaction fraction of the
// window, for an agent that lets the loop compact. A context that is only
// a summary is never compacted again.
func (h *Default) shouldCompact(c *Cycle, mc *Context) bool {
	if c.ContextWindow <= 0 || c.CompactFraction <= 0 || !c.Agent.Runtime.Compacts() {
		return false
	}
	if mc.Compacted && len(mc.Messages) <= 1 {
		return false
	}
	return float64(EstimateTokens(mc)) > c.CompactFraction*float64(c.ContextWindow)
}

const compactPrompt = `Summarise this conversation so that you can continue the work from the summary alone: the person's requests (the latest one verbatim), decisions made, facts learned, what was done with which tools and with what result, open questions, and the next steps. Answer with the summary only; do not call tools.`

// compact asks the model for a summary and logs it as session.compacted;
// later contexts start from the summary instead of the events before it.
func (h *Default) compact(ctx context.Context, c *Cycle, mc *Context, turnID string) (core.Usage, error) {
	req := core.ModelRequest{Model: c.Agent.Model, System: mc.System, Tools: c.Tools.Defs()}
	req.Messages = append(req.Messages, mc.Messages...)
	prompt := core.Block{Type: core.BlockText, Text: compactPrompt}
	if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == core.RoleUser {
		last := req.Messages[n-1]
		last.Content = append(append([]core.Block(nil), last.Content...), prompt)
		req.Messages[n-1] = last
	} else {
		req.Messages = append(req.Messages, core.Message{Role: core.RoleUser, Content: []core.Block{prompt}})
	}
	resp, err := h.generate(ctx, c, req)
	if err != nil {
		return core.Usage{}, fmt.Errorf("compact: %w", err)
	}
	var sb strings.Builder
	for _, b := range resp.Content {
		if b.Type == core.BlockText {
			sb.WriteString(b.Text)
		}
	}
	summary := strings.TrimSpace(sb.String())
	if summary == "" {
		return resp.Usage, fmt.Errorf("compact: the model returned an empty summary")
	}
	ev := core.NewEvent(core.TypeCompacted, core.LevelInternal, core.ActorSystem, core.CompactedBody{Summary: summary})
	if _, err := c.Log.Append(context.WithoutCancel(ctx), c.SessionID, core.AppendRequest{Epoch: c.Epoch, TurnID: turnID, Events: []core.Event{ev}}); err != nil {
		return resp.Usage, fmt.Errorf("log compaction: %w", err)
	}
	return resp.Usage, nil
}
