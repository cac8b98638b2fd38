package acpclient

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/switchboardhq/switchboard/core"
)

// recorder turns one prompt's session updates into log events, in the
// order they arrive. Text is coalesced per contiguous run: a run ended by
// a tool call or a plan is logged at progress level, the run the prompt
// ends with at user level (the answer), as the built-in loop logs its
// intermediate and final messages.
type recorder struct {
	// append logs events of the turn; its first error stops the turn.
	append    func(evs ...core.Event) error
	maxOutput int
	// terminalOutput, when set, gives the output of a terminal a tool
	// call shows.
	terminalOutput func(id string) string

	// deltaEvery, when set, logs the current run of text as it grows
	// (agent.message_delta, at most this often; the run's agent.message
	// still holds all of it), for platforms that stream answers.
	deltaEvery time.Duration
	now        func() time.Time

	mu      sync.Mutex
	text    strings.Builder // the current run of message text
	thought strings.Builder // the current run of reasoning
	// run names the current run of text in its deltas; logged is how much
	// of it they told, deltaAt when they last did.
	run     string
	logged  int
	deltaAt time.Time
	calls   map[acp.ToolCallId]*toolCall
	err     error
}

// toolCall is what the updates told of one of the agent's tool calls.
type toolCall struct {
	id        string // its tool_use_id in the log
	title     string
	kind      string
	locations []string
	rawInput  any
	content   []acp.ToolCallContent
	rawOutput any
	done      bool
}

func newRecorder(appendFn func(evs ...core.Event) error, maxOutput int) *recorder {
	if maxOutput <= 0 {
		maxOutput = 64 << 10
	}
	return &recorder{append: appendFn, maxOutput: maxOutput, calls: map[acp.ToolCallId]*toolCall{}, now: time.Now}
}

// failed is the first error appending met.
func (r *recorder) failed() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

func (r *recorder) log(evs ...core.Event) {
	if r.err != nil || len(evs) == 0 {
		return
	}
	r.err = r.append(evs...)
}

// update records one session update.
func (r *recorder) update(u acp.SessionUpdate) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case u.AgentMessageChunk != nil:
		r.flushThought()
		r.text.WriteString(blockText(u.AgentMessageChunk.Content))
		r.delta()
	case u.AgentThoughtChunk != nil:
		r.flushText(core.LevelProgress)
		r.thought.WriteString(blockText(u.AgentThoughtChunk.Content))
	case u.ToolCall != nil:
		r.flushAll()
		tc := u.ToolCall
		c := r.call(tc.ToolCallId, tc.Title, string(tc.Kind))
		c.title, c.kind = orElse(tc.Title, c.title), orElse(string(tc.Kind), c.kind)
		c.merge(tc.Locations, tc.RawInput, tc.Content, tc.RawOutput)
		r.closeIf(c, tc.Status)
	case u.ToolCallUpdate != nil:
		r.flushAll()
		tu := u.ToolCallUpdate
		title := ""
		if tu.Title != nil {
			title = *tu.Title
		}
		kind := ""
		if tu.Kind != nil {
			kind = string(*tu.Kind)
		}
		c := r.call(tu.ToolCallId, title, kind)
		c.title, c.kind = orElse(title, c.title), orElse(kind, c.kind)
		c.merge(tu.Locations, tu.RawInput, tu.Content, tu.RawOutput)
		if tu.Status != nil {
			r.closeIf(c, *tu.Status)
		}
	case u.Plan != nil:
		r.flushAll()
		entries := make([]core.PlanEntry, 0, len(u.Plan.Entries))
		for _, e := range u.Plan.Entries {
			entries = append(entries, core.PlanEntry{Content: e.Content, Status: string(e.Status), Priority: string(e.Priority)})
		}
		r.log(core.NewEvent(core.TypeAgentPlan, core.LevelProgress, core.ActorAgent, core.PlanBody{Entries: entries}))
	}
}

// permissionCall is the tool_use_id of the call a permission request is
// about, logging the call first when no update told of it yet.
func (r *recorder) permissionCall(tc acp.ToolCallUpdate) (id, title, kind string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.flushAll()
	t, kind := "", ""
	if tc.Title != nil {
		t = *tc.Title
	}
	if tc.Kind != nil {
		kind = string(*tc.Kind)
	}
	c := r.call(tc.ToolCallId, t, kind)
	c.kind = orElse(c.kind, kind)
	return c.id, c.title, c.kind
}

// end logs what the prompt left unlogged: the last run of text at level
// (user: the answer; progress when the turn only paused) and a result
// for each call still open.
func (r *recorder) end(why string, level core.Level) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.flushThought()
	r.flushText(level)
	for _, c := range r.calls {
		if !c.done {
			c.done = true
			r.log(core.NewEvent(core.TypeAgentToolResult, core.LevelProgress, core.ActorSystem,
				core.ToolResultBody{ToolUseID: c.id, Output: "not finished: " + why, IsError: true}))
		}
	}
}

// call is the call the agent names id, logged as agent.tool_use when it
// is new, with its kind when the agent told it.
func (r *recorder) call(id acp.ToolCallId, title, kind string) *toolCall {
	if c := r.calls[id]; c != nil {
		return c
	}
	c := &toolCall{id: core.NewID("tu"), title: title, kind: kind}
	r.calls[id] = c
	name := c.title
	if name == "" {
		name = string(id)
	}
	in := map[string]any{"acp_tool_call_id": string(id)}
	if kind != "" {
		in["kind"] = kind
	}
	input, _ := json.Marshal(in)
	r.log(core.NewEvent(core.TypeAgentToolUse, core.LevelProgress, core.ActorAgent,
		core.ToolUseBody{ToolUseID: c.id, Name: clip(name, 200), Input: input}))
	return c
}

