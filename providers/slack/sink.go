package slack

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	slackapi "github.com/slack-go/slack"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/providers/output"
)

// renderer is the Slack part of the output sink (providers/output drives
// it from the log, one event at a time, and saves its state).
//
// Exactly once: a post is not idempotent, so before each one the renderer
// saves an intent (a key unique to the session, event and part) and
// posts with that key in the message's metadata. After a crash, an intent
// found unconfirmed is looked up in the thread (conversations.replies with
// metadata) before anything is posted again: found, it counts as done;
// not found, it is posted. Reactions (already_reacted), status updates and
// edits are idempotent and are simply done again.
type renderer struct{ p *Provider }

var (
	_ output.Closer = (*renderer)(nil)
	_ output.Fencer = (*renderer)(nil)
)

// sinkState is the renderer's part of the sink position.
type sinkState struct {
	// Mode is how progress shows: "status" (assistant.threads.setStatus)
	// or "message" (a status message edited in place), decided at the
	// first turn by whether the workspace allows the status.
	Mode     string `json:"mode,omitempty"`
	StatusTS string `json:"status_ts,omitempty"` // this turn's status message
	// StatusAt (unix ms) throttles progress updates.
	StatusAt int64          `json:"status_at,omitempty"`
	Intent   *output.Intent `json:"intent,omitempty"`
	// PartSeq and Parts: of the event at PartSeq, Parts messages are
	// posted (a long answer is several).
	PartSeq uint64             `json:"part_seq,omitempty"`
	Parts   int                `json:"parts,omitempty"`
	Tools   map[string]toolRef `json:"tools,omitempty"` // this turn's calls
	// Plan is the turn's plan as a checklist for the status message.
	Plan string `json:"plan,omitempty"`

	// With the agent setting: the turn's streamed message, the person the
	// stream is for (the last Slack input's author) and the agent
	// session's title and processing mark.
	Stream     *streamState `json:"stream,omitempty"`
	LastStream string       `json:"last_stream,omitempty"`
	Asker      string       `json:"asker,omitempty"`
	AskerTeam  string       `json:"asker_team,omitempty"`
	Title      string       `json:"title,omitempty"`
	Processing bool         `json:"processing,omitempty"`
}

// toolRef is what the sink remembers of a tool call until the turn ends.
type toolRef struct {
	Name   string `json:"name"`
	Input  string `json:"input,omitempty"`
	Custom bool   `json:"custom,omitempty"`
	// Asked: its Allow and Deny were posted while the turn waited in
	// itself (an ACP agent's permission request), not to post again.
	Asked bool `json:"asked,omitempty"`
}

// metadataType marks the gateway's posts, so a post whose confirmation a
// crash lost can be found again.
const metadataType = "switchboard_output"

const eyes = "eyes"

// render is one Render call's context.
type render struct {
	p       *Provider
	t       *output.Thread
	st      *sinkState
	a       *api
	session string
	channel string
	thread  string
	seq     uint64
}

// Received reacts 👀 to inputs that came from Slack, ahead of the turn:
// in the thread of the session's origin, or of the link they came from.
func (r *renderer) Received(ctx context.Context, s *core.Session, inputs []core.Event) error {
	forget := func() {
		for _, e := range inputs {
			r.p.forgetReaction(e.ID) // the log's copy will try again
		}
	}
	for _, e := range inputs {
		ref := slackRef(e)
		if ref == nil || !r.p.firstReaction(e.ID) {
			continue
		}
		key := e.SourceKey
		if key == "" && s.Origin != nil {
			key = s.Origin.Key
		}
		in, err := r.p.keyInstallation(ctx, s, key)
		if err != nil {
			forget()
			return err
		}
		a, err := r.p.client(ctx, in)
		if err == nil {
			err = a.react(ctx, ref.Channel, ref.TS, eyes)
		}
		if err != nil {
			forget()
			return err
		}
	}
	return nil
}

func (p *Provider) forgetReaction(id string) {
	p.mu.Lock()
	delete(p.reacted, id)
	p.mu.Unlock()
}

// firstReaction reports whether this process has not reacted to an input
// yet; the set is bounded, and forgetting only costs an already_reacted.
func (p *Provider) firstReaction(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.reacted[id] {
		return false
	}
	if len(p.reacted) > 10_000 {
		p.reacted = map[string]bool{}
	}
	p.reacted[id] = true
	return true
}

