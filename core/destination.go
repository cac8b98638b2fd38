package core

import (
	"context"
	"slices"
	"time"
)

// ID prefixes of webhook destinations and their deliveries.
const (
	PrefixDestination = "dst"
	PrefixDelivery    = "dlv"
)

// DestinationStatus says whether a destination is being delivered to.
type DestinationStatus string

const (
	DestinationActive DestinationStatus = "active"
	// DestinationPaused: it failed for too long, or an admin paused it.
	// Its deliveries keep queueing but none is attempted until it is
	// resumed.
	DestinationPaused DestinationStatus = "paused"
)

// Destination is an HTTP endpoint that receives a session's events as
// signed webhooks. A session destination (SessionID set) follows one
// session; a global one follows every session, or those of AgentID. It
// sees the events appended after it was created that pass its filter.
type Destination struct {
	ID        string            `json:"id"`
	URL       string            `json:"url"`
	SessionID string            `json:"session_id,omitempty"`
	AgentID   string            `json:"agent_id,omitempty"`
	Level     Level             `json:"level"`
	Types     []string          `json:"types"` // empty: every type
	Status    DestinationStatus `json:"status"`
	// FailingSince is the first failure of the current run of failures;
	// a success clears it.
	FailingSince *Time `json:"failing_since,omitempty"`
	PausedAt     *Time `json:"paused_at,omitempty"`
	CreatedAt    Time  `json:"created_at"`
	UpdatedAt    Time  `json:"updated_at"`
}

// Clone returns a copy of d that shares nothing with it.
func (d *Destination) Clone() *Destination {
	c := *d
	c.Types = slices.Clone(d.Types)
	c.FailingSince = clonePtr(d.FailingSince)
	c.PausedAt = clonePtr(d.PausedAt)
	return &c
}

// Filter is what Append checks an event against.
func (d *Destination) Filter() EventFilter {
	return EventFilter{Level: d.Level, Types: d.Types, AgentID: d.AgentID}
}

// EventFilter selects the events a destination receives.
type EventFilter struct {
	Level   Level    `json:"level"`              // a threshold, as the events API's level
	Types   []string `json:"types,omitempty"`    // empty: every type
	AgentID string   `json:"agent_id,omitempty"` // empty: every agent
}

// Match reports whether event e of a session of agent agentID passes.
func (f EventFilter) Match(agentID string, e Event) bool {
	level := f.Level
	if level == "" {
		level = LevelInternal
	}
	return level.Shows(e.Level) &&
		(len(f.Types) == 0 || slices.Contains(f.Types, e.Type)) &&
		(f.AgentID == "" || f.AgentID == agentID)
}

// DestinationSpec is the request body that creates a destination.
type DestinationSpec struct {
	URL string `json:"url"`
	// Secret is a Standard Webhooks secret ("whsec_" + base64 of 24 to 64
	// bytes), or "generate" (the default): the answer then shows the
	// generated one, once.
	Secret string   `json:"secret,omitempty"`
	Level  Level    `json:"level,omitempty"`
	Types  []string `json:"types,omitempty"`
	// Agent (an id or name) limits a global destination to that agent's
	// sessions.
	Agent string `json:"agent,omitempty"`
}

// CreatedDestination is the answer to a create: the destination, and its
// secret when the server generated it (the only time it is shown).
type CreatedDestination struct {
	Destination
	Secret string `json:"secret,omitempty"`
}

// NewDestination is a destination ready to store: its id set, its secret
// sealed with the id as aad.
type NewDestination struct {
	Destination  Destination
	SealedSecret []byte
}

// DestinationQuery selects destinations in a list (id order).
type DestinationQuery struct {
	SessionID string // only this session's destinations
	AgentID   string // only global destinations limited to this agent
	Global    bool   // only global destinations
	After     string // id cursor
	Limit     int
}

// DeliveryState is where a delivery stands.
type DeliveryState string

const (
	DeliveryPending   DeliveryState = "pending"
	DeliveryDelivered DeliveryState = "delivered"
	// DeliveryDead: retried up to the horizon and given up on. It no longer
	// blocks the deliveries behind it; a redelivery makes it pending again.
	DeliveryDead DeliveryState = "dead"
)

