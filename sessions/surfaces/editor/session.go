package editor

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/coder/acp-go-sdk"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

// session is the editor's view of one gateway session: a follower of its
// log that turns events into session/update notifications, the prompt in
// progress, and the tool calls it has seen.
type session struct {
	a   *agent
	id  string
	ctx context.Context
	end context.CancelFunc // stops the follower

	mu sync.Mutex
	// tools are the session's tool calls by id; answered the
	// confirmations its log holds; asked those put to the editor.
	tools    map[string]*toolCall
	answered map[string]string
	asked    map[string]bool
	// asking withdraws each permission request still open in the editor.
	asking map[string]context.CancelFunc
	// posted are the ids of the inputs this editor sent: the editor shows
	// its own prompts, so the follower does not echo them.
	posted map[string]bool
	// interruptAt are the editor's inputs cancelled while queued: the
	// turn that takes one is interrupted, not the turn running before.
	interruptAt map[string]bool
	turn        *waiter
	text        textState
	notes       []string
	// lost is why the follower stopped for good (a revoked token), which
	// every later prompt answers.
	lost error
}

// toolCall is a call of the log, for the permission requests that name it.
type toolCall struct {
	id, name string
	input    any
	custom   bool
}

// waiter is a prompt waiting for the end of the turn that takes its
// message.
type waiter struct {
	text    string // the message, to know it before the post returns its id
	inputID string
	seq     uint64 // the message's, once logged
	done    chan outcome
	ended   bool
	// cancelled: session/cancel came while the message was queued.
	cancelled bool
}

type outcome struct {
	stop acp.StopReason
	note string
	err  error
}

func newSession(a *agent, id string) *session {
	ctx, end := context.WithCancel(a.ctx)
	return &session{a: a, id: id, ctx: ctx, end: end, tools: map[string]*toolCall{}, answered: map[string]string{},
		asked: map[string]bool{}, posted: map[string]bool{}, interruptAt: map[string]bool{}, asking: map[string]context.CancelFunc{}, text: textState{streamed: map[string]string{}}}
}

func (s *session) stop() { s.end() }

// notMCP records that the editor offered MCP servers, which a gateway
// session cannot use: it runs in the gateway's sandbox, with the tools
// of its agent.
func (s *session) notMCP(n int) {
	if n == 0 {
		return
	}
	msg := fmt.Sprintf("This editor's %d MCP server(s) are not forwarded: the session runs on the gateway, in its sandbox, with its agent's tools.", n)
	s.a.o.Log.Warn("editor MCP servers not forwarded", "session", s.id, "count", n)
	s.mu.Lock()
	s.notes = append(s.notes, msg)
	s.mu.Unlock()
}

// replay sends the session's log as it stands, page by page, and returns
// the last seq sent.
func (s *session) replay(ctx context.Context) (uint64, error) {
	var after uint64
	for {
		page, err := s.a.o.Gateway.Events(ctx, s.id, client.EventsQuery{After: after, Limit: 1000})
		if err != nil {
			return 0, err
		}
		for _, e := range page.Data {
			s.handle(e, false)
			after = e.Seq
		}
		if !page.HasMore || len(page.Data) == 0 {
			return after, nil
		}
	}
}

// follow streams the log after seq after until the session closes; an
// answer that retrying cannot fix (a revoked token, an unknown session)
// ends the editor's access to it.
func (s *session) follow(after uint64) {
	go func() {
		err := s.a.o.Gateway.Follow(s.ctx, s.id, after, "", func(e core.Event) error {
			s.handle(e, true)
			return nil
		})
		if s.ctx.Err() != nil {
			return
		}
		s.a.o.Log.Error("following the session stopped", "session", s.id, "err", err)
		s.lose(s.a.rpcError("follow session "+s.id, err))
	}()
}

// lose ends the editor's access: the prompt in progress and every later
// one answer err, and the editor is told why.
func (s *session) lose(err error) {
	s.mu.Lock()
	s.lost = err
	w := s.turn
	s.mu.Unlock()
	s.send(acp.UpdateAgentMessageText("\n\nThis editor lost the session: " + message(err)))
	if w != nil {
		s.finish(w, outcome{err: err})
	}
}

