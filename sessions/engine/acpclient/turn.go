package acpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/engine/harness"
)

// turn is one turn of an ACP agent: one session/prompt.
type turn struct {
	h   *Harness
	c   *harness.Cycle
	id  string
	ap  *agentProc
	rec *recorder
	// parks receives the permission requests that wait for a person;
	// limits the limits the metered usage reached; panicked a panic in the
	// turn's work on another goroutine (fault).
	parks    chan *parked
	limits   chan limitHit
	panicked chan struct{}
	// before and beforeCost are the session's totals over its finished
	// turns, which its budgets count with this one's.
	before     core.Usage
	beforeCost *float64
	// resumed is what the turn had used before a pause it resumes from;
	// paused is set when it pauses.
	resumed core.Usage
	paused  bool
	told    bool // the thread knows a message waits for the turn's end
	// steered: messages entered the log mid-turn, for the next prompt.
	steered bool

	mu      sync.Mutex
	usage   core.Usage
	metered bool // the proxy read usage for this turn
}

// parked is a permission request waiting for a person's answer.
type parked struct {
	toolUseID, title, kind string
	options                []acp.PermissionOption
	reply                  chan acp.RequestPermissionOutcome
}

// run sends the turn's prompt and logs what the agent does until it
// answers. note, when set, opens the prompt of a resumed turn.
func (t *turn) run(ctx context.Context, note string) (core.Reason, error) {
	c := t.c
	wctx := context.WithoutCancel(ctx)
	started := time.Now()
	ap, how, err := t.h.connect(ctx, c)
	if err != nil {
		if ctx.Err() != nil {
			return t.stoppedBeforePrompt(ctx)
		}
		if ae := (*agentError)(nil); errors.As(err, &ae) {
			return t.fail(wctx, err.Error())
		}
		return "", err // the store's: the cycle is tried again
	}
	t.ap = ap
	events, err := c.Log.Events(wctx, c.SessionID, 0, 0)
	if err != nil {
		return "", fmt.Errorf("read log: %w", err)
	}
	fetched, err := c.Attachments.Fetch(ctx, wctx, c, t.id, events)
	if err != nil {
		if ctx.Err() != nil {
			return t.stoppedBeforePrompt(ctx)
		}
		return "", err // the store's or the platform's: the cycle is tried again
	}
	events = append(events, fetched...)
	blocks := promptBlocks(c.Agent, events, t.id, how, note, func(a core.Attachment) []acp.ContentBlock { return t.attachment(wctx, a) })
	t.rec = newRecorder(func(evs ...core.Event) error {
		_, err := c.Log.Append(wctx, c.SessionID, core.AppendRequest{Epoch: c.Epoch, TurnID: t.id, Events: evs})
		return err
	}, c.MaxToolOutput)
	t.rec.terminalOutput, t.rec.deltaEvery = ap.client.terminalOutput, t.h.TextEvery
	t.parks, t.limits, t.panicked = make(chan *parked), make(chan limitHit, 1), make(chan struct{}, 1)
	ap.client.mu.Lock()
	ap.client.turn = t
	ap.client.mu.Unlock()
	defer func() {
		ap.client.mu.Lock()
		ap.client.turn = nil
		ap.client.mu.Unlock()
	}()
	release := ap.proc.Hold()
	defer release()
	return t.prompt(ctx, blocks, started)
}

// stoppedBeforePrompt ends a turn stopped before its prompt was sent (the
// agent starting, the attachments downloading) as a turn stopped later.
func (t *turn) stoppedBeforePrompt(ctx context.Context) (core.Reason, error) {
	if r := harness.ReasonFor(ctx); r != "" {
		return t.finish(context.WithoutCancel(ctx), r)
	}
	return "", nil
}

type promptResult struct {
	resp acp.PromptResponse
	err  error
}

