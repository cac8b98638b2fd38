package core

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
)

// Status is a session's state (docs/api.md, "Statuses and stop reasons").
type Status string

const (
	StatusQueued        Status = "queued"
	StatusRunning       Status = "running"
	StatusAwaitingInput Status = "awaiting_input"
	StatusIdle          Status = "idle"
	StatusFailed        Status = "failed"
	StatusArchived      Status = "archived"
)

// Reason is why a turn yielded, or why a session stopped.
type Reason string

const (
	ReasonCompleted        Reason = "completed"
	ReasonNeedsInput       Reason = "needs_input"
	ReasonRequiresAction   Reason = "requires_action"
	ReasonCanceled         Reason = "canceled"
	ReasonDeadlineExceeded Reason = "deadline_exceeded"
	ReasonBudgetExceeded   Reason = "budget_exceeded"
	ReasonMaxSteps         Reason = "max_steps"
	ReasonMaxTurns         Reason = "max_turns" // pauses the turn past limits.max_turns; never ends one
	ReasonError            Reason = "error"
)

// MarshalJSON writes the empty reason (none yet) as null, as the session
// view does.
func (r Reason) MarshalJSON() ([]byte, error) {
	if r == "" {
		return []byte("null"), nil
	}
	return json.Marshal(string(r))
}

// UnmarshalJSON accepts null as the empty reason.
func (r *Reason) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*r = ""
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("reason: %w", err)
	}
	*r = Reason(s)
	return nil
}

// StatusAfter is the status a session takes when a turn yields with r.
func StatusAfter(r Reason) Status {
	switch r {
	case ReasonNeedsInput, ReasonRequiresAction:
		return StatusAwaitingInput
	case ReasonError:
		return StatusFailed
	}
	return StatusIdle
}

// Usage counts model tokens. InputTokens excludes the prompt tokens read
// from or written to the provider's prompt cache, which are counted apart
// (and priced apart): both model clients normalise to this, although
// OpenAI's prompt_tokens include the cached ones.
type Usage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
}

// Add returns u + v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		InputTokens:              u.InputTokens + v.InputTokens,
		OutputTokens:             u.OutputTokens + v.OutputTokens,
		CacheReadInputTokens:     u.CacheReadInputTokens + v.CacheReadInputTokens,
		CacheCreationInputTokens: u.CacheCreationInputTokens + v.CacheCreationInputTokens,
	}
}

// Sub returns u - v.
func (u Usage) Sub(v Usage) Usage {
	return Usage{
		InputTokens:              u.InputTokens - v.InputTokens,
		OutputTokens:             u.OutputTokens - v.OutputTokens,
		CacheReadInputTokens:     u.CacheReadInputTokens - v.CacheReadInputTokens,
		CacheCreationInputTokens: u.CacheCreationInputTokens - v.CacheCreationInputTokens,
	}
}

// Total is every token the model read or wrote: input, cached input and
// output. The per-turn max_tokens limit counts it.
func (u Usage) Total() int64 {
	return u.InputTokens + u.OutputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens
}

// TurnResult is a finished turn's answer: the last user-level message it
// logged (its final answer, a question, or the error that ended it; empty
// when it logged none, as a turn stopped before it answered) and why it
// ended.
type TurnResult struct {
	TurnID      string `json:"turn_id"`
	YieldReason Reason `json:"yield_reason"`
	Text        string `json:"text"`
	CompletedAt Time   `json:"completed_at"`
}

// RoundUSD rounds an estimated cost to the nano-dollar, so that sums of
// many turns' costs read cleanly.
func RoundUSD(usd float64) float64 { return math.Round(usd*1e9) / 1e9 }

// AddCost sums two estimated costs, nil meaning "not priced": the sum of
// a priced and an unpriced cost is the priced one.
func AddCost(a, b *float64) *float64 {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	sum := RoundUSD(*a + *b)
	return &sum
}

// Origin says where a session came from (null for API sessions).
type Origin struct {
	// Provider is the platform the session came from: the name of its
	// provider (providers.Platform.Name), never a model's vendor.
	Provider string `json:"provider"`
	// Key is the origin key, <provider>:<the platform's address of the
	// thread>, that routes to the session.
	Key string `json:"key"`
	// TenantID is the platform's own id of what the gateway is installed
	// in there, which the session came through (a workspace "T0123", an
	// App installation, an organization): the installation's ExternalID.
	// It is not the session's Tenant, the qualified name its memory is
	// partitioned by ("<provider>:T0123", "<provider>:<owner>/<repo>").
	// The API names it origin.tenant.
	TenantID string `json:"tenant,omitempty"`
	URL      string `json:"url,omitempty"`
	// Title is what a person calls the thread, where the platform names
	// it (an issue's or a pull request's title), as it was when the
	// session started; "" when unknown.
	Title string `json:"title,omitempty"`
}

