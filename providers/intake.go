package providers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/switchboardhq/switchboard/core"
)

// Trigger is what a provider decided an inbound event asks for: an input
// for the session of an origin key. Verifying, decoding and the trigger
// rules are the provider's; everything after is the Intake's.
type Trigger struct {
	// Installation is the tenant the event came from; its bound agent (or
	// the agent named "default") runs a session the trigger starts.
	Installation *core.Installation
	// Origin of the session; Origin.Key is the key that maps to it.
	Origin core.Origin
	// Metadata is set on a session the trigger starts.
	Metadata map[string]string
	// Tenant partitions the memory of a session the trigger starts (the
	// platform's workspace, repository or organization: "slack:<team>",
	// "github:<owner>/<repo>", "linear:<organization>"); a session that
	// exists keeps its own.
	Tenant string
	// Input is queued on the session: a user.message, a user.interrupt
	// (which stops its running turn), an answer to a question.
	Input core.Event
	// StartInput, when set, is queued instead of Input if the trigger
	// starts the session: it carries the first turn's context.
	StartInput *core.Event
	// Dedupe names the delivery (webhook ids, message identities): if any
	// was seen before, nothing is written.
	Dedupe []string
	// Twin says the platform delivers this input as two events (a chat
	// message that mentions the app comes as a mention and as a
	// message): finding it stored already is expected, not a repeated
	// delivery worth a line at info. A platform's retry is never a twin.
	Twin bool
	// Continue only steers a session that exists (a reply in a thread the
	// agent is in, a button, a stop); it never starts one.
	Continue bool
	// Budget, when set, is a thread command that sets the budgets of the
	// key's session ("budget $5") instead of an input: only a user among
	// the installation's budget approvers may. Input is not queued.
	Budget *core.Limits
	// Actor is the platform's id of the person who wrote the trigger (a
	// Slack user id, a GitHub login, a Linear user id).
	Actor string
	// ContinueURL, when set, is a thread command ("continue <URL>") that
	// links this trigger's key to the session at that address instead of
	// an input.
	ContinueURL string
	// Editor is the editor command: the asker wants to open the thread's
	// session in their editor. Private says the provider answers the
	// asker alone (Routed.Note then holds a token); Person is the asker's
	// name as the platform shows it (Actor when unknown). Guest says the
	// asker is not a member of the installation's workspace (a guest of
	// a channel shared with another one): they get no token.
	Editor  bool
	Private bool
	Person  string
	Guest   bool
}

// Outcome is what became of a trigger.
type Outcome int

const (
	// Queued: the input is durably queued on Routed.Session.
	Queued Outcome = iota
	// Duplicate: a dedupe key was seen before; nothing written.
	Duplicate
	// NoSession: a Continue trigger for a key no session serves.
	NoSession
	// Archived: the key's session is archived (read-only).
	Archived
	// NoAgent: the trigger would start a session, but the installation
	// has no agent to run it (none bound and none named "default").
	NoAgent
	// BudgetSet: a budget command set the session's budget (Routed.Note
	// says so, and whether the paused turn resumes).
	BudgetSet
	// BudgetRefused: a budget command from someone who may not set it, or
	// for a thread without a session; Routed.Note says why.
	BudgetRefused
	// Linked: a continue command linked the trigger's key to a session.
	Linked
	// LinkRefused: a continue command could not link; Routed.Note says why.
	LinkRefused
	// EditorAnswered: an editor command; Routed.Note is the answer, for
	// the asker alone when the trigger was Private.
	EditorAnswered
)

func (o Outcome) String() string {
	return [...]string{"queued", "duplicate", "no_session", "archived", "no_agent", "budget_set", "budget_refused", "linked", "link_refused", "editor_answered"}[o]
}

// Routed tells what the Intake did with a trigger.
type Routed struct {
	Outcome Outcome
	Session *core.Session // Queued and Duplicate (when the key has one)
	Created bool          // the trigger started the session
	// Note is what the provider tells the thread (budget commands).
	Note string
}