// prompt sends the prompt and waits for its answer, serving the turn's
// limits, Stop, and the permission requests that wait for a person.
func (t *turn) prompt(ctx context.Context, blocks []acp.ContentBlock, started time.Time) (core.Reason, error) {
	c, ap := t.c, t.ap
	wctx := context.WithoutCancel(ctx)
	// The request lives until the agent answers it or is killed: a Stop is
	// a session/cancel, which the agent answers with stopReason cancelled.
	pctx, cancelPrompt := context.WithCancel(wctx)
	defer cancelPrompt()
	done := make(chan promptResult, 1)
	go func() {
		var r promptResult
		defer func() { done <- r }()
		defer core.Recover(c.Logger, &r.err, "session_id", c.SessionID, "turn_id", t.id)
		r.resp, r.err = ap.conn.Prompt(pctx, acp.PromptRequest{SessionId: ap.acpSession, Prompt: blocks})
	}()
	deadline := time.NewTimer(time.Duration(c.Limits.TurnSeconds)*time.Second - time.Since(started))
	defer deadline.Stop()
	var (
		stopping core.Reason // why the gateway asked the agent to stop
		waiting  []string    // the calls a requires_action end waits on
		pausing  *core.BudgetPause
		grace    <-chan time.Time
		active   *parked
		parkEnd  <-chan time.Time
		cctx     = ctx // nil once its end was acted on
	)
	// end ends the turn the gateway stopped, or pauses it for a budget.
	end := func() (core.Reason, error) {
		if pausing != nil {
			t.rec.end("the turn paused for the session's budget", core.LevelProgress)
			if err := t.rec.failed(); err != nil {
				return "", err
			}
			return stopping, t.pauseTurn(wctx, pausing, time.Since(started))
		}
		return t.finish(wctx, stopping, waiting...)
	}
	stop := func(r core.Reason) {
		if stopping != "" {
			return
		}
		stopping = r
		if active != nil {
			active.reply <- acp.NewRequestPermissionOutcomeCancelled()
			active, parkEnd = nil, nil
		}
		if err := ap.conn.Cancel(wctx, acp.CancelNotification{SessionId: ap.acpSession}); err != nil {
			c.Logger.Warn("cancel the ACP agent's prompt", "session_id", c.SessionID, "err", err)
		}
		grace = time.After(t.h.CancelGrace)
	}
	for {
		var parks chan *parked
		if active == nil && stopping == "" {
			parks = t.parks
		}
		var ctxDone <-chan struct{}
		if cctx != nil {
			ctxDone = cctx.Done()
		}
		select {
		case r := <-done:
			if stopping != "" {
				// The agent's answer to a cancel, whatever it says.
				t.usageOf(r)
				t.rec.end("the turn ended ("+string(stopping)+")", core.LevelUser)
				if pausing == nil {
					if err := t.rec.failed(); err != nil {
						return "", err
					}
				}
				return end()
			}
			return t.answered(wctx, r)
		case <-ctxDone:
			cctx = nil
			r := harness.ReasonFor(ctx)
			if r == "" {
				// Shutdown or lease lost: the turn stays open for whoever
				// runs the session next; this process's agent goes now.
				if active != nil {
					active.reply <- acp.NewRequestPermissionOutcomeCancelled()
				}
				t.h.end(wctx, c.SessionID)
				return "", nil
			}
			stop(r)
		case <-deadline.C:
			if active != nil {
				// Out of time while a person decides: the turn ends waiting
				// for the answer, which starts the next.
				waiting = []string{active.toolUseID}
				stop(core.ReasonRequiresAction)
				continue
			}
			stop(core.ReasonDeadlineExceeded)
		case l := <-t.limits:
			if stopping == "" {
				pausing = l.pause
			}
			stop(l.reason)
		case <-grace:
			msg := fmt.Sprintf("the ACP agent %q did not end its turn within %s of the cancel; its process was killed", ap.cmd[0], t.h.CancelGrace)
			t.h.end(wctx, c.SessionID)
			t.rec.end("the agent was stopped", core.LevelUser)
			if err := t.logError(wctx, core.ErrorBody{Message: msg}); err != nil {
				return "", err
			}
			return end()
		case <-ap.proc.Done():
			if stopping != "" {
				t.h.end(wctx, c.SessionID)
				t.rec.end("the agent process ended", core.LevelUser)
				return end()
			}
			return t.broke(wctx, done, "exited during the turn")
		case <-ap.conn.Done():
			if stopping != "" {
				t.h.end(wctx, c.SessionID)
				t.rec.end("the agent process ended", core.LevelUser)
				return end()
			}
			// Its output ended: an exit, unless it goes on running.
			select {
			case <-ap.proc.Done():
				return t.broke(wctx, done, "exited during the turn")
			case <-time.After(exitWait):
				return t.broke(wctx, done, "broke the protocol")
			}
		case <-t.panicked:
			if active != nil {
				active.reply <- acp.NewRequestPermissionOutcomeCancelled()
			}
			return t.failPanicked(wctx)
		case p := <-parks:
			active = p
			if _, err := c.Log.Append(wctx, c.SessionID, core.AppendRequest{Epoch: c.Epoch, TurnID: t.id, Events: []core.Event{
				waitEvent(p.toolUseID),
			}}); err != nil {
				p.reply <- acp.NewRequestPermissionOutcomeCancelled()
				return "", err
			}
			parkEnd = time.After(t.h.ParkLimit)
			// An answer may be queued already.
			if err := t.answer(wctx, &active); err != nil {
				return "", err
			}
			if active == nil {
				parkEnd = nil
			}
		case <-c.Inputs:
			if active != nil {
				if err := t.answer(wctx, &active); err != nil {
					return "", err
				}
				if active == nil {
					parkEnd = nil
				}
			}
			if err := t.noteSteering(wctx); err != nil {
				return "", err
			}
		case <-parkEnd:
			// Nobody answered in time: the agent's request is cancelled and
			// the turn ends waiting for the answer, which starts the next.
			waiting = []string{active.toolUseID}
			stop(core.ReasonRequiresAction)
		}
		if err := t.rec.failed(); err != nil {
			t.h.end(wctx, c.SessionID)
			return "", err
		}
	}
}

