package acpclient

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/engine/harness"
)

// Defaults of the harness's bounds.
const (
	DefaultInitTimeout = 60 * time.Second
	DefaultCancelGrace = 10 * time.Second
	DefaultParkLimit   = 10 * time.Minute
)

// Harness runs the turns of agents whose runtime is acp. One serves every
// such session of the gateway; it keeps a live agent process per session
// whose sandbox is warm, and nothing for the others.
type Harness struct {
	Sandbox core.ProcessSandbox
	// Prices estimates a turn's cost from its usage on the agent's model
	// (nil prices nothing); Observer is told of each completed turn.
	Prices   harness.Pricer
	Observer harness.Observer
	// InitTimeout bounds starting the agent and its answer to initialize
	// and session/new or session/load; CancelGrace how long a cancelled
	// prompt has to end before the process is killed; ParkLimit how long
	// a permission request holds the process while it waits for a person
	// (within the turn's turn_seconds), after which the turn ends
	// requires_action and the sandbox may hibernate.
	InitTimeout time.Duration
	CancelGrace time.Duration
	ParkLimit   time.Duration
	// ClientVersion is the gateway's version, told to agents.
	ClientVersion string
	// TextEvery is how often the agent's text is logged as it streams
	// (agent.message_delta); 0 logs none.
	TextEvery time.Duration
	// Leases and Holder (this replica's id) tell a sandbox whose session
	// moved to another replica (Fenced); nil tells none.
	Leases Leases
	Holder string
	Logger *slog.Logger

	mu     sync.Mutex
	agents map[string]*agentProc // by session id
}

var _ harness.Harness = (*Harness)(nil)

func (h *Harness) logger() *slog.Logger {
	if h.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return h.Logger
}

func (h *Harness) defaults() {
	if h.InitTimeout <= 0 {
		h.InitTimeout = DefaultInitTimeout
	}
	if h.CancelGrace <= 0 {
		h.CancelGrace = DefaultCancelGrace
	}
	if h.ParkLimit <= 0 {
		h.ParkLimit = DefaultParkLimit
	}
}

// Run takes the session's pending inputs and runs one prompt per turn
// until none is left or a turn yields for a person.
func (h *Harness) Run(ctx context.Context, c *harness.Cycle) (harness.Outcome, error) {
	h.defaults()
	if c.Logger == nil {
		c.Logger = h.logger()
	}
	var out harness.Outcome
	wctx := context.WithoutCancel(ctx)
	steered := false // the last turn took messages it could not prompt
	for {
		if ctx.Err() != nil {
			h.letGo(wctx, c.SessionID, context.Cause(ctx))
			return out, nil
		}
		s, err := c.Log.GetSession(ctx, c.SessionID)
		if err != nil {
			return out, err
		}
		if s.Status == core.StatusArchived {
			h.end(wctx, c.SessionID)
			return out, nil
		}
		if s.BudgetPaused() {
			out.Paused = true
			return out, nil
		}
		t := &turn{h: h, c: c, id: s.TurnID, before: s.Usage, beforeCost: s.CostUSD}
		var reason core.Reason
		switch {
		case s.TurnID != "" && s.PendingAction != nil && len(s.PendingAction.ToolUseIDs) > 0:
			// The turn waited on a permission request when its process
			// went (a crash, a move): the request went with it. Its
			// answer starts the next turn, which tells the agent.
			reason, err = t.finish(wctx, core.ReasonRequiresAction, s.PendingAction.ToolUseIDs...)
		case s.TurnID != "":
			reason, err = t.resume(ctx, s)
		case steered:
			// The messages the last turn took mid-prompt are this one's.
			t.id = core.NewID(core.PrefixTurn)
			if _, err := c.Log.Append(wctx, c.SessionID, core.AppendRequest{Epoch: c.Epoch, TakeInputs: true, TurnID: t.id, Holder: c.Holder, Events: []core.Event{
				harness.StatusEvent(core.StatusRunning, ""),
				core.NewEvent(core.TypeTurnStarted, core.LevelInternal, core.ActorSystem, struct{}{}),
			}}); err != nil {
				return out, err
			}
			reason, err = t.start(ctx, s)
		default:
			opened, again, oerr := harness.OpenTurn(wctx, c)
			switch {
			case oerr != nil:
				return out, oerr
			case again:
				continue
			case opened == "":
				// Messages a turn took mid-prompt wait for their own, even
				// across a restart between the two.
				events, err := c.Log.Events(wctx, c.SessionID, 0, 0)
				if err != nil {
					return out, fmt.Errorf("read log: %w", err)
				}
				if steered = unprompted(events); steered {
					continue
				}
				return out, nil
			}
			t.id = opened
			reason, err = t.start(ctx, s)
		}
		out.Usage = out.Usage.Add(t.usage.Sub(t.resumed))
		if t.paused {
			out.Paused = true
			return out, err
		}
		if err != nil || reason == "" {
			if reason == "" && err == nil {
				h.letGo(wctx, c.SessionID, context.Cause(ctx))
			}
			return out, err
		}
		out.Turns++
		out.Reason = reason
		steered = t.steered && reason == core.ReasonCompleted
		if steered {
			continue
		}
		if reason != core.ReasonCompleted && reason != core.ReasonCanceled {
			pending, err := c.Log.Pending(ctx, c.SessionID)
			if err != nil || len(pending) == 0 {
				return out, err
			}
		}
	}
}