// IntakeStore is what the Intake needs of the session store.
type IntakeStore interface {
	GetAgent(ctx context.Context, idOrName string) (*core.Agent, error)
	GetAgentVersion(ctx context.Context, id string, version int) (*core.Agent, error)
	CreateSession(ctx context.Context, req core.NewSession) (*core.CreateResult, error)
	SessionByKey(ctx context.Context, key string) (*core.Session, error)
	SetSessionLimits(ctx context.Context, sessionID string, l core.Limits, actor core.Actor) (*core.Session, error)
	AddLink(ctx context.Context, sessionID string, l core.LinkBody) (*core.Session, error)
	// Once claims a command's dedupe keys, for a command answered
	// without queueing an input.
	core.OnceStore
}

// Intake is the one intake path from a decided trigger to a queued input:
// dedupe, claim-or-create of the origin key's session and the queueing
// happen in one store transaction. Nothing else is needed to run it: the
// store's commit stream wakes the runtime (or interrupts the turn) and the
// platform's output sink.
type Intake struct {
	Store  IntakeStore
	Logger *slog.Logger
	// Links reads addresses and installations for continue commands
	// (the Set); without it they are refused.
	Links LinkResolver
	// AttachTokens, when set, answers an editor command asked privately
	// with an attach token; PublicURL is the gateway's address the
	// answer's command line and console links name.
	AttachTokens AttachTokenIssuer
	PublicURL    string
}

// LinkResolver is what a continue command needs of the providers.
type LinkResolver interface {
	KeyOfURL(ctx context.Context, raw string) (string, error)
	// Threads says what the addresses KeyOfURL reads name.
	Threads() string
	InstallationOfKey(ctx context.Context, key string) (*core.Installation, error)
}

// Route stores a trigger's input. An error means nothing was stored and the
// platform should deliver the event again (answer 5xx).
func (r *Intake) Route(ctx context.Context, t Trigger) (Routed, error) {
	log := r.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("provider", t.Origin.Provider, "key", t.Origin.Key)
	if t.Budget != nil {
		return r.setBudget(ctx, t, log)
	}
	if t.ContinueURL != "" {
		return r.continueAt(ctx, t, log)
	}
	if t.Editor {
		return r.editor(ctx, t, log)
	}
	// The inputs say where they came from: with links, a session hears
	// from more than its origin.
	t.Input.SourceKey = t.Origin.Key
	if t.StartInput != nil {
		start := *t.StartInput
		start.SourceKey = t.Origin.Key
		t.StartInput = &start
	}
	req := core.NewSession{
		ExternalKey:  t.Origin.Key,
		Inputs:       []core.Event{t.Input},
		Dedupe:       t.Dedupe,
		OnlyExisting: t.Continue,
	}
	if t.StartInput != nil {
		req.StartInputs = []core.Event{*t.StartInput}
	}
	noAgent := false
	if !t.Continue {
		agent, err := r.agentFor(ctx, t.Installation)
		switch {
		case errors.Is(err, core.ErrNotFound):
			// A session that exists keeps its agent; only a new one needs
			// the installation's.
			noAgent, req.OnlyExisting = true, true
		case err != nil:
			return Routed{}, err
		default:
			origin := t.Origin
			req.Session = core.Session{Agent: core.AgentRef{ID: agent.ID, Version: agent.Version}, Origin: &origin, Metadata: t.Metadata, Tenant: t.Tenant}
		}
	}
	res, err := r.Store.CreateSession(ctx, req)
	switch {
	case errors.Is(err, core.ErrArchived):
		log.Info("input for an archived session; ignored")
		return Routed{Outcome: Archived}, nil
	case err != nil:
		return Routed{}, fmt.Errorf("route %s: %w", t.Origin.Key, err)
	case res.Duplicate && t.Twin:
		log.Debug("the other event of the same message; nothing stored")
		return Routed{Outcome: Duplicate, Session: res.Session}, nil
	case res.Duplicate:
		log.Info("repeated delivery; nothing stored")
		return Routed{Outcome: Duplicate, Session: res.Session}, nil
	case res.Session == nil && noAgent:
		log.Warn("no agent to answer: set SWITCHBOARD_MODEL or bind the installation to an agent", "installation_id", installationID(t.Installation))
		return Routed{Outcome: NoAgent}, nil
	case res.Session == nil:
		log.Debug("no session serves the key; ignored")
		return Routed{Outcome: NoSession}, nil
	}
	log.Info("input queued", "session_id", res.Session.ID, "type", t.Input.Type, "created", res.Created)
	return Routed{Outcome: Queued, Session: res.Session, Created: res.Created}, nil
}