// answer takes the queued answer to the parked request, if there is one,
// and replies to the agent with it.
func (t *turn) answer(ctx context.Context, active **parked) error {
	p := *active
	pending, err := t.c.Log.Pending(ctx, t.c.SessionID)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(pending, func(e core.Event) bool {
		if e.Type != core.TypeUserToolConfirmation {
			return false
		}
		var b core.ToolConfirmationBody
		return e.Decode(&b) == nil && b.ToolUseID == p.toolUseID
	})
	if i < 0 {
		return nil
	}
	var b core.ToolConfirmationBody
	_ = pending[i].Decode(&b)
	taken, err := t.c.Log.Append(ctx, t.c.SessionID, core.AppendRequest{Epoch: t.c.Epoch, TakeInputs: true, TurnID: t.id, Holder: t.c.Holder,
		Events: []core.Event{harness.StatusEvent(core.StatusRunning, "")}})
	if err != nil {
		return err
	}
	// Messages queued before the answer came in with it: the agent reads
	// them in a turn of their own, next.
	t.steered = t.steered || slices.ContainsFunc(taken, func(e core.Event) bool { return e.Type == core.TypeUserMessage })
	p.reply <- pick(p.options, b.Result == "allow", b.Always)
	*active = nil
	return nil
}

// standing is a person's answer for good to an earlier call of kind in
// this session (a user.tool_confirmation with always), the latest one
// winning; ok is false when there is none.
func (t *turn) standing(ctx context.Context, kind string) (allow, ok bool) {
	if kind == "" {
		return false, false
	}
	events, err := t.c.Log.Events(ctx, t.c.SessionID, 0, 0)
	if err != nil {
		return false, false
	}
	kinds := map[string]string{}
	for _, e := range events {
		switch e.Type {
		case core.TypeAgentToolUse:
			var b core.ToolUseBody
			var in struct {
				Kind string `json:"kind"`
			}
			if e.Decode(&b) == nil && json.Unmarshal(b.Input, &in) == nil {
				kinds[b.ToolUseID] = in.Kind
			}
		case core.TypeUserToolConfirmation:
			var b core.ToolConfirmationBody
			if e.Decode(&b) == nil && b.Always && kinds[b.ToolUseID] == kind {
				allow, ok = b.Result == "allow", true
			}
		}
	}
	return allow, ok
}