// ParseDeliveryState parses a state filter; empty means any.
func ParseDeliveryState(s string) (DeliveryState, bool) {
	switch st := DeliveryState(s); st {
	case "", DeliveryPending, DeliveryDelivered, DeliveryDead:
		return st, true
	}
	return "", false
}

// MaxAttemptsKept bounds the attempts a delivery record keeps (the most
// recent ones); AttemptCount counts them all.
const MaxAttemptsKept = 20

// Attempt is one try at delivering.
type Attempt struct {
	At         Time   `json:"at"`
	StatusCode int    `json:"status_code"` // 0: no HTTP answer
	LatencyMS  int64  `json:"latency_ms"`
	Error      string `json:"error,omitempty"`
}

// Delivery is one event on its way to one destination. A destination's
// deliveries of one session form a stream, delivered in seq order: only
// its first pending delivery is attempted.
type Delivery struct {
	ID            string        `json:"id"`
	DestinationID string        `json:"destination_id"`
	SessionID     string        `json:"session_id"`
	EventID       string        `json:"event_id"`
	EventType     string        `json:"event_type"`
	Seq           uint64        `json:"seq"`
	State         DeliveryState `json:"state"`
	AttemptCount  int           `json:"attempt_count"`
	Attempts      []Attempt     `json:"attempts"`
	// FirstAttemptAt starts the retry horizon; a redelivery restarts it.
	FirstAttemptAt *Time `json:"first_attempt_at,omitempty"`
	NextAttemptAt  *Time `json:"next_attempt_at,omitempty"` // pending only
	DeliveredAt    *Time `json:"delivered_at,omitempty"`
	CreatedAt      Time  `json:"created_at"`
	UpdatedAt      Time  `json:"updated_at"`
}

// Stream names a destination's in-order queue of one session's events.
type Stream struct {
	DestinationID string
	SessionID     string
}

// Stream is the stream the delivery belongs to.
func (d *Delivery) Stream() Stream {
	return Stream{DestinationID: d.DestinationID, SessionID: d.SessionID}
}

// DeliveryQuery selects deliveries in a list (id order).
type DeliveryQuery struct {
	DestinationID string
	SessionID     string
	State         DeliveryState
	After         string // id cursor
	Limit         int
}

// AttemptResult is what RecordAttempt stores about a finished attempt.
type AttemptResult struct {
	Attempt Attempt
	Success bool
	// RetryAt is when a failed delivery is tried again; zero dead-letters it.
	RetryAt time.Time
	// PauseAfter pauses the destination once it has been failing this long
	// without a success (0: never).
	PauseAfter time.Duration
}

// AttemptRecord is one attempt RecordAttempts stores: of delivery ID,
// made under Claim.
type AttemptRecord struct {
	Claim  Claim
	ID     string
	Result AttemptResult
}

// RecordedAttempt is RecordAttempts' answer for one attempt, as
// RecordAttempt's would be.
type RecordedAttempt struct {
	Stored, Next *Delivery
	Err          error
}

// DestinationStore keeps webhook destinations and their sealed secrets.
type DestinationStore interface {
	// CreateDestination saves d. Its ID is set by the caller (it is the
	// sealed secret's aad), and so may CreatedAt be. The store sets its
	// status (active). A session destination needs a session that exists
	// (ErrNotFound) and is not archived (ErrArchived).
	CreateDestination(ctx context.Context, d NewDestination) (*Destination, error)
	// CreateSessionAndDestinations is CreateSession that also creates the
	// session's destinations in the same transaction, so they see its
	// first event. A replay or a found session creates none.
	CreateSessionAndDestinations(ctx context.Context, req NewSession, dests []NewDestination) (*CreateResult, error)
	GetDestination(ctx context.Context, id string) (*Destination, error)
	// DestinationSecret returns the sealed secret.
	DestinationSecret(ctx context.Context, id string) ([]byte, error)
	ListDestinations(ctx context.Context, q DestinationQuery) ([]*Destination, bool, error)
	// DeleteDestination deletes it; its pending deliveries end dead.
	DeleteDestination(ctx context.Context, id string) error
	// ResumeDestination makes a paused destination active again; its
	// streams continue where they stopped, due at once.
	ResumeDestination(ctx context.Context, id string) (*Destination, error)
	// PauseDestination stops the attempts of an active destination until
	// it is resumed: its deliveries keep queueing, and an attempt under
	// way is recorded. A paused destination is returned as it is.
	PauseDestination(ctx context.Context, id string) (*Destination, error)
}

