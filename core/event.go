package core

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Event types; docs/api.md#events gives each one's level, actor and body.
const (
	TypeUserMessage          = "user.message"
	TypeUserInterrupt        = "user.interrupt"
	TypeUserToolConfirmation = "user.tool_confirmation"
	TypeUserCustomToolResult = "user.custom_tool_result"
	TypeUserRetry            = "user.retry"
	TypeStatusChanged        = "session.status_changed"
	TypeTurnStarted          = "turn.started"
	TypeTurnCompleted        = "turn.completed"
	TypeAgentMessage         = "agent.message"
	TypeAgentToolUse         = "agent.tool_use"
	TypeAgentToolResult      = "agent.tool_result"
	TypeAgentCustomToolUse   = "agent.custom_tool_use"
	TypeCompacted            = "session.compacted"
	TypeError                = "session.error"
	// TypeAgentPlan is an agent's plan for the turn, logged whole each
	// time it changes (progress).
	TypeAgentPlan = "agent.plan"
	// PlanTool is the built-in tool whose calls log an agent.plan: the
	// plan shows, not the call.
	PlanTool = "plan"
	// TypeAgentMessageDelta is text of a model response as it streams,
	// logged every few hundred milliseconds while the response is
	// generated (progress): the agent.message that follows holds the
	// whole text, and the model never sees the deltas.
	TypeAgentMessageDelta = "agent.message_delta"
	// TypeRuntimeStarted says how a runtime other than the built-in loop
	// took up the session: a new agent session, one loaded, or a new one
	// told the log so far (internal).
	TypeRuntimeStarted = "session.runtime_started"
)

// IsInput reports whether t is an input type (user.*), which is queued
// before it enters the log.
func IsInput(t string) bool { return strings.HasPrefix(t, "user.") }

// InputTypes are the input types the API accepts.
var InputTypes = []string{TypeUserMessage, TypeUserInterrupt, TypeUserToolConfirmation, TypeUserCustomToolResult, TypeUserRetry}

// MessageKindInstructions marks a system user.message whose text the
// model gets as part of its system prompt (MessageBody.Kind).
const MessageKindInstructions = "instructions"

// MessageKindThought marks an agent.message of the agent's reasoning
// (progress level): shown as progress, never posted as an answer.
const MessageKindThought = "thought"

// MessageKindNote marks the system's agent.message that tells the thread
// something of the gateway's own mid-turn (a message that will wait for
// the turn's end): shown as a note, never as the turn's answer, and the
// model never sees it.
const MessageKindNote = "note"

// MessageKindAside marks a person's user.message that came while a tool
// call waited for their allow or deny and does not answer it: the call
// stays open (the turn waits again without calling the model), and the
// model reads the message beside the call's result once it is answered.
const MessageKindAside = "aside"

// MessageKindBudget marks the system's agent.message that tells the
// thread a session budget paused the turn: the sinks show it as a
// question, and the model never sees it.
const MessageKindBudget = "budget"

// Level says who should see an event.
type Level string

const (
	LevelUser     Level = "user"
	LevelProgress Level = "progress"
	LevelInternal Level = "internal"
)

// rank orders levels from most to least visible.
func (l Level) rank() int {
	switch l {
	case LevelUser:
		return 0
	case LevelProgress:
		return 1
	}
	return 2
}

// Shows reports whether an event of level l passes the threshold t.
func (t Level) Shows(l Level) bool { return l.rank() <= t.rank() }

// ParseLevel parses a level threshold; empty means internal (all).
func ParseLevel(s string) (Level, error) {
	switch Level(s) {
	case "":
		return LevelInternal, nil
	case LevelUser, LevelProgress, LevelInternal:
		return Level(s), nil
	}
	return "", fmt.Errorf("level %q: want user, progress or internal: %w", s, ErrInvalid)
}

// Actor says who produced an event.
type Actor string

const (
	ActorHuman  Actor = "human"
	ActorAgent  Actor = "agent"
	ActorSystem Actor = "system"
)

// Event is one entry of a session's log, or a queued input (Seq 0) before
// the harness takes it.
type Event struct {
	ID          string `json:"id"`
	SessionID   string `json:"session_id"`
	Seq         uint64 `json:"seq"`
	Type        string `json:"type"`
	Level       Level  `json:"level"`
	Actor       Actor  `json:"actor"`
	TurnID      string `json:"turn_id,omitempty"`
	CreatedAt   Time   `json:"created_at"`
	QueuedAt    *Time  `json:"queued_at,omitempty"`
	ProcessedAt *Time  `json:"processed_at,omitempty"`
	// SourceKey is the origin key an input came from: the session's
	// origin, or one of its links. Inputs of the API and of schedules
	// have none.
	SourceKey string          `json:"source_key,omitempty"`
	Body      json.RawMessage `json:"body"`
}

// Decode unmarshals the event's body into v.
func (e Event) Decode(v any) error {
	if err := json.Unmarshal(e.Body, v); err != nil {
		return fmt.Errorf("event %s (%s) body: %w", e.ID, e.Type, err)
	}
	return nil
}