// steeringNote tells a person whose message arrived mid-turn when it
// will be read: an ACP agent takes no input mid-prompt.
const steeringNote = "📝 Got it: I will read your message when I finish what I am doing now."

// noteSteering tells the thread, once a turn, that a message queued while
// the agent works waits for the turn's end.
func (t *turn) noteSteering(ctx context.Context) error {
	if t.told {
		return nil
	}
	pending, err := t.c.Log.Pending(ctx, t.c.SessionID)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(pending, func(e core.Event) bool { return e.Type == core.TypeUserMessage && e.Actor == core.ActorHuman }) {
		return nil
	}
	t.told = true
	t.rec.mu.Lock()
	t.rec.log(core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorSystem, core.MessageBody{Text: steeringNote, Kind: core.MessageKindNote}))
	err = t.rec.err
	t.rec.mu.Unlock()
	return err
}

// waitEvent is the status change of a turn whose agent waits for a
// person's answer to a permission request.
func waitEvent(toolUseID string) core.Event {
	return core.NewEvent(core.TypeStatusChanged, core.LevelInternal, core.ActorSystem, core.StatusChangedBody{
		Status: core.StatusAwaitingInput, StopReason: core.ReasonRequiresAction, PendingAction: &core.PendingAction{ToolUseIDs: []string{toolUseID}}})
}

// permission answers a permission request: by the agent's policy for the
// call's kind, or, when it asks, by a person through the turn.
func (t *turn) permission(ctx context.Context, req acp.RequestPermissionRequest) acp.RequestPermissionOutcome {
	id, title, kind := t.rec.permissionCall(req.ToolCall)
	if allow, ok := t.standing(ctx, kind); ok {
		return pick(req.Options, allow, false)
	}
	switch t.c.Agent.Runtime.PermissionPolicy(kind) {
	case core.PolicyAllow:
		return pick(req.Options, true, false)
	case core.PolicyDeny:
		return pick(req.Options, false, false)
	}
	return t.wait(ctx, &parked{toolUseID: id, title: title, kind: kind, options: req.Options, reply: make(chan acp.RequestPermissionOutcome, 1)})
}

// wait parks p in the turn until a person answers it, or the wait ends.
func (t *turn) wait(ctx context.Context, p *parked) acp.RequestPermissionOutcome {
	select {
	case t.parks <- p:
	case <-ctx.Done():
		return acp.NewRequestPermissionOutcomeCancelled()
	}
	select {
	case o := <-p.reply:
		return o
	case <-ctx.Done():
		return acp.NewRequestPermissionOutcomeCancelled()
	}
}

// pick is the option that allows (or rejects) this once, else always
// (always first when the answer is for good), else the cancelled
// outcome.
func pick(options []acp.PermissionOption, allow, always bool) acp.RequestPermissionOutcome {
	kinds := []acp.PermissionOptionKind{acp.PermissionOptionKindRejectOnce, acp.PermissionOptionKindRejectAlways}
	if allow {
		kinds = []acp.PermissionOptionKind{acp.PermissionOptionKindAllowOnce, acp.PermissionOptionKindAllowAlways}
	}
	if always {
		kinds[0], kinds[1] = kinds[1], kinds[0]
	}
	for _, k := range kinds {
		for _, o := range options {
			if o.Kind == k {
				return acp.NewRequestPermissionOutcomeSelected(o.OptionId)
			}
		}
	}
	return acp.NewRequestPermissionOutcomeCancelled()
}

// usageOf counts the usage the agent reported with its answer, unless
// the proxy metered the turn's model calls (it counts them itself).
func (t *turn) usageOf(r promptResult) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if u := r.resp.Usage; u != nil && r.err == nil && !t.metered {
		t.usage = t.usage.Add(core.Usage{InputTokens: int64(u.InputTokens), OutputTokens: int64(u.OutputTokens)})
	}
}