// handle turns one logged event into updates for the editor, in log
// order, and settles the prompt it ends. live is false while replaying a
// loaded session's log: no deltas, no permission requests.
func (s *session) handle(e core.Event, live bool) {
	s.mu.Lock()
	updates := s.translate(e, live)
	w, end := s.settle(e)
	interrupt := live && e.Type == core.TypeUserMessage && s.interruptAt[e.ID]
	delete(s.interruptAt, e.ID)
	updates = append(updates, s.withdraw(e)...)
	var ask []*toolCall
	if live {
		ask = s.toAsk(e)
	}
	s.mu.Unlock()
	for _, u := range updates {
		s.send(u)
	}
	if interrupt {
		s.interrupt()
	}
	if w != nil {
		s.finish(w, end)
	}
	for _, c := range ask {
		go s.askPermission(c)
	}
}

func (s *session) send(u acp.SessionUpdate) {
	if err := s.a.peer().SessionUpdate(s.ctx, acp.SessionNotification{SessionId: acp.SessionId(s.id), Update: u}); err != nil && s.ctx.Err() == nil {
		s.a.o.Log.Warn("session update not sent", "session", s.id, "err", err)
	}
}

// prompt posts text as a user.message and waits for the end of the turn
// that takes it. ctx ends when the editor cancels the prompt: the turn is
// interrupted (Cancel) and the prompt answers cancelled once the gateway
// says the turn stopped, or after CancelWait.
func (s *session) prompt(ctx context.Context, text, key string) (acp.StopReason, error) {
	s.mu.Lock()
	if s.lost != nil {
		err := s.lost
		s.mu.Unlock()
		return "", err
	}
	if s.turn != nil && !s.turn.ended {
		s.mu.Unlock()
		return "", &acp.RequestError{Code: codeInvalidRequest, Message: "a prompt of this session is still running: cancel it first"}
	}
	w := &waiter{text: text, done: make(chan outcome, 1)}
	s.turn = w
	notes := s.notes
	s.notes = nil
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if s.turn == w {
			s.turn = nil
		}
		s.mu.Unlock()
	}()
	for _, n := range notes {
		s.send(acp.UpdateAgentMessageText(n + "\n\n"))
	}
	// A turn paused by a budget keeps new input queued until the budget
	// is raised: the message is sent for the resumed turn, and the
	// prompt ends now, saying how to raise it.
	v, err := s.a.o.Gateway.GetSession(s.a.ctx, s.id)
	if err != nil {
		return "", s.a.rpcError("prompt session "+s.id, err)
	}
	qs, err := s.a.o.Gateway.SendEvents(s.a.ctx, s.id, []client.Input{{Type: core.TypeUserMessage, Text: text}}, key)
	if err != nil {
		return "", s.a.rpcError("prompt session "+s.id, err)
	}
	s.mu.Lock()
	for _, q := range qs {
		s.posted[q.ID] = true
		w.inputID = q.ID
	}
	// Cancelled before the post answered: interrupt the message's turn
	// now if it has started, else when it does.
	now := w.cancelled && w.seq != 0
	if w.cancelled && w.seq == 0 && w.inputID != "" {
		s.interruptAt[w.inputID] = true
	}
	s.mu.Unlock()
	if now {
		s.interrupt()
	}
	if pa := v.PendingAction; v.Status == core.StatusAwaitingInput && pa != nil && pa.Budget != nil {
		s.send(acp.UpdateAgentMessageText(stopNote(s.id, v.StopReason, pa.Budget)))
		return stopReason(v.StopReason), nil
	}
	var out outcome
	select {
	case out = <-w.done:
	case <-s.ctx.Done():
		// session/close, or a session/load of the same id, ended the
		// session: no turn end will be followed.
		out = outcome{stop: acp.StopReasonCancelled}
	case <-ctx.Done():
		select {
		case out = <-w.done:
		case <-time.After(s.a.o.CancelWait):
			out = outcome{stop: acp.StopReasonCancelled}
		case <-s.ctx.Done():
			out = outcome{stop: acp.StopReasonCancelled}
		}
	}
	if out.err != nil {
		return "", out.err
	}
	if out.note != "" {
		s.send(acp.UpdateAgentMessageText("\n\n" + out.note))
	}
	return out.stop, nil
}

// cancel interrupts the turn of the prompt in progress. While its
// message is queued behind another turn (someone else's), that turn goes
// on: the message's own turn is interrupted when it takes the message.
func (s *session) cancel() {
	s.mu.Lock()
	w := s.turn
	running := w != nil && !w.ended
	queued := running && w.seq == 0
	if queued {
		w.cancelled = true
		if w.inputID != "" {
			s.interruptAt[w.inputID] = true
		}
	}
	s.mu.Unlock()
	if running && !queued {
		s.interrupt()
	}
}