// Bodies.
type (
	MessageBody struct {
		Text string `json:"text"`
		// ToolUseID is set when a tool (say, ask) produced the message, so the
		// model context does not count it as the model's own text.
		ToolUseID string `json:"tool_use_id,omitempty"`
		// Kind is MessageKindInstructions for a system message whose text
		// extends the model's system prompt (skills, repository
		// instructions), logged once before a session's first turn.
		Kind string `json:"kind,omitempty"`
		// ScheduleID names the schedule whose fire queued this
		// user.message.
		ScheduleID string `json:"schedule_id,omitempty"`
		// Budget names the limit that paused the turn on a
		// MessageKindBudget note ("max_session_tokens", "max_turns", …).
		Budget string `json:"budget,omitempty"`
		// Attachments are the files and images of the message that
		// triggered it, stored by the gateway.
		Attachments []Attachment `json:"attachments,omitempty"`
		// Via, By and AttachToken are set by the gateway on an input
		// posted with an attach token: ViaEditor, the person the token
		// names, and the token's id.
		Via         string `json:"via,omitempty"`
		By          string `json:"by,omitempty"`
		AttachToken string `json:"attach_token,omitempty"`
	}
	ToolUseBody struct {
		ToolUseID string          `json:"tool_use_id"`
		Name      string          `json:"name"`
		Input     json.RawMessage `json:"input"`
	}
	ToolResultBody struct {
		ToolUseID string `json:"tool_use_id"`
		Output    string `json:"output"`
		IsError   bool   `json:"is_error"`
	}
	ToolConfirmationBody struct {
		ToolUseID string `json:"tool_use_id"`
		Result    string `json:"result"` // allow | deny
		Message   string `json:"message,omitempty"`
		// Always answers every later call of the same kind in the
		// session the same way (an ACP agent's allow_always or
		// reject_always); the built-in loop takes it as this once.
		Always bool `json:"always,omitempty"`
	}
	CustomToolResultBody struct {
		ToolUseID string `json:"tool_use_id"`
		Output    string `json:"output"`
		IsError   bool   `json:"is_error,omitempty"`
	}
	// RetryBody is a user.retry's: the turn it runs again.
	RetryBody struct {
		TurnID string `json:"turn_id"`
	}
	StatusChangedBody struct {
		Status     Status `json:"status"`
		StopReason Reason `json:"stop_reason"`
		// A turn paused by a session budget (awaiting_input,
		// budget_exceeded) logs what it waits on, and how far the turn
		// had got, which its resumption carries on from.
		PendingAction *PendingAction `json:"pending_action,omitempty"`
		Turn          *TurnSoFar     `json:"turn,omitempty"`
	}
	// TurnSoFar is what an open turn had used when it paused: its
	// turn.completed counts the whole turn once, and paused time does not
	// count toward its turn_seconds.
	TurnSoFar struct {
		Usage    Usage `json:"usage"`
		Steps    int   `json:"steps"`
		ActiveMS int64 `json:"active_ms"`
	}
	TurnCompletedBody struct {
		YieldReason Reason `json:"yield_reason"`
		Usage       Usage  `json:"usage"`
		// CostUSD is the turn's estimated cost from the gateway's price
		// table; null when the model has no price there.
		CostUSD *float64 `json:"cost_usd"`
		// PendingToolUseIDs lists the calls a requires_action yield waits on.
		PendingToolUseIDs []string `json:"pending_tool_use_ids,omitempty"`
	}
	CompactedBody struct {
		Summary string `json:"summary"`
	}
	// PlanBody is an agent.plan's: the plan's entries, in order.
	PlanBody struct {
		Entries []PlanEntry `json:"entries"`
	}
	// MessageDeltaBody is an agent.message_delta's: Text continues what
	// the deltas of the same Response (an id per model call) said
	// before. A response cut short by a crash or a retry has deltas and
	// no agent.message; its replacement has another Response.
	MessageDeltaBody struct {
		Response string `json:"response"`
		Text     string `json:"text"`
	}
	// RuntimeStartedBody is a session.runtime_started's: Kind is the
	// runtime's (acp); Command the agent's argv; AgentSession the agent's
	// own session id; How is RuntimeNew, RuntimeLoaded or RuntimeSummary.
	RuntimeStartedBody struct {
		Kind         string   `json:"kind"`
		Command      []string `json:"command"`
		AgentSession string   `json:"agent_session"`
		How          string   `json:"how"`
		// AgentName and AgentVersion are what the agent says it is.
		AgentName    string `json:"agent_name,omitempty"`
		AgentVersion string `json:"agent_version,omitempty"`
	}
	ErrorBody struct {
		Message   string `json:"message"`
		Retryable bool   `json:"retryable"`
	}
)

// PlanEntry is one step of an agent's plan: Status pending, in_progress
// or completed; Priority high, medium or low.
type PlanEntry struct {
	Content  string `json:"content"`
	Status   string `json:"status"`
	Priority string `json:"priority"`
}

// How a runtime took up a session (RuntimeStartedBody.How).
const (
	RuntimeNew     = "new"     // a new agent session: the session's first turn
	RuntimeLoaded  = "loaded"  // the agent loaded its session of before
	RuntimeSummary = "summary" // a new agent session, told the log so far
)

// NewEvent builds an unlogged event of type typ with the given body; the
// store assigns id (if empty), seq and created_at.
func NewEvent(typ string, level Level, actor Actor, body any) Event {
	b, err := json.Marshal(body)
	if err != nil {
		panic(fmt.Sprintf("core: event body %T: %v", body, err))
	}
	return Event{Type: typ, Level: level, Actor: actor, Body: b}
}

// NewInput builds a queued input of the given type with a fresh id.
func NewInput(typ string, body json.RawMessage) Event {
	now := Now()
	if len(body) == 0 {
		body = json.RawMessage(`{}`)
	}
	return Event{ID: NewID(PrefixEvent), Type: typ, Level: InputLevel(typ), Actor: ActorHuman, CreatedAt: now, QueuedAt: now.Ptr(), Body: body}
}

// InputLevel is the level an input is logged at.
func InputLevel(typ string) Level {
	if typ == TypeUserMessage {
		return LevelUser
	}
	return LevelInternal
}