// answered ends the turn with the agent's answer to a prompt nobody
// stopped.
func (t *turn) answered(ctx context.Context, r promptResult) (core.Reason, error) {
	if t.faulted() || errors.Is(r.err, core.ErrPanicked) {
		return t.failPanicked(ctx)
	}
	if r.err != nil {
		t.rec.end("the prompt failed", core.LevelUser)
		if err := t.rec.failed(); err != nil {
			return "", err
		}
		return t.fail(ctx, t.ap.failure("failed the prompt: "+r.err.Error()))
	}
	t.usageOf(r)
	var reason core.Reason
	{
		switch r.resp.StopReason {
		case acp.StopReasonEndTurn:
			reason = core.ReasonCompleted
		case acp.StopReasonMaxTokens:
			reason = core.ReasonBudgetExceeded
		case acp.StopReasonMaxTurnRequests:
			reason = core.ReasonMaxSteps
		case acp.StopReasonCancelled:
			reason = core.ReasonCanceled
		case acp.StopReasonRefusal:
			t.rec.end("the agent refused", core.LevelUser)
			if err := t.rec.failed(); err != nil {
				return "", err
			}
			return t.fail(ctx, fmt.Sprintf("the ACP agent %q refused to go on with this request", t.ap.cmd[0]))
		default:
			reason = core.ReasonCompleted
		}
	}
	t.rec.end("the turn ended ("+string(reason)+")", core.LevelUser)
	if err := t.rec.failed(); err != nil {
		return "", err
	}
	return t.finish(ctx, reason)
}

// broke ends a turn whose agent exited or broke the protocol; an answer
// that arrived first still counts.
func (t *turn) broke(ctx context.Context, done chan promptResult, what string) (core.Reason, error) {
	select {
	case r := <-done:
		if r.err == nil {
			return t.answered(ctx, r)
		}
	case <-time.After(100 * time.Millisecond):
		// The answer, if any, was read before the stream ended.
	}
	msg := t.ap.failure(what)
	t.h.end(ctx, t.c.SessionID)
	t.rec.end("the agent process ended", core.LevelUser)
	if err := t.rec.failed(); err != nil {
		return "", err
	}
	return t.fail(ctx, msg)
}

// logError logs a user-level session.error of the turn.
func (t *turn) logError(ctx context.Context, b core.ErrorBody) error {
	t.c.Logger.Warn("ACP turn failed", "session_id", t.c.SessionID, "turn_id", t.id, "err", b.Message)
	ev := core.NewEvent(core.TypeError, core.LevelUser, core.ActorSystem, b)
	if _, err := t.c.Log.Append(ctx, t.c.SessionID, core.AppendRequest{Epoch: t.c.Epoch, TurnID: t.id, Events: []core.Event{ev}}); err != nil {
		return fmt.Errorf("log error: %w", err)
	}
	return nil
}

// fail logs msg and ends the turn with reason error.
func (t *turn) fail(ctx context.Context, msg string) (core.Reason, error) {
	if err := t.logError(ctx, core.ErrorBody{Message: msg}); err != nil {
		return "", err
	}
	return t.finish(ctx, core.ReasonError)
}

// finish logs turn.completed and the status it leads to.
func (t *turn) finish(ctx context.Context, r core.Reason, waiting ...string) (core.Reason, error) {
	c := t.c
	t.mu.Lock()
	cost, usage := t.cost(), t.usage
	t.mu.Unlock()
	body := core.TurnCompletedBody{YieldReason: r, Usage: usage, CostUSD: cost, PendingToolUseIDs: waiting}
	if _, err := c.Log.Append(ctx, c.SessionID, core.AppendRequest{
		Epoch: c.Epoch, TurnID: t.id,
		// A cancelled turn takes the interrupt that cancelled it, and what
		// was queued before it.
		TakeInputs: r == core.ReasonCanceled,
		Events: []core.Event{
			core.NewEvent(core.TypeTurnCompleted, core.LevelInternal, core.ActorSystem, body),
			harness.StatusEvent(core.StatusAfter(r), r),
		},
	}); err != nil {
		return "", fmt.Errorf("log turn completed: %w", err)
	}
	if t.h.Observer != nil {
		t.h.Observer.TurnCompleted(harness.TurnReport{Agent: c.Agent.Name, Installation: c.Installation, Model: c.Agent.Model, Reason: r, Usage: usage, CostUSD: cost})
	}
	return r, nil
}