// interrupt stops the session's running turn.
func (s *session) interrupt() {
	if _, err := s.a.o.Gateway.SendEvents(s.a.ctx, s.id, []client.Input{{Type: core.TypeUserInterrupt}}, ""); err != nil {
		s.a.o.Log.Error("interrupt not sent", "session", s.id, "err", err)
	}
}

// finish answers the waiting prompt once.
func (s *session) finish(w *waiter, o outcome) {
	s.mu.Lock()
	if w.ended {
		s.mu.Unlock()
		return
	}
	w.ended = true
	s.mu.Unlock()
	w.done <- o
}

// settle reports the prompt that e ends, if any, and how. Called with
// s.mu held.
func (s *session) settle(e core.Event) (*waiter, outcome) {
	w := s.turn
	if w == nil || w.ended {
		return nil, outcome{}
	}
	if w.seq == 0 {
		if e.Type == core.TypeUserMessage && s.isOurs(e, w) {
			w.seq = e.Seq
		}
		// Another turn paused on a budget (or max_turns) while the
		// message was queued: it waits until the budget is raised, so
		// the prompt ends now, saying how.
		var b core.StatusChangedBody
		if e.Type == core.TypeStatusChanged && e.Decode(&b) == nil && b.PendingAction != nil && b.PendingAction.Budget != nil {
			return w, outcome{stop: stopReason(b.StopReason), note: stopNote(s.id, b.StopReason, b.PendingAction.Budget)}
		}
		return nil, outcome{}
	}
	switch e.Type {
	case core.TypeTurnCompleted:
		var b core.TurnCompletedBody
		if e.Decode(&b) != nil {
			return nil, outcome{}
		}
		if b.YieldReason == core.ReasonRequiresAction && s.confirmationsOnly(b.PendingToolUseIDs) {
			return nil, outcome{} // asked in the editor; the next turn goes on
		}
		return w, outcome{stop: stopReason(b.YieldReason), note: stopNote(s.id, b.YieldReason, nil)}
	case core.TypeStatusChanged:
		var b core.StatusChangedBody
		if e.Decode(&b) != nil {
			return nil, outcome{}
		}
		if pa := b.PendingAction; pa != nil && pa.Budget != nil {
			return w, outcome{stop: stopReason(b.StopReason), note: stopNote(s.id, b.StopReason, pa.Budget)}
		}
		if b.Status == core.StatusIdle || b.Status == core.StatusFailed || b.Status == core.StatusArchived {
			return w, outcome{stop: stopReason(b.StopReason)}
		}
	}
	return nil, outcome{}
}

// isOurs reports whether the logged user.message e is the one w posted:
// by its id, or by its text while the post has not answered yet.
func (s *session) isOurs(e core.Event, w *waiter) bool {
	if w.inputID != "" {
		return e.ID == w.inputID
	}
	var b core.MessageBody
	return e.Decode(&b) == nil && b.Text == w.text && e.Actor == core.ActorHuman
}

// confirmationsOnly reports whether every pending call is one the editor
// can answer: a tool call to allow or deny, not a custom tool's.
func (s *session) confirmationsOnly(ids []string) bool {
	for _, id := range ids {
		if c := s.tools[id]; c == nil || c.custom {
			return false
		}
	}
	return len(ids) > 0
}

// toAsk lists the confirmations e says the session waits on that the
// editor has not been asked. Called with s.mu held.
func (s *session) toAsk(e core.Event) []*toolCall {
	var ids []string
	switch e.Type {
	case core.TypeTurnCompleted:
		var b core.TurnCompletedBody
		if e.Decode(&b) == nil && b.YieldReason == core.ReasonRequiresAction {
			ids = b.PendingToolUseIDs
		}
	case core.TypeStatusChanged:
		var b core.StatusChangedBody
		if e.Decode(&b) == nil && b.Status == core.StatusAwaitingInput && b.PendingAction != nil && b.PendingAction.Budget == nil {
			ids = b.PendingAction.ToolUseIDs
		}
	}
	return s.unasked(ids)
}

func (s *session) unasked(ids []string) []*toolCall {
	var out []*toolCall
	for _, id := range ids {
		c := s.tools[id]
		if c == nil || c.custom || s.asked[id] || s.answered[id] != "" {
			continue
		}
		s.asked[id] = true
		out = append(out, c)
	}
	return out
}

// askAll asks the editor about the confirmations a loaded session waits on.
func (s *session) askAll(ids []string) {
	s.mu.Lock()
	ask := s.unasked(ids)
	s.mu.Unlock()
	for _, c := range ask {
		go s.askPermission(c)
	}
}