// unprompted reports whether the last turn completed with messages it
// took mid-prompt, which no turn has prompted yet.
func unprompted(events []core.Event) bool {
	started := -1
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Type == core.TypeTurnStarted {
			started = i
			break
		}
	}
	if started < 0 {
		return false
	}
	id, steer := events[started].TurnID, false
	for _, e := range events[started+1:] {
		switch {
		case e.Type == core.TypeUserMessage && e.TurnID == id && e.Actor == core.ActorHuman:
			steer = true
		case e.Type == core.TypeTurnCompleted:
			var b core.TurnCompletedBody
			if e.Decode(&b) != nil || b.YieldReason != core.ReasonCompleted {
				return false
			}
		}
	}
	return steer && currentTurn(events) == ""
}

// letGo ends the session's agent process when the cycle stops for good
// here: at shutdown (the next process resumes the turn with a process of
// its own) and when another replica took the session.
func (h *Harness) letGo(ctx context.Context, sessionID string, cause error) {
	if errors.Is(cause, harness.ErrShutdown) || errors.Is(cause, core.ErrLeaseLost) {
		h.end(ctx, sessionID)
	}
}

// end kills the session's agent process, if it has one.
func (h *Harness) end(ctx context.Context, sessionID string) {
	h.mu.Lock()
	ap := h.agents[sessionID]
	delete(h.agents, sessionID)
	h.mu.Unlock()
	if ap != nil {
		if err := ap.kill(ctx); err != nil {
			h.logger().Warn("end an ACP agent process", "session_id", sessionID, "err", err)
		}
	}
}

// Close ends every agent process (the gateway is stopping).
func (h *Harness) Close(ctx context.Context) {
	h.mu.Lock()
	ids := slices.Collect(maps.Keys(h.agents))
	h.mu.Unlock()
	for _, id := range ids {
		h.end(ctx, id)
	}
}

// connect returns the session's live agent process with its ACP session
// open, starting one when there is none (or it runs another version of
// the agent). A process outlives the leases of this replica on the
// session: one lost kills it (letGo). how says how the ACP
// session was opened (core.RuntimeNew…), "" for a process that was live.
func (h *Harness) connect(ctx context.Context, c *harness.Cycle) (ap *agentProc, how string, err error) {
	h.mu.Lock()
	ap = h.agents[c.SessionID]
	h.mu.Unlock()
	if ap != nil && ap.alive() && ap.agent == (core.AgentRef{ID: c.Agent.ID, Version: c.Agent.Version}) {
		return ap, "", nil
	}
	if ap != nil {
		h.end(ctx, c.SessionID)
	}
	ap, err = h.start(ctx, c)
	if err != nil {
		return nil, "", err
	}
	how, err = h.open(ctx, c, ap)
	if err != nil {
		_ = ap.kill(ctx)
		return nil, "", err
	}
	h.mu.Lock()
	if h.agents == nil {
		h.agents = map[string]*agentProc{}
	}
	h.agents[c.SessionID] = ap
	h.mu.Unlock()
	return ap, how, nil
}