// resume carries on a turn a process left open (a crash, a move): its
// agent process went with it, so the open tool calls get their
// "interrupted" results and the agent is asked to go on.
func (t *turn) resume(ctx context.Context, s *core.Session) (core.Reason, error) {
	c := t.c
	wctx := context.WithoutCancel(ctx)
	events, err := c.Log.Events(wctx, c.SessionID, 0, 0)
	if err != nil {
		return "", fmt.Errorf("read log: %w", err)
	}
	so, why := pausedSoFar(events, t.id)
	if so != nil {
		// A raise requeues the paused turn whichever limit it raised: one
		// that still does not fit pauses it again before the agent is
		// prompted.
		t.usage, t.resumed = so.Usage, so.Usage
		if over := t.stillOver(s, why); over != nil {
			return "", t.pauseTurn(wctx, over, time.Duration(so.ActiveMS)*time.Millisecond)
		}
	}
	var results []core.Event
	for _, id := range openCalls(events, t.id) {
		results = append(results, core.NewEvent(core.TypeAgentToolResult, core.LevelProgress, core.ActorSystem,
			core.ToolResultBody{ToolUseID: id, Output: interruptedOutput, IsError: true}))
	}
	evs := results
	if s.Status != core.StatusRunning {
		evs = append(evs, harness.StatusEvent(core.StatusRunning, ""))
	}
	if len(evs) > 0 {
		if _, err := c.Log.Append(wctx, c.SessionID, core.AppendRequest{Epoch: c.Epoch, TurnID: t.id, Holder: c.Holder, Events: evs}); err != nil {
			return "", err
		}
	}
	note := resumeNote
	if so != nil {
		// Raised: the paused turn goes on, its usage so far counted once.
		note = budgetRaisedNote
		if why == core.ReasonMaxTurns {
			// Paused before its prompt: its inputs are prompted now.
			note = ""
		}
	}
	return t.run(ctx, note)
}

// pausedSoFar is what the turn had used when a budget (or max_turns)
// last paused it, and why it paused; nil when it never paused.
func pausedSoFar(events []core.Event, turnID string) (*core.TurnSoFar, core.Reason) {
	for i := len(events) - 1; i >= 0; i-- {
		e := events[i]
		if e.TurnID != turnID || e.Type != core.TypeStatusChanged {
			continue
		}
		var b core.StatusChangedBody
		if e.Decode(&b) == nil && b.Turn != nil {
			return b.Turn, b.StopReason
		}
	}
	return nil, ""
}

// interruptedOutput is the result of a tool call whose agent process
// died with the gateway.
const interruptedOutput = "interrupted by restart: the gateway stopped while this tool call was running; its effects are unknown"

// resumeNote opens the prompt of a turn resumed after a restart.
const resumeNote = "[The gateway restarted while you were working on the request below, and your process with it. Carry on from where you stopped; " +
	"check the workspace for what was already done, and do not repeat actions whose effects stand (messages sent, comments posted, branches pushed).]"

// openCalls are the tool calls of turn turnID with no result.
func openCalls(events []core.Event, turnID string) []string {
	var open []string
	for _, e := range events {
		if e.TurnID != turnID {
			continue
		}
		switch e.Type {
		case core.TypeAgentToolUse:
			var b core.ToolUseBody
			if e.Decode(&b) == nil {
				open = append(open, b.ToolUseID)
			}
		case core.TypeAgentToolResult:
			var b core.ToolResultBody
			if e.Decode(&b) == nil {
				open = slices.DeleteFunc(open, func(id string) bool { return id == b.ToolUseID })
			}
		}
	}
	return open
}