// ClaimedDelivery is the first pending delivery of a stream its holder
// claimed, with that claim: the attempt's result is recorded under it.
type ClaimedDelivery struct {
	*Delivery
	Claim Claim
}

// DeliveryPayload is what an attempt of a delivery sends: the logged
// event it carries and its session's metadata. DestinationPaused tells
// that its destination was paused by the time of the read (a destination
// gone reads as not paused: the attempt's record tells the rest).
type DeliveryPayload struct {
	Event             Event
	Metadata          map[string]string
	DestinationPaused bool
}

// DeliveryQueue is the durable queue of deliveries. Append enqueues a delivery
// for every destination an event passes, in the transaction that logs it.
//
// Several dispatchers (replicas sharing a store) deliver from one queue: a
// stream is claimed as a whole by one holder at a time, so each delivery
// is attempted by one of them and a stream's deliveries leave in order.
type DeliveryQueue interface {
	// ClaimDeliveries claims for holder up to limit streams due at now
	// that no live claim holds (its own included), earliest first, and
	// returns the first pending delivery of each with the stream's claim.
	// A claim lasts ttl by the store's clock; every claim of a stream has
	// a higher epoch than the stream had. next is when to look again: the
	// earliest time a stream not returned is due, or for one another
	// holder claimed, when its claim expires, if later (zero when none is
	// waiting). Paused destinations' streams are never due.
	ClaimDeliveries(ctx context.Context, holder string, ttl time.Duration, now time.Time, limit int) (due []ClaimedDelivery, next time.Time, err error)
	// RecordAttempt stores an attempt of a pending delivery made under
	// claim c: delivered, retried at RetryAt, or dead. It returns the
	// delivery as stored and, when the stream's next delivery is due now,
	// that one, whose attempt the claim, renewed for its ttl, still
	// covers; otherwise the claim ends. When the stream's claim has
	// another epoch (another holder claimed it after c expired, or the
	// destination was deleted) nothing is recorded: ErrLeaseLost.
	RecordAttempt(ctx context.Context, c Claim, id string, r AttemptResult) (stored, next *Delivery, err error)
	// RecordAttempts is RecordAttempt for many attempts, stored in one
	// transaction: one commit for many attempts. Attempts of one stream
	// are stored in the order given, each as RecordAttempt would store it
	// after the one before. An attempt RecordAttempt would refuse
	// (ErrLeaseLost, ErrNotFound) is refused alone, in its answer's Err;
	// any other error records none of them.
	RecordAttempts(ctx context.Context, attempts []AttemptRecord) ([]RecordedAttempt, error)
	// QueuedDeliveries returns up to limit of a stream's pending
	// deliveries with a seq above after, in seq order: what the stream's
	// holder may send while the attempts before are being recorded.
	// RecordAttempt's next stays the authority on what comes next.
	QueuedDeliveries(ctx context.Context, st Stream, after uint64, limit int) ([]*Delivery, error)
	// ReleaseDeliveryClaims ends every claim holder has, so others may
	// claim those streams at once: a clean stop, once none of holder's
	// attempts is under way.
	ReleaseDeliveryClaims(ctx context.Context, holder string) error
	// DeliveryPayload returns what an attempt of the delivery sends, and
	// whether its destination is paused now, in one read.
	DeliveryPayload(ctx context.Context, d *Delivery) (DeliveryPayload, error)
	GetDelivery(ctx context.Context, id string) (*Delivery, error)
	ListDeliveries(ctx context.Context, q DeliveryQuery) ([]*Delivery, bool, error)
	// Redeliver makes a delivered or dead delivery pending again, back in
	// its stream at its seq, due at once; a pending one is ErrConflict.
	Redeliver(ctx context.Context, id string) (*Delivery, error)
}

// SessionDestinationCreator is what the session API needs to accept
// destinations in a session's create body: it validates them and seals
// their secrets (Prepare), then creates the session with them (Create).
type SessionDestinationCreator interface {
	PrepareDestinations(ctx context.Context, sessionID string, specs []DestinationSpec) ([]NewDestination, []CreatedDestination, error)
	CreateSessionAndDestinations(ctx context.Context, req NewSession, dests []NewDestination) (*CreateResult, error)
}