// setBudget sets the budgets of the key's session from a thread command,
// if the person who wrote it is one of the installation's approvers.
func (r *Intake) setBudget(ctx context.Context, t Trigger, log *slog.Logger) (Routed, error) {
	if t.Installation == nil || t.Actor == "" || !slices.Contains(t.Installation.BudgetApprovers, t.Actor) {
		log.Info("budget command refused: not a budget approver", "actor", t.Actor, "installation_id", installationID(t.Installation))
		return Routed{Outcome: BudgetRefused, Note: "Only this installation's budget approvers can change a session's budget; " +
			"an admin can add you to its budget_approvers, or raise the budget with the API or the console."}, nil
	}
	s, err := r.Store.SessionByKey(ctx, t.Origin.Key)
	if errors.Is(err, core.ErrNotFound) {
		return Routed{Outcome: BudgetRefused, Note: "There is no session here to set a budget for yet."}, nil
	}
	if err != nil {
		return Routed{}, fmt.Errorf("route %s: %w", t.Origin.Key, err)
	}
	before := s
	s, err = r.Store.SetSessionLimits(ctx, s.ID, *t.Budget, core.ActorHuman)
	if errors.Is(err, core.ErrArchived) {
		return Routed{Outcome: Archived}, nil
	}
	if err != nil {
		return Routed{}, fmt.Errorf("route %s: %w", t.Origin.Key, err)
	}
	note := "This session's budget is now " + t.Budget.BudgetsText() + "."
	if before.BudgetPaused() {
		// The limits are saved by now: a failure to read the agent costs
		// only the word on whether the turn goes on.
		if held, err := r.stillHeld(ctx, before, s); err != nil {
			log.Warn("budget command: cannot tell whether the paused turn goes on", "session_id", s.ID, "err", err)
		} else {
			note += " " + resumeNote(held)
		}
	}
	log.Info("session budget set from its thread", "session_id", s.ID, "actor", t.Actor, "limits", *t.Budget)
	return Routed{Outcome: BudgetSet, Session: s, Note: note}, nil
}

// stillHeld is the limit that, under the session's limits after a raise
// (after), still holds the turn that paused before it, or nil when the
// turn goes on. It checks what the runtime checks when the raise resumes
// the turn, with the spending the pause recorded: the paused turn's own
// usage is known only for the budget that paused it.
func (r *Intake) stillHeld(ctx context.Context, before, after *core.Session) (*core.BudgetPause, error) {
	agent, err := r.Store.GetAgentVersion(ctx, after.Agent.ID, after.Agent.Version)
	if err != nil {
		return nil, fmt.Errorf("agent %s v%d: %w", after.Agent.ID, after.Agent.Version, err)
	}
	l := after.LimitsOver(agent.Limits)
	paused := before.PendingAction.Budget
	if paused.Name == core.BudgetTurns {
		if over := core.OverTurns(l, before.Turns); over != nil {
			return over, nil
		}
	}
	tokens, cost := before.Usage.Total(), before.CostUSD
	switch paused.Name {
	case core.BudgetTokens:
		tokens = max(tokens, int64(paused.Spent))
	case core.BudgetCostUSD:
		spent := paused.Spent
		cost = &spent
	}
	return core.OverBudget(l, tokens, cost), nil
}

// resumeNote ends the confirmation of a raise of a paused session: it
// goes on, or the limit that still holds it stays to be raised.
func resumeNote(held *core.BudgetPause) string {
	if held == nil {
		return "Continuing where I paused."
	}
	return fmt.Sprintf("I stay paused: this session is still at its limit of %s (%s); raise that to continue.",
		core.FormatBudget(held.Name, held.Limit), held.Name)
}

// agentFor is the agent an installation's new sessions run: the bound one,
// else the agent named default (its latest version).
func (r *Intake) agentFor(ctx context.Context, in *core.Installation) (*core.Agent, error) {
	ref := "default"
	if in != nil && in.Agent != "" {
		ref = in.Agent
	}
	return r.Store.GetAgent(ctx, ref)
}

func installationID(in *core.Installation) string {
	if in == nil {
		return ""
	}
	return in.ID
}
