package core

import (
	"context"
	"time"
)

// Idempotency makes a write replayable: the first write under Key stores
// Answer; a later write with the same Key and Hash does nothing and returns
// the stored answer; the same Key with another Hash fails with ErrConflict.
// Keys are kept at least seven days.
type Idempotency struct {
	Key    string // scoped by the caller, e.g. "api:sessions:<header>"
	Hash   string // digest of the request body
	Answer []byte // the answer to replay
}

// NewSession asks the store to create a session, or to find the one that
// already serves ExternalKey (claim-then-create, in one transaction), and
// to queue Inputs on it.
type NewSession struct {
	Session     Session // ID, Agent, Origin, Metadata, Environment, Tenant, ClientTokenHash set by the caller
	Inputs      []Event // queued on the session (created or found)
	ExternalKey string  // optional: the origin key that maps to one session
	// Dedupe names deliveries (webhook ids, message identities); if any of
	// them was seen, nothing is written and the result is Duplicate.
	Dedupe      []string
	Idempotency *Idempotency
	// OnlyExisting queues Inputs only on the session already serving
	// ExternalKey (a reply that steers a thread the agent is in): without
	// one nothing is written and the result has no Session.
	OnlyExisting bool
	// StartInputs, when given, are queued instead of Inputs if this call
	// creates the session (the first turn's context rides on them).
	StartInputs []Event
}

// CreateResult tells what CreateSession did.
type CreateResult struct {
	Session   *Session
	Created   bool    // false: ExternalKey named an existing session
	Inputs    []Event // the inputs as queued
	Duplicate bool    // a Dedupe key was seen before; nothing written
	Replay    []byte  // the stored answer of an idempotent replay; nothing written
}

// QueueRequest queues inputs on an existing session.
type QueueRequest struct {
	Inputs      []Event
	Dedupe      []string
	Idempotency *Idempotency
	// AnswersPending refuses (ErrConflict, after replays and duplicates are
	// answered) a user.custom_tool_result or user.tool_confirmation whose
	// tool_use_id the session's pending_action does not list: model APIs
	// reject a result no call waits for.
	AnswersPending bool
}

// QueueResult tells what QueueInputs did.
type QueueResult struct {
	Session   *Session
	Inputs    []Event
	Duplicate bool
	Replay    []byte
}

// AppendRequest appends to a session's log in one durable transaction.
type AppendRequest struct {
	// TakeInputs moves the session's pending inputs into the log first, in
	// queue order, up to and including the first user.interrupt; each gets
	// its seq and processed_at.
	TakeInputs bool
	// TurnID is stamped on taken inputs and on Events that have none.
	TurnID string
	// Holder names the runtime appending; a turn.started records it as the
	// session's lease, which turn.completed releases.
	Holder string
	// Epoch, when not zero, fences the write: the store refuses it with
	// ErrLeaseLost, in the same transaction, unless the session's lease is
	// still at this epoch (see LeaseStore).
	Epoch  uint64
	Events []Event
}

// SessionFilter selects sessions in a list.
type SessionFilter struct {
	Status    Status
	AgentID   string
	OriginKey string
	// Provider is the origin's provider ("slack", "github", "linear",
	// "api"); Tenant the session's tenant (an installation's sessions:
	// "slack:T0123", "github:owner/repo"…).
	Provider string
	Tenant   string
	// Text keeps sessions whose first user message holds it, ignoring
	// case. No index serves it: the store reads at most MaxExamined
	// sessions past After (DefaultMaxExamined when zero) and says when it
	// stopped there (SessionList.Capped).
	Text        string
	MaxExamined int
	After       string // id cursor
	Limit       int
}

// DefaultMaxExamined bounds the sessions one text-filtered page reads.
const DefaultMaxExamined = 10_000

// MaxFirstText bounds what the stores keep of a session's first user
// message for SessionFilter.Text: its first 500 bytes, cut before a
// character that would cross them. Text found only past them does not
// match.
const MaxFirstText = 500

// SessionList is a page of sessions.
type SessionList struct {
	Sessions []*Session
	// HasMore says a next page may hold more; Next is its After: the last
	// session returned, or for a text filter that stopped at its cap the
	// last session it examined.
	HasMore bool
	Next    string
	// Capped says a text filter stopped after MaxExamined sessions
	// without filling the page.
	Capped bool
}

