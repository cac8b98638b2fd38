package api

import (
	"github.com/switchboardhq/switchboard/core"
)

// SessionView is a session as the API shows it.
type SessionView struct {
	ID            string              `json:"id"`
	Status        core.Status         `json:"status"`
	StopReason    core.Reason         `json:"stop_reason"` // null until a turn ends
	PendingAction *core.PendingAction `json:"pending_action,omitempty"`
	Agent         core.AgentRef       `json:"agent"`
	Origin        *core.Origin        `json:"origin"`
	Metadata      map[string]string   `json:"metadata"`
	Environment   string              `json:"environment,omitempty"`
	Tenant        string              `json:"tenant"`
	Limits        *core.Limits        `json:"limits,omitempty"` // the session's own, over its agent's
	ForkedFrom    *core.ForkRef       `json:"forked_from,omitempty"`
	// Links are the other origin keys that route to the session.
	Links   []core.Link `json:"links"`
	Usage   core.Usage  `json:"usage"`
	CostUSD *float64    `json:"cost_usd"` // null until a priced turn ends
	// Turns counts the finished turns, which limits.max_turns caps.
	Turns  int              `json:"turns"`
	Result *core.TurnResult `json:"result"` // null until a turn ends
	// NextWakeAt is when a schedule next sends the session input (GET
	// /v1/sessions/{id} only); absent when none will.
	NextWakeAt *core.Time `json:"next_wake_at,omitempty"`
	LastSeq    uint64     `json:"last_seq"`
	// FirstMessage is the start of the first user message, at most
	// core.MaxFirstText bytes (GET /v1/sessions only); absent before one.
	FirstMessage string    `json:"first_message,omitempty"`
	CreatedAt    core.Time `json:"created_at"`
	UpdatedAt    core.Time `json:"updated_at"`
}

// ViewSession renders s for the API.
func ViewSession(s *core.Session) SessionView {
	v := SessionView{
		ID: s.ID, Status: s.Status, StopReason: s.StopReason, PendingAction: s.PendingAction, Agent: s.Agent, Origin: s.Origin,
		Metadata: s.Metadata, Environment: s.Environment, Tenant: s.MemoryTenant(), Limits: s.Limits, ForkedFrom: s.ForkedFrom, Usage: s.Usage, CostUSD: s.CostUSD, Turns: s.Turns, Result: s.Result, LastSeq: s.LastSeq,
		FirstMessage: s.FirstText, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt,
	}
	if v.Metadata == nil {
		v.Metadata = map[string]string{}
	}
	v.Links = s.Links
	if v.Links == nil {
		v.Links = []core.Link{}
	}
	return v
}

// CreatedSession is the answer to POST /v1/sessions; the only place the
// client token is shown.
type CreatedSession struct {
	ID          string            `json:"id"`
	Status      core.Status       `json:"status"`
	Agent       core.AgentRef     `json:"agent"`
	ClientToken string            `json:"client_token"`
	Origin      *core.Origin      `json:"origin"`
	Metadata    map[string]string `json:"metadata"`
	Environment string            `json:"environment,omitempty"`
	Tenant      string            `json:"tenant"`
	CreatedAt   core.Time         `json:"created_at"`
	// ForkedFrom is set on the answer to a fork.
	ForkedFrom *core.ForkRef `json:"forked_from,omitempty"`
}

// QueuedInput is one entry of the answer to POST …/events.
type QueuedInput struct {
	ID       string    `json:"id"`
	Type     string    `json:"type"`
	QueuedAt core.Time `json:"queued_at"`
}