func (c *toolCall) merge(locs []acp.ToolCallLocation, rawInput any, content []acp.ToolCallContent, rawOutput any) {
	for _, l := range locs {
		c.locations = append(c.locations, l.Path)
	}
	if rawInput != nil {
		c.rawInput = rawInput
	}
	if len(content) > 0 {
		c.content = content
	}
	if rawOutput != nil {
		c.rawOutput = rawOutput
	}
}

// closeIf logs the call's result once its status is final.
func (r *recorder) closeIf(c *toolCall, status acp.ToolCallStatus) {
	if c.done || (status != acp.ToolCallStatusCompleted && status != acp.ToolCallStatusFailed) {
		return
	}
	c.done = true
	r.log(core.NewEvent(core.TypeAgentToolResult, core.LevelProgress, core.ActorSystem,
		core.ToolResultBody{ToolUseID: c.id, Output: clip(r.summary(c), r.maxOutput), IsError: status == acp.ToolCallStatusFailed}))
}

// summary is what a finished call shows: its kind, title and locations,
// then its content (text, diffs, terminal output), else its raw output.
func (r *recorder) summary(c *toolCall) string {
	var sb strings.Builder
	if c.kind != "" {
		fmt.Fprintf(&sb, "[%s] ", c.kind)
	}
	sb.WriteString(c.title)
	if len(c.locations) > 0 {
		fmt.Fprintf(&sb, " (%s)", strings.Join(c.locations, ", "))
	}
	for _, ct := range c.content {
		sb.WriteString("\n")
		switch {
		case ct.Content != nil:
			sb.WriteString(blockText(ct.Content.Content))
		case ct.Diff != nil:
			d := ct.Diff
			old := ""
			if d.OldText != nil {
				old = *d.OldText
			}
			fmt.Fprintf(&sb, "edited %s: %d lines before, %d after\n%s", d.Path, lines(old), lines(d.NewText), clip(d.NewText, 4<<10))
		case ct.Terminal != nil:
			fmt.Fprintf(&sb, "terminal %s", ct.Terminal.TerminalId)
			if r.terminalOutput != nil {
				if out := r.terminalOutput(ct.Terminal.TerminalId); out != "" {
					sb.WriteString(":\n" + out)
				}
			}
		}
	}
	if len(c.content) == 0 && c.rawOutput != nil {
		if b, err := json.Marshal(c.rawOutput); err == nil {
			sb.WriteString("\n" + string(b))
		}
	}
	return sb.String()
}

func (r *recorder) flushAll() {
	r.flushThought()
	r.flushText(core.LevelProgress)
}

// delta logs the text the current run added since its last delta, once
// deltaEvery has passed since then (the first chunk of a run only starts
// the clock: a short run arrives whole, as its message).
func (r *recorder) delta() {
	if r.deltaEvery <= 0 {
		return
	}
	now := r.now()
	if r.run == "" {
		r.run, r.logged, r.deltaAt = core.NewID("resp"), 0, now
		return
	}
	if now.Sub(r.deltaAt) < r.deltaEvery || r.text.Len() == r.logged {
		return
	}
	text := r.text.String()[r.logged:]
	r.logged, r.deltaAt = r.text.Len(), now
	r.log(core.NewEvent(core.TypeAgentMessageDelta, core.LevelProgress, core.ActorAgent, core.MessageDeltaBody{Response: r.run, Text: text}))
}

func (r *recorder) flushText(level core.Level) {
	s := strings.TrimSpace(r.text.String())
	r.text.Reset()
	r.run, r.logged = "", 0
	if s == "" {
		return
	}
	r.log(core.NewEvent(core.TypeAgentMessage, level, core.ActorAgent, core.MessageBody{Text: s}))
}

func (r *recorder) flushThought() {
	s := strings.TrimSpace(r.thought.String())
	r.thought.Reset()
	if s == "" {
		return
	}
	r.log(core.NewEvent(core.TypeAgentMessage, core.LevelProgress, core.ActorAgent, core.MessageBody{Text: s, Kind: core.MessageKindThought}))
}

// blockText is the text a content block stands for.
func blockText(b acp.ContentBlock) string {
	switch {
	case b.Text != nil:
		return b.Text.Text
	case b.Image != nil:
		return "[image " + b.Image.MimeType + "]"
	case b.Audio != nil:
		return "[audio]"
	case b.ResourceLink != nil:
		return "[" + b.ResourceLink.Name + "](" + b.ResourceLink.Uri + ")"
	case b.Resource != nil:
		if b.Resource.Resource.TextResourceContents != nil {
			return b.Resource.Resource.TextResourceContents.Text
		}
		return "[resource]"
	}
	return ""
}

func orElse(s, dflt string) string {
	if s == "" {
		return dflt
	}
	return s
}

func lines(s string) int {
	if s == "" {
		return 0
	}
	return strings.Count(strings.TrimSuffix(s, "\n"), "\n") + 1
}

// clip cuts s to at most n bytes (on a rune boundary), saying how much
// was left out.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… (%d bytes more)", len(s)-cut)
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
