package linear

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/oauth"
	"github.com/switchboardhq/switchboard/providers/output"
)

// renderer is the Linear part of the output sink (providers/output drives
// it from the log, one event at a time, and saves its state).
//
// Exactly once: every activity is created with an id derived from the
// session, its kind and the log position. Before a post that must not be
// repeated the renderer saves that id as an intent; an intent found
// unconfirmed after a crash is looked up at Linear (agentActivity) before
// anything is posted again, and Linear refuses a second activity with an
// id it has. Thoughts are the exception: they are coalesced when the sink
// is behind, and a crash may coalesce them differently, so a thought may
// (rarely) show twice; it is never lost.
type renderer struct{ p *Provider }

// sinkState is the renderer's part of the sink position.
type sinkState struct {
	URLSet bool               `json:"url_set,omitempty"`
	Tools  map[string]toolRef `json:"tools,omitempty"` // this turn's calls
	// Thought holds thoughts not posted yet: coalesced into one.
	Thought *pending `json:"thought,omitempty"`
	// Answered: this turn posted its response, question or error.
	Answered bool `json:"answered,omitempty"`
	// Parked are the calls the turn waits on inside itself, asked about
	// and not answered yet.
	Parked []string `json:"parked,omitempty"`
	// Intent is an activity announced, not confirmed (saved by older
	// releases as the bare activity id, which output.Intent still reads).
	Intent *output.Intent `json:"intent,omitempty"`
}

type toolRef struct {
	Name  string `json:"name"`
	Param string `json:"param,omitempty"`
	// Input is the call's arguments, clipped, for a question about it.
	Input  string `json:"input,omitempty"`
	Custom bool   `json:"custom,omitempty"`
	// Asked: a question about the call was posted (it waits for a person
	// or an application).
	Asked bool `json:"asked,omitempty"`
}

type pending struct {
	Text string `json:"text"`
	Upto uint64 `json:"upto"` // the last seq folded in
}

// Tools whose calls are the conversation itself, not work to show.
const (
	toolSay = "say"
	toolAsk = "ask"
)