func slackRef(e core.Event) *msgRef {
	if e.Type != core.TypeUserMessage {
		return nil
	}
	var b inputBody
	if e.Decode(&b) != nil || b.Slack == nil || b.Slack.TS == "" {
		return nil
	}
	return b.Slack
}

// rendered are the event types the renderer acts on.
var rendered = map[string]bool{
	core.TypeUserMessage: true, core.TypeTurnStarted: true, core.TypeAgentToolUse: true, core.TypeAgentCustomToolUse: true,
	core.TypeAgentMessage: true, core.TypeError: true, core.TypeTurnCompleted: true, core.TypeStatusChanged: true,
	core.TypeAgentMessageDelta: true, core.TypeAgentToolResult: true, core.TypeAgentPlan: true,
}

// Render renders one logged event into the session's thread.
func (r *renderer) Render(ctx context.Context, t *output.Thread, e core.Event) (bool, error) {
	key := t.AnswerKey()
	if !rendered[e.Type] || key == "" {
		return false, nil
	}
	if e.Type == core.TypeUserMessage && slackRef(e) == nil {
		return false, nil
	}
	st := stateOf(t)
	rc, err := r.newRender(ctx, t.Session, key, &st)
	if err != nil {
		return false, err
	}
	rc.t, rc.seq = t, e.Seq
	acted, err := rc.event(ctx, e)
	if raw, merr := json.Marshal(st); merr == nil {
		t.State = raw
	}
	return acted, classify(err)
}

// stateOf is the renderer's state saved with t's position; a state that
// does not decode starts afresh.
func stateOf(t *output.Thread) sinkState {
	var st sinkState
	if len(t.State) > 0 {
		_ = json.Unmarshal(t.State, &st)
	}
	return st
}

// newRender is a render of sess at key, the thread it answers at.
func (r *renderer) newRender(ctx context.Context, sess *core.Session, key string, st *sinkState) (*render, error) {
	_, channel, thread, err := parseKey(key)
	if err != nil {
		return nil, output.Permanent(err)
	}
	in, err := r.p.keyInstallation(ctx, sess, key)
	if errors.Is(err, core.ErrNotFound) {
		return nil, output.Permanent(err)
	}
	if err != nil {
		return nil, err
	}
	a, err := r.p.client(ctx, in)
	if err != nil {
		return nil, classify(err)
	}
	return &render{p: r.p, st: st, a: a, session: sess.ID, channel: channel, thread: thread}, nil
}

// Closed shows the thread's agent session closed once the session is
// archived.
func (r *renderer) Closed(ctx context.Context, sess *core.Session) error {
	if !r.p.cfg.Agent || sess.Origin == nil || sess.Origin.Provider != Name {
		return nil
	}
	rc, err := r.newRender(ctx, sess, sess.Origin.Key, &sinkState{})
	if err != nil {
		return err
	}
	return rc.agentStatus(ctx, slackapi.AgentSessionStatusClosed)
}

// Fenced clears the thread's assistant status after this replica lost
// the session's output mid-render: a status it set late would otherwise
// outlast the turn the new holder ended (Slack drops it only after two
// minutes with no reply). A turn still running shows its status again at
// its next step.
func (r *renderer) Fenced(ctx context.Context, t *output.Thread) error {
	st := stateOf(t)
	key := t.AnswerKey()
	if st.Mode != "status" || key == "" {
		return nil
	}
	rc, err := r.newRender(ctx, t.Session, key, &st)
	if err != nil {
		return err
	}
	return rc.a.setStatus(ctx, rc.channel, rc.thread, "")
}

