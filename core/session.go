package core

import (
	"encoding/json"
	"fmt"
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

// Usage counts model tokens.
type Usage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
}

// Add returns u + v.
func (u Usage) Add(v Usage) Usage {
	return Usage{InputTokens: u.InputTokens + v.InputTokens, OutputTokens: u.OutputTokens + v.OutputTokens}
}

// Total is input plus output tokens.
func (u Usage) Total() int64 { return u.InputTokens + u.OutputTokens }

// Origin says where a session came from (null for API sessions).
type Origin struct {
	Provider string `json:"provider"`
	Key      string `json:"key"` // e.g. slack:T1:C1:1700000000.000100
	Tenant   string `json:"tenant,omitempty"`
	URL      string `json:"url,omitempty"`
}

// PendingAction lists the tool calls a session waits on.
type PendingAction struct {
	ToolUseIDs []string `json:"tool_use_ids"`
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
	// Tenant partitions the memory the session reads and writes: its
	// origin's (slack:<team>, github:<owner>/<repo>, linear:<organization>),
	// or for an API session the tenant given at create (DefaultTenant).
	// Fixed at creation.
	Tenant          string `json:"tenant,omitempty"`
	Usage           Usage  `json:"usage"`
	LastSeq         uint64 `json:"last_seq"`
	TurnID          string `json:"turn_id,omitempty"` // the open turn, if any
	ClientTokenHash string `json:"client_token_hash,omitempty"`
	CreatedAt       Time   `json:"created_at"`
	UpdatedAt       Time   `json:"updated_at"`
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