// activityID is the UUID (version 4 layout) of an activity: a hash of the
// session, kind and position, so the same activity always gets the same id.
func activityID(session, kind string, n uint64) string {
	h := sha256.Sum256(fmt.Appendf(nil, "switchboard:%s:%s:%d", session, kind, n))
	h[6] = h[6]&0x0f | 0x40
	h[8] = h[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

// ackID is the id of the thought that acknowledges an input.
func ackID(session, input string) string { return activityID(session, "ack:"+input, 0) }

func linearRef(e core.Event) *inputRef {
	if e.Type != core.TypeUserMessage {
		return nil
	}
	var b inputBody
	if e.Decode(&b) != nil || b.Linear == nil {
		return nil
	}
	return b.Linear
}

// ackText is the first thought, sent before any model call.
func ackText(r *inputRef) string {
	if r.Action == actionCreated {
		return "Received. Looking into it…"
	}
	return "Got your message. Taking it into account…"
}

// ack is the activity that acknowledges an input: a thought, or, for a
// message that waits behind an open confirmation, the question again.
func ack(session string, e core.Event, r *inputRef) activity {
	a := activity{ID: ackID(session, e.ID), AgentSession: r.AgentSession, Content: map[string]any{"type": "thought", "body": ackText(r)}}
	if r.Waiting {
		a.Content, a.Select = map[string]any{"type": "elicitation", "body": waitingAck}, confirmOptions
	}
	return a
}

// Received sends the acknowledging thought of inputs from Linear ahead of
// the turn: Linear shows an agent unresponsive without an activity within
// 10 s of `created`, whatever the model takes.
func (r *renderer) Received(ctx context.Context, s *core.Session, inputs []core.Event) error {
	var todo []core.Event
	for _, e := range inputs {
		if linearRef(e) != nil && r.p.firstAck(e.ID) {
			todo = append(todo, e)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	forget := func() {
		for _, e := range todo {
			r.p.forgetAck(e.ID) // the log's copy will try again
		}
	}
	if s.Origin == nil {
		forget()
		return nil
	}
	rc, err := r.p.newRender(ctx, s, s.Origin.Key)
	if err != nil {
		forget()
		return err
	}
	for _, e := range todo {
		if err := rc.send(ctx, ack(s.ID, e, linearRef(e)), prioAnswer); err != nil {
			forget()
			return err
		}
	}
	return nil
}

// render is one Render call's context.
type render struct {
	p            *Provider
	t            *output.Thread
	st           *sinkState
	api          platform
	org          string
	agentSession string
	session      string
}

// newRender renders s into the agent session of key: its origin's, or
// one of its links'.
func (p *Provider) newRender(ctx context.Context, s *core.Session, key string) (*render, error) {
	if key == "" {
		return nil, output.Permanent(fmt.Errorf("session %s has no Linear agent session to answer in", s.ID))
	}
	org, as, err := parseKey(key)
	if err != nil {
		return nil, output.Permanent(err)
	}
	var in *core.Installation
	if s.Origin != nil && s.Origin.Key == key {
		in, err = p.sessionInstallation(ctx, s)
	} else {
		in, err = p.InstallationOfKey(ctx, key)
	}
	if errors.Is(err, core.ErrNotFound) {
		return nil, output.Permanent(err)
	}
	if err != nil {
		return nil, err
	}
	if !in.HasToken {
		return nil, output.Permanent(fmt.Errorf("organization %s: %w", org, oauth.ErrNoToken))
	}
	return &render{p: p, api: p.newAPI(in), org: org, agentSession: as, session: s.ID, st: &sinkState{}}, nil
}

// rendered are the event types the renderer acts on.
var rendered = map[string]bool{
	core.TypeUserMessage: true, core.TypeTurnStarted: true, core.TypeAgentToolUse: true, core.TypeAgentCustomToolUse: true,
	core.TypeAgentToolResult: true, core.TypeAgentMessage: true, core.TypeError: true, core.TypeTurnCompleted: true,
	core.TypeLinkAdded: true, core.TypeAgentPlan: true, core.TypeStatusChanged: true,
}

// renders reports whether the renderer acts on e: status changes only
// when a turn waits inside itself for a person.
func renders(e core.Event) bool {
	if e.Type != core.TypeStatusChanged {
		return rendered[e.Type]
	}
	var b core.StatusChangedBody
	return e.Decode(&b) == nil && waitsForPerson(b)
}

// waitsForPerson reports whether a status change is a turn waiting inside
// itself for a person's answer to tool calls (an ACP permission request).
func waitsForPerson(b core.StatusChangedBody) bool {
	return b.PendingAction != nil && b.PendingAction.Budget == nil && len(b.PendingAction.ToolUseIDs) > 0
}

// Render renders one logged event as agent activities.
func (r *renderer) Render(ctx context.Context, t *output.Thread, e core.Event) (bool, error) {
	var st sinkState
	if len(t.State) > 0 {
		_ = json.Unmarshal(t.State, &st) // a state that does not decode starts afresh
	}
	if !renders(e) && st.Thought == nil {
		return false, nil
	}
	if e.Type == core.TypeUserMessage && linearRef(e) == nil && st.Thought == nil {
		return false, nil // an input from the API: nothing to acknowledge
	}
	rc, err := r.p.newRender(ctx, t.Session, t.AnswerKey())
	if err != nil {
		return false, err
	}
	rc.t, rc.st = t, &st
	acted, err := rc.event(ctx, e)
	if err == nil && st.Thought != nil && e.Seq > st.Thought.Upto {
		// A thought held for coalescing goes out once nothing follows it.
		if later, lerr := rc.later(ctx, e.Seq); lerr != nil {
			err = lerr
		} else if !later {
			acted, err = true, rc.flush(ctx, prioThought)
		}
	}
	if raw, merr := json.Marshal(st); merr == nil {
		t.State = raw
	}
	return acted, err
}

func (rc *render) event(ctx context.Context, e core.Event) (bool, error) {
	st := rc.st
	switch e.Type {
	case core.TypeUserMessage:
		ref := linearRef(e)
		if ref == nil {
			return false, nil
		}
		acted := false
		if !st.URLSet {
			if u := rc.p.sessionPage(rc.session); u != "" {
				if err := rc.updateSession(ctx, sessionUpdate{ExternalURL: u}, prioAnswer); err != nil {
					return true, err
				}
				acted = true
			}
			st.URLSet = true
		}
		if !rc.p.firstAck(e.ID) {
			return acted, nil
		}
		if err := rc.post(ctx, ack(rc.session, e, ref), prioAnswer, true); err != nil {
			rc.p.forgetAck(e.ID)
			return true, err
		}
		return true, nil
	case core.TypeTurnStarted:
		// Calls a person was asked about stay known: a built-in turn
		// that resumes after the answer runs them.
		for id, t := range st.Tools {
			if !t.Asked {
				delete(st.Tools, id)
			}
		}
		st.Answered = false
		return false, nil
	case core.TypeAgentToolUse, core.TypeAgentCustomToolUse:
		var b core.ToolUseBody
		if err := e.Decode(&b); err != nil {
			return false, output.Permanent(err)
		}
		if st.Tools == nil {
			st.Tools = map[string]toolRef{}
		}
		ref := toolRef{Name: b.Name, Param: parameter(b.Name, b.Input), Input: clip(string(b.Input), 1000), Custom: e.Type == core.TypeAgentCustomToolUse}
		st.Tools[b.ToolUseID] = ref
		if b.Name == toolSay || b.Name == toolAsk {
			return false, nil
		}
		// An in-progress action is replaced by the next activity; when the
		// result is logged already it would be replaced at once.
		if done, err := rc.resultLogged(ctx, e.Seq, b.ToolUseID); err != nil || done {
			return false, err
		}
		a := rc.activity("action", e.Seq, map[string]any{"type": "action", "action": ref.Name, "parameter": ref.Param})
		a.Ephemeral = true
		return true, rc.post(ctx, a, prioAction, false)
	case core.TypeAgentToolResult:
		var b core.ToolResultBody
		if err := e.Decode(&b); err != nil {
			return false, output.Permanent(err)
		}
		if i := slices.Index(st.Parked, b.ToolUseID); i >= 0 {
			// The question was answered: the turn goes on, and owes an
			// answer again.
			st.Parked, st.Answered = slices.Delete(st.Parked, i, i+1), false
		}
		ref, ok := st.Tools[b.ToolUseID]
		if !ok {
			ref = toolRef{Name: "tool"}
		}
		if ref.Name == toolSay || ref.Name == toolAsk {
			return false, nil
		}
		result := clip(b.Output, 2000)
		if b.IsError {
			result = "Error: " + result
		}
		a := rc.activity("result", e.Seq, map[string]any{"type": "action", "action": ref.Name, "parameter": ref.Param, "result": result})
		return true, rc.post(ctx, a, prioAction, true)
	case core.TypeLinkAdded:
		// What the agent opened elsewhere (a pull request) is shown where
		// the work was asked for, with its address.
		var b core.LinkBody
		if err := e.Decode(&b); err != nil {
			return false, output.Permanent(err)
		}
		if b.By != core.LinkedByAgent || b.URL == "" {
			return false, nil
		}
		_, where, _ := strings.Cut(b.Key, ":")
		a := rc.activity("link", e.Seq, map[string]any{"type": "action", "action": "Linked", "parameter": where,
			"result": fmt.Sprintf("[%s](%s): mentions of the agent there continue this session.", b.URL, b.URL)})
		return true, rc.post(ctx, a, prioAction, true)
	case core.TypeAgentMessage:
		var b core.MessageBody
		if err := e.Decode(&b); err != nil {
			return false, output.Permanent(err)
		}
		switch {
		case b.Kind == core.MessageKindNote && len(st.Parked) > 0:
			// A message that came while the turn waits for a person was
			// acknowledged with the question: a thought now would show
			// the agent at work while the question is open.
			return false, nil
		case e.Level != core.LevelUser, b.ToolUseID != "" && st.Tools[b.ToolUseID].Name != toolAsk, b.Kind == core.MessageKindNote:
			// Text beside tool calls, and say: thoughts.
			return rc.thought(ctx, e.Seq, b.Text)
		case b.ToolUseID != "":
			return true, rc.answer(ctx, "elicitation", e.Seq, b.Text)
		case b.Kind == core.MessageKindBudget:
			// A pause until the budget is raised: the raises are its
			// options.
			sel, err := rc.budgetOptions(ctx, e.Seq)
			if err != nil {
				return false, err
			}
			return true, rc.answer(ctx, "elicitation", e.Seq, b.Text, sel...)
		}
		return true, rc.answer(ctx, "response", e.Seq, b.Text)
	case core.TypeError:
		var b core.ErrorBody
		if err := e.Decode(&b); err != nil {
			return false, output.Permanent(err)
		}
		return true, rc.answer(ctx, "error", e.Seq, "I ran into an error: "+clip(b.Message, 2000))
	case core.TypeStatusChanged:
		var b core.StatusChangedBody
		if err := e.Decode(&b); err != nil {
			return false, output.Permanent(err)
		}
		if !waitsForPerson(b) {
			return false, nil
		}
		return rc.ask(ctx, e.Seq, b.PendingAction.ToolUseIDs, true)
	case core.TypeAgentPlan:
		var b core.PlanBody
		if err := e.Decode(&b); err != nil {
			return false, output.Permanent(err)
		}
		return true, rc.plan(ctx, b.Entries)
	case core.TypeTurnCompleted:
		var b core.TurnCompletedBody
		if err := e.Decode(&b); err != nil {
			return false, output.Permanent(err)
		}
		if b.YieldReason == core.ReasonRequiresAction {
			st.Parked = nil
			acted, err := rc.ask(ctx, e.Seq, b.PendingToolUseIDs, false)
			if err == nil {
				rc.keepAsked(b.PendingToolUseIDs)
			}
			return acted, err
		}
		kind, text := endOfTurn(b.YieldReason, st.Answered)
		st.Tools, st.Parked = nil, nil
		if kind == "" {
			return false, nil
		}
		return true, rc.answer(ctx, kind, e.Seq, text)
	}
	return false, nil
}

// endOfTurn is what a turn's end needs shown: Linear expects a stopped
// agent to confirm with a response or an error, and a session whose turn
// ended without an answer would look active forever.
func endOfTurn(r core.Reason, answered bool) (kind, text string) {
	switch r {
	case core.ReasonCanceled:
		return "response", "Stopped."
	case core.ReasonDeadlineExceeded:
		return "error", "I stopped: the turn ran out of time."
	case core.ReasonMaxSteps:
		return "error", "I stopped: the turn reached its step limit."
	case core.ReasonBudgetExceeded:
		return "error", "I stopped: the turn used up its token budget."
	case core.ReasonCompleted:
		if !answered {
			return "response", "Done."
		}
	}
	return "", ""
}

// activity is an activity of this session derived from position seq.
func (rc *render) activity(kind string, seq uint64, content map[string]any) activity {
	return activity{ID: activityID(rc.session, kind, seq), AgentSession: rc.agentSession, Content: content}
}

// thought folds text into the held thought; it goes out now unless the
// agent's next message is already logged (the sink is behind: they go
// out as one, before the answer or once nothing follows).
func (rc *render) thought(ctx context.Context, seq uint64, text string) (bool, error) {
	st := rc.st
	if text = strings.TrimSpace(text); text == "" {
		return false, nil
	}
	switch {
	case st.Thought == nil:
		st.Thought = &pending{Text: text, Upto: seq}
	case seq > st.Thought.Upto:
		st.Thought.Text = clip(st.Thought.Text+"\n\n"+text, 8000)
		st.Thought.Upto = seq
	}
	ahead, err := rc.messageAhead(ctx, seq)
	if err != nil || ahead {
		return false, err
	}
	return true, rc.flush(ctx, prioThought)
}

// messageAhead reports whether the log already holds another message of
// the agent after seq (looking a little way ahead): the sink is behind,
// and a thought held now joins the next one instead of costing a call.
func (rc *render) messageAhead(ctx context.Context, seq uint64) (bool, error) {
	evs, err := rc.p.cfg.Sessions.Events(ctx, rc.session, seq, 50)
	if err != nil {
		return false, err
	}
	for _, e := range evs {
		if e.Type == core.TypeAgentMessage {
			return true, nil
		}
	}
	return false, nil
}

// flush posts the held thought.
func (rc *render) flush(ctx context.Context, p priority) error {
	th := rc.st.Thought
	if th == nil {
		return nil
	}
	a := rc.activity("thought", th.Upto, map[string]any{"type": "thought", "body": th.Text})
	if err := rc.post(ctx, a, p, false); err != nil {
		return err
	}
	rc.st.Thought = nil
	return nil
}

// answer posts a response, elicitation or error, after the thoughts that
// led to it; an elicitation may offer options to choose from.
func (rc *render) answer(ctx context.Context, kind string, seq uint64, text string, sel ...option) error {
	if err := rc.flush(ctx, prioAnswer); err != nil {
		return err
	}
	if strings.TrimSpace(text) == "" {
		text = "(no text)"
	}
	a := rc.activity(kind, seq, map[string]any{"type": kind, "body": clip(text, 60000)})
	a.Select = sel
	if err := rc.post(ctx, a, prioAnswer, true); err != nil {
		return err
	}
	rc.st.Answered = true
	return nil
}

// later reports whether the log has events after seq.
func (rc *render) later(ctx context.Context, seq uint64) (bool, error) {
	evs, err := rc.p.cfg.Sessions.Events(ctx, rc.session, seq, 1)
	return len(evs) > 0, err
}

// resultLogged reports whether a call's result follows seq in the log
// (looking a little way ahead).
func (rc *render) resultLogged(ctx context.Context, seq uint64, id string) (bool, error) {
	evs, err := rc.p.cfg.Sessions.Events(ctx, rc.session, seq, 50)
	if err != nil {
		return false, err
	}
	for _, e := range evs {
		var b core.ToolResultBody
		if e.Type == core.TypeAgentToolResult && e.Decode(&b) == nil && b.ToolUseID == id {
			return true, nil
		}
	}
	return false, nil
}

// updateSession changes the agent session within the budget, at
// priority p. An update is idempotent: a crash that repeats one changes
// nothing at Linear.
func (rc *render) updateSession(ctx context.Context, u sessionUpdate, p priority) error {
	for {
		if err := rc.p.budgets.wait(ctx, rc.org, p); err != nil {
			return err
		}
		err := rc.api.updateSession(ctx, rc.agentSession, u)
		if ae := asAPIError(err); ae != nil && ae.UserError {
			// The link and the plan are conveniences: an update Linear
			// refuses (a gateway URL it does not accept) must not hold
			// up the session's activities behind endless retries.
			rc.p.log.Warn("linear refused the agent session update; skipping it", "session_id", rc.session, "err", err)
			return nil
		}
		if retry, err := rc.settle(err); !retry {
			return err
		}
	}
}

// parameter is what an action shows of a call's input.
func parameter(name string, input json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(input, &m) == nil {
		for _, k := range []string{"command", "path", "pattern", "query", "id", "term"} {
			if s, ok := m[k].(string); ok && s != "" {
				return clip(s, 300)
			}
		}
		if len(m) == 0 {
			return "(no arguments)" // Linear requires a parameter
		}
	}
	if s := clip(string(input), 300); s != "" {
		return s
	}
	return "(no arguments)"
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && cut < len(s) && s[cut]&0xc0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