// PendingAction is what a session in awaiting_input waits on: the tool
// calls of a requires_action yield, or the raise of a session budget (or
// of its max_turns) that paused its turn.
type PendingAction struct {
	ToolUseIDs []string     `json:"tool_use_ids"`
	Budget     *BudgetPause `json:"budget,omitempty"`
}

// BudgetPause says which session budget paused the open turn: Limit is
// the budget's value when it paused (tokens, or US dollars), Spent what
// the session had used by then, the paused turn included.
//
// For max_turns, Limit is the cap and Spent the turns the session had
// finished: the paused turn is the one past the cap.
type BudgetPause struct {
	Name  string  `json:"name"` // "max_session_tokens", "max_session_cost_usd" or "max_turns"
	Limit float64 `json:"limit"`
	Spent float64 `json:"spent"`
}

// The session budgets' names, as limits and pauses spell them.
const (
	BudgetTokens  = "max_session_tokens"
	BudgetCostUSD = "max_session_cost_usd"
	BudgetTurns   = "max_turns"
)

// OverTurns is the pause of a turn that would be the session's turn past
// l.MaxTurns, the session having finished turns before it; nil while it
// fits or no cap is set.
func OverTurns(l Limits, turns int) *BudgetPause {
	if l.MaxTurns > 0 && turns >= l.MaxTurns {
		return &BudgetPause{Name: BudgetTurns, Limit: float64(l.MaxTurns), Spent: float64(turns)}
	}
	return nil
}

// Reason is the stop reason a pause of over logs: max_turns for the
// turns cap, budget_exceeded for the budgets.
func (over *BudgetPause) Reason() Reason {
	if over.Name == BudgetTurns {
		return ReasonMaxTurns
	}
	return ReasonBudgetExceeded
}

// OverBudget is the budget of l that a session has reached, having used
// tokens and cost (nil: not priced, which no cost budget counts), or nil
// while both fit.
func OverBudget(l Limits, tokens int64, cost *float64) *BudgetPause {
	switch {
	case l.MaxSessionTokens > 0 && tokens >= l.MaxSessionTokens:
		return &BudgetPause{Name: BudgetTokens, Limit: float64(l.MaxSessionTokens), Spent: float64(tokens)}
	case l.MaxSessionCostUSD > 0 && cost != nil && *cost >= l.MaxSessionCostUSD:
		return &BudgetPause{Name: BudgetCostUSD, Limit: l.MaxSessionCostUSD, Spent: RoundUSD(*cost)}
	}
	return nil
}

// Session is the store's record of a session. Status, stop reason, usage and
// last seq are a projection of its log, kept in step by the store.
type Session struct {
	ID            string            `json:"id"`
	Status        Status            `json:"status"`
	StopReason    Reason            `json:"stop_reason,omitempty"`
	PendingAction *PendingAction    `json:"pending_action,omitempty"`
	Agent         AgentRef          `json:"agent"`
	Origin        *Origin           `json:"origin"`
	Metadata      map[string]string `json:"metadata"`
	Environment   string            `json:"environment,omitempty"`
	// Limits are the session's own limits: their non-zero fields override
	// its agent's (POST /v1/sessions, and raised by an admin later).
	Limits *Limits `json:"limits,omitempty"`
	// ForkedFrom names the session and seq a fork copied its log from.
	ForkedFrom *ForkRef `json:"forked_from,omitempty"`
	// Links are the other origin keys that route to the session.
	Links []Link `json:"links,omitempty"`
	// Tenant partitions the memory the session reads and writes: its
	// origin's (slack:<team>, github:<owner>/<repo>, linear:<organization>),
	// or for an API session the tenant given at create (DefaultTenant).
	// Fixed at creation.
	Tenant string `json:"tenant,omitempty"`
	Usage  Usage  `json:"usage"`
	// CostUSD is the estimated cost of the session's turns that had a
	// price (the sum of their turn.completed cost_usd); nil when none had.
	CostUSD *float64 `json:"cost_usd"`
	// Turns counts the session's finished turns (a turn.completed each,
	// retries included), which limits.max_turns caps.
	Turns   int    `json:"turns"`
	LastSeq uint64 `json:"last_seq"`
	TurnID  string `json:"turn_id,omitempty"` // the open turn, if any
	// Result is the last finished turn's answer; nil before a turn
	// finished.
	Result *TurnResult `json:"result,omitempty"`
	// TurnText is the open turn's latest user-level message, its result's
	// text if it finished now.
	TurnText        string `json:"turn_text,omitempty"`
	ClientTokenHash string `json:"client_token_hash,omitempty"`
	// FirstText is the stores' copy of the first user message
	// (MaxFirstText bytes of it, the one SessionFilter.Text reads): set
	// on the sessions ListSessions returns, for a list to show which
	// session is which without reading logs. Never part of the record.
	FirstText string `json:"-"`
	CreatedAt Time   `json:"created_at"`
	UpdatedAt Time   `json:"updated_at"`
}