// open opens the agent's ACP session: the one of before with
// session/load when the log names one and the agent can load it, else a
// new one (told the log so far when there is one, by the prompt). It logs
// session.runtime_started saying which.
func (h *Harness) open(ctx context.Context, c *harness.Cycle, ap *agentProc) (string, error) {
	events, err := c.Log.Events(ctx, c.SessionID, 0, 0)
	if err != nil {
		return "", fmt.Errorf("read log: %w", err)
	}
	before := lastAgentSession(events)
	octx, cancel := h.bounded(ctx, ap, h.InitTimeout)
	defer cancel()
	how := core.RuntimeNew
	if before != "" {
		how = core.RuntimeSummary
	}
	if before != "" && ap.caps.LoadSession {
		ap.client.mu.Lock()
		ap.client.replaying = true
		ap.client.mu.Unlock()
		_, err := ap.conn.LoadSession(octx, acp.LoadSessionRequest{SessionId: acp.SessionId(before), Cwd: core.SandboxWorkspace, McpServers: h.mcpServers(octx, ap, c.SessionID)})
		ap.client.mu.Lock()
		ap.client.replaying = false
		ap.client.mu.Unlock()
		if err == nil {
			ap.acpSession, how = acp.SessionId(before), core.RuntimeLoaded
		} else {
			c.Logger.Warn("the ACP agent could not load its session; opening a new one told the log so far", "session_id", c.SessionID, "acp_session", before, "err", err)
		}
	}
	if ap.acpSession == "" {
		resp, err := ap.conn.NewSession(octx, acp.NewSessionRequest{Cwd: core.SandboxWorkspace, McpServers: h.mcpServers(octx, ap, c.SessionID)})
		if err != nil {
			return "", &agentError{msg: ap.failure("did not open a session" + h.why(octx, err))}
		}
		ap.acpSession = resp.SessionId
		if m := c.Agent.Runtime.Model; m != "" {
			// Best effort: agents that cannot switch models say so.
			if _, err := ap.conn.UnstableSetSessionModel(octx, acp.UnstableSetSessionModelRequest{SessionId: resp.SessionId, ModelId: acp.UnstableModelId(m)}); err != nil {
				c.Logger.Warn("the ACP agent did not take the agent's model", "session_id", c.SessionID, "model", m, "err", err)
			}
		}
	}
	body := core.RuntimeStartedBody{Kind: core.RuntimeACP, Command: ap.cmd, AgentSession: string(ap.acpSession), How: how}
	if ap.info != nil {
		body.AgentName, body.AgentVersion = ap.info.Name, ap.info.Version
	}
	if _, err := c.Log.Append(context.WithoutCancel(ctx), c.SessionID, core.AppendRequest{Epoch: c.Epoch, TurnID: currentTurn(events),
		Events: []core.Event{core.NewEvent(core.TypeRuntimeStarted, core.LevelInternal, core.ActorSystem, body)}}); err != nil {
		return "", err
	}
	return how, nil
}

// lastAgentSession is the ACP session id the log last named.
func lastAgentSession(events []core.Event) string {
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Type != core.TypeRuntimeStarted {
			continue
		}
		var b core.RuntimeStartedBody
		if events[i].Decode(&b) == nil && b.AgentSession != "" {
			return b.AgentSession
		}
	}
	return ""
}

// currentTurn is the turn the log's last turn.started opened, if it is
// still open.
func currentTurn(events []core.Event) string {
	for i := len(events) - 1; i >= 0; i-- {
		switch events[i].Type {
		case core.TypeTurnCompleted:
			return ""
		case core.TypeTurnStarted:
			return events[i].TurnID
		}
	}
	return ""
}

// Leases says which replica holds a session now (core.LeaseStore's
// LastHolder).
type Leases interface {
	LastHolder(ctx context.Context, sessionID string) (string, error)
}

// Fenced says why the session's sandbox on this replica may no longer
// reach its model provider or its platform tools: another replica took
// the session, and what runs here is a leftover of a lost lease. ""
// when it may, or when the store cannot tell (its turn's own writes are
// fenced by the store anyway).
func (h *Harness) Fenced(ctx context.Context, sessionID string) string {
	if h.Leases == nil || h.Holder == "" {
		return ""
	}
	holder, err := h.Leases.LastHolder(ctx, sessionID)
	if err != nil || holder == "" || holder == h.Holder {
		return ""
	}
	return "the session's turn runs on another replica now"
}