// AgentStore keeps agents and their immutable versions.
type AgentStore interface {
	// CreateAgent saves version 1; it assigns id and timestamps when empty.
	// Names are unique (ErrConflict).
	CreateAgent(ctx context.Context, a *Agent) (*Agent, error)
	// UpdateAgent applies update to a copy of the latest version and saves
	// it as the next version. expectVersion, when non-zero, must equal the
	// latest version (ErrConflict otherwise).
	UpdateAgent(ctx context.Context, id string, expectVersion int, update func(*Agent) error) (*Agent, error)
	// GetAgent returns the latest version of the agent with this id or name.
	GetAgent(ctx context.Context, idOrName string) (*Agent, error)
	GetAgentVersion(ctx context.Context, id string, version int) (*Agent, error)
	ListAgents(ctx context.Context, after string, limit int) (agents []*Agent, hasMore bool, err error)
}

// SessionStore keeps sessions, their logs and queued inputs.
type SessionStore interface {
	CreateSession(ctx context.Context, req NewSession) (*CreateResult, error)
	GetSession(ctx context.Context, id string) (*Session, error)
	// SessionByKey returns the session serving an external key.
	SessionByKey(ctx context.Context, key string) (*Session, error)
	ListSessions(ctx context.Context, f SessionFilter) (SessionList, error)
	// QueueInputs durably queues inputs (fsync'd before it returns) and
	// schedules a wake for the session in the same transaction. An archived
	// session refuses with ErrArchived.
	QueueInputs(ctx context.Context, sessionID string, req QueueRequest) (*QueueResult, error)
	// Pending returns the queued inputs not yet in the log.
	Pending(ctx context.Context, sessionID string) ([]Event, error)
	// Append appends to the log (see AppendRequest) and returns the events as
	// logged. The session record (status, stop reason, usage, last seq, open
	// turn, pending action) is updated from them in the same transaction.
	Append(ctx context.Context, sessionID string, req AppendRequest) ([]Event, error)
	// Events returns logged events with seq > after, at most limit (0: all).
	Events(ctx context.Context, sessionID string, after uint64, limit int) ([]Event, error)
	// SetSessionLimits merges the non-zero fields of l into the session's
	// own limits (Session.Limits). A turn a session budget paused is
	// queued to run again in the same transaction: a
	// session.status_changed to queued by actor, and a wake now.
	SetSessionLimits(ctx context.Context, sessionID string, l Limits, actor Actor) (*Session, error)
	// ForkSession makes a new session whose log is a copy of another's up
	// to a seq that ends a turn (ErrInvalid otherwise, ErrConflict when it
	// has no completed turn): the same agent version, no origin, usage
	// from zero, ForkedFrom set; its events get new ids.
	ForkSession(ctx context.Context, f Fork) (*Session, error)
	// Archive makes the session read-only and drops its queued inputs.
	Archive(ctx context.Context, sessionID string) (*Session, error)
	// CountByStatus counts sessions per status without scanning them.
	CountByStatus(ctx context.Context) (map[Status]int, error)
}

// WakeQueue is the persisted list of sessions the runtime must visit.
type WakeQueue interface {
	// ScheduleWake asks for a visit at or after at; an earlier request wins.
	ScheduleWake(ctx context.Context, sessionID string, at time.Time) error
	// MoveWake replaces the session's wake with at, later or earlier: a
	// retry after a failed visit must not be overtaken by the wake that
	// queued inputs wrote, which is already due. epoch, when not zero,
	// fences it as AppendRequest.Epoch does an append (ErrLeaseLost).
	MoveWake(ctx context.Context, sessionID string, at time.Time, epoch uint64) error
	// DueWakes returns up to limit sessions whose wake is due at now.
	DueWakes(ctx context.Context, now time.Time, limit int) ([]string, error)
	// NextWake returns the earliest scheduled wake.
	NextWake(ctx context.Context) (at time.Time, ok bool, err error)
	// ClearWake drops the session's wake; epoch fences it as in MoveWake,
	// so a holder that lost the session cannot drop the wake its new
	// holder needs.
	ClearWake(ctx context.Context, sessionID string, epoch uint64) error
	// ClearWakeUnlessQueued is ClearWake for a cycle's end: in one step
	// with the clearing it looks for inputs queued on the session, and
	// when some wait it leaves the wake (theirs) and reports queued, so an
	// input queued while the cycle ended is never left without a wake.
	ClearWakeUnlessQueued(ctx context.Context, sessionID string, epoch uint64) (queued bool, err error)
	// OpenTurns returns the sessions with a turn started and not completed,
	// with the holder that started it: after a crash, the turns to resume.
	OpenTurns(ctx context.Context) (map[string]string, error)
}

// Store is everything the session store (sessions/store) persists for the runtime and the API.
type Store interface {
	AgentStore
	SessionStore
	LinkStore
	AttachmentStore
	WakeQueue
	LeaseStore
	CommitStream
	// Sweep deletes idempotency and dedupe keys older than before; a store
	// that is also a ConsoleStore sweeps its console records with them, as
	// SweepConsole(ctx, before) does.
	Sweep(ctx context.Context, before time.Time) (int, error)
	Close() error
}