// ForkRef is where a fork's log came from.
type ForkRef struct {
	Session string `json:"session"`
	Seq     uint64 `json:"seq"`
}

// Fork asks for a new session with another's log up to a seq.
type Fork struct {
	From string
	// AtSeq must end a turn (its turn.completed, or the status change
	// logged with it); 0 is the end of From's last completed turn.
	AtSeq uint64
	// Session gives the new session's id and client token hash; the rest
	// (agent version, metadata, environment, tenant, limits) is From's.
	Session Session
}

// Clone is a copy of s that shares nothing with it: its metadata, links,
// limits and the rest may be changed without changing s.
func (s *Session) Clone() *Session {
	c := *s
	if s.PendingAction != nil {
		pa := *s.PendingAction
		pa.ToolUseIDs = slices.Clone(pa.ToolUseIDs)
		pa.Budget = clonePtr(pa.Budget)
		c.PendingAction = &pa
	}
	c.Origin = clonePtr(s.Origin)
	c.Metadata = maps.Clone(s.Metadata)
	c.Limits = clonePtr(s.Limits)
	c.ForkedFrom = clonePtr(s.ForkedFrom)
	c.Links = slices.Clone(s.Links)
	c.CostUSD = clonePtr(s.CostUSD)
	c.Result = clonePtr(s.Result)
	return &c
}

// clonePtr is a pointer to a copy of *p, or nil; the copy is shallow, for
// values that hold no references.
func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// BudgetPaused reports whether the session's open turn is paused by a
// session budget: it runs again only once the budget is raised, or ends
// at a user.interrupt.
func (s *Session) BudgetPaused() bool {
	return s.TurnID != "" && s.PendingAction != nil && s.PendingAction.Budget != nil
}

// LimitsOver is the session's limits over def, the agent's (resolved):
// the session's non-zero fields win.
func (s *Session) LimitsOver(def Limits) Limits {
	if s.Limits == nil {
		return def
	}
	return s.Limits.Or(def)
}

// MemoryTenant is the tenant the session's memory is partitioned by: its
// Tenant, or DefaultTenant for a session created without one.
func (s *Session) MemoryTenant() string {
	if s.Tenant == "" {
		return DefaultTenant
	}
	return s.Tenant
}

// ProviderAPI is the provider of a session created through the API, which
// has no origin.
const ProviderAPI = "api"

// Provider is the provider of the session's origin, ProviderAPI for a
// session without one: what SessionFilter.Provider matches.
func (s *Session) Provider() string {
	if s.Origin == nil || s.Origin.Provider == "" {
		return ProviderAPI
	}
	return s.Origin.Provider
}

// Retryable reports whether a turn that ended with r can be run again by
// a user.retry: it failed or was stopped before its end, not when it
// finished or waits for a person.
func Retryable(r Reason) bool {
	switch r {
	case ReasonError, ReasonCanceled, ReasonDeadlineExceeded, ReasonMaxSteps:
		return true
	}
	return false
}

// RetryTurn checks that the session's last finished turn can be retried
// and returns its id: turnID, when given, must name that turn. The error
// wraps ErrConflict and says why not.
func RetryTurn(s *Session, turnID string) (string, error) {
	switch {
	case s.Status == StatusArchived:
		return "", fmt.Errorf("session %s is archived: %w", s.ID, ErrArchived)
	case s.BudgetPaused():
		return "", fmt.Errorf("the turn of session %s is paused by its %s: raise it to let the turn go on, or stop it first: %w", s.ID, s.PendingAction.Budget.Name, ErrConflict)
	case s.TurnID != "" || s.Status == StatusRunning || s.Status == StatusQueued:
		return "", fmt.Errorf("a turn of session %s is running or queued; retry once it ends: %w", s.ID, ErrConflict)
	case s.Result == nil:
		return "", fmt.Errorf("session %s has no finished turn to retry: %w", s.ID, ErrConflict)
	case turnID != "" && turnID != s.Result.TurnID:
		return "", fmt.Errorf("turn %s is not the last finished turn of session %s (%s is): %w", turnID, s.ID, s.Result.TurnID, ErrConflict)
	case !Retryable(s.Result.YieldReason):
		return "", fmt.Errorf("the last turn ended %s: only a turn that ended with error, canceled, deadline_exceeded or max_steps can be retried: %w",
			s.Result.YieldReason, ErrConflict)
	}
	return s.Result.TurnID, nil
}

// NewRetry is the user.retry input that runs the session's last finished
// turn again (RetryTurn checks it may), naming that turn.
func NewRetry(s *Session, turnID string) (Event, error) {
	turn, err := RetryTurn(s, turnID)
	if err != nil {
		return Event{}, err
	}
	body, err := json.Marshal(RetryBody{TurnID: turn})
	if err != nil {
		return Event{}, fmt.Errorf("retry body: %w", err)
	}
	return NewInput(TypeUserRetry, body), nil
}