func (rc *render) event(ctx context.Context, e core.Event) (bool, error) {
	st := rc.st
	switch e.Type {
	case core.TypeUserMessage:
		ref := slackRef(e)
		if rc.p.cfg.Agent {
			rc.noteAsker(e)
			if err := rc.working(ctx); err != nil {
				return true, err
			}
		}
		if !rc.p.firstReaction(e.ID) {
			return rc.p.cfg.Agent, nil
		}
		err := rc.a.react(ctx, ref.Channel, ref.TS, eyes)
		if err != nil {
			rc.p.forgetReaction(e.ID)
		}
		return true, err
	case core.TypeTurnStarted:
		st.Tools, st.StatusTS, st.StatusAt, st.Plan = nil, "", time.Now().UnixMilli(), ""
		if rc.p.cfg.Agent {
			// The stream starts with the turn's first output; Slack shows
			// the session processing meanwhile.
			st.Stream, st.Processing = &streamState{Last: st.LastStream}, false
			if st.Title == "" {
				return true, nil // the turn's first input titles the session
			}
			return true, rc.working(ctx)
		}
		return true, rc.startProgress(ctx)
	case core.TypeAgentMessageDelta:
		if !rc.streaming() {
			return false, nil
		}
		if err := rc.working(ctx); err != nil {
			return true, err
		}
		return rc.delta(ctx, e)
	case core.TypeAgentToolResult:
		return rc.toolDone(ctx, e)
	case core.TypeAgentPlan:
		var b core.PlanBody
		if err := e.Decode(&b); err != nil {
			return false, output.Permanent(err)
		}
		return rc.plan(ctx, b)
	case core.TypeAgentToolUse, core.TypeAgentCustomToolUse:
		var b core.ToolUseBody
		if err := e.Decode(&b); err != nil {
			return false, output.Permanent(err)
		}
		if st.Tools == nil {
			st.Tools = map[string]toolRef{}
		}
		st.Tools[b.ToolUseID] = toolRef{Name: b.Name, Input: clip(string(b.Input), 500), Custom: e.Type == core.TypeAgentCustomToolUse}
		if rc.streaming() {
			return rc.toolStarted(ctx, b)
		}
		return rc.progress(ctx, "is running "+b.Name+"…", "Running `"+escapeText(b.Name)+"`…")
	case core.TypeAgentMessage:
		var b core.MessageBody
		if err := e.Decode(&b); err != nil {
			return false, output.Permanent(err)
		}
		if acted, done, err := rc.streamed(ctx, e.Level, b); done {
			return acted, err
		}
		if e.Level != core.LevelUser {
			return rc.progress(ctx, "is working…", "💭 "+escapeText(clip(b.Text, 200)))
		}
		if b.Kind == core.MessageKindBudget {
			if err := rc.pause(ctx, b.Budget); err != nil {
				return true, err
			}
		}
		var msgs []outMsg
		for _, part := range replies(toMrkdwn(b.Text)) {
			msgs = append(msgs, outMsg{texts: part})
		}
		if t, ok := st.Tools[b.ToolUseID]; ok && b.ToolUseID != "" && t.Name == "ask" && len(msgs) > 0 {
			last := &msgs[len(msgs)-1]
			last.extra = askBlocks(rc.session, askOptions(b.Text))
		}
		return true, rc.postParts(ctx, msgs, true)
	case core.TypeError:
		var b core.ErrorBody
		if err := e.Decode(&b); err != nil {
			return false, output.Permanent(err)
		}
		// An error ends its turn with reason error: its message offers
		// to run the turn again.
		return true, rc.postParts(ctx, []outMsg{{texts: []string{"⚠️ I ran into an error: " + escapeText(clip(b.Message, 2000))},
			extra: retryBlocks(rc.session, e.TurnID)}}, false)
	case core.TypeStatusChanged:
		var b core.StatusChangedBody
		if err := e.Decode(&b); err != nil {
			return false, output.Permanent(err)
		}
		if b.PendingAction == nil {
			return false, nil
		}
		if err := rc.waiting(ctx); err != nil {
			return true, err
		}
		if b.PendingAction.Budget != nil || len(b.PendingAction.ToolUseIDs) == 0 {
			return rc.p.cfg.Agent, nil
		}
		// The turn waits in itself for a person: ask now.
		return true, rc.ask(ctx, b.PendingAction.ToolUseIDs)
	case core.TypeTurnCompleted:
		var b core.TurnCompletedBody
		if err := e.Decode(&b); err != nil {
			return false, output.Permanent(err)
		}
		if err := rc.endStream(ctx); err != nil {
			return true, err
		}
		err := rc.finish(ctx, b, e.TurnID)
		if err == nil {
			err = rc.agentStatus(ctx, endStatus(b.YieldReason))
		}
		if err == nil {
			st.Tools, st.StatusTS, st.Stream, st.Processing = nil, "", nil, false
		}
		return true, err
	}
	return false, nil
}
