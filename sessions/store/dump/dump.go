// Package dump is the form in which a session store's records travel from
// one backend to another (switchboard store copy): each kind of record the
// stores keep, with its JSON exactly as stored and the few facts a target
// files it by. Sealed values travel sealed. The bbolt store writes a store's
// records (sessions.Store.Dump) and the PostgreSQL store loads them into an
// empty database in one transaction (postgres.Store.Load).
//
// What a store derives from its records (name and key indexes, status
// counts) is not dumped: the target rebuilds it. The hourly counters of
// turns are dumped: rebuilding them would read every log. Turn leases and replica
// heartbeats are not dumped either: they describe running processes.
package dump

import (
	"encoding/json"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// Record is one stored record: a value of one of this package's types.
type Record interface {
	// Kind names the records of its type in a summary ("sessions").
	Kind() string
}

// Put receives the records of a dump. A dump puts a vault before its
// credentials, a destination before its deliveries and a memory store
// before its versions; nothing else depends on order.
type Put func(Record) error

// Kinds lists every kind in the order a summary shows them.
var Kinds = []string{
	"agents", "agent versions", "sessions", "events", "queued inputs",
	"dedupe keys", "idempotency keys", "wakes", "sink positions", "sink marks",
	"vaults", "credentials", "environments", "installations", "once keys",
	"destinations", "deliveries", "delivery streams",
	"skills", "skill versions", "skill contents",
	"memory stores", "memory versions", "hourly stats", "schedules", "attachments",
	"attach tokens",
}

// Agent is an agent's latest version.
type Agent struct {
	ID, Name string
	Version  int
	Body     json.RawMessage
}

// AgentVersion is one version of an agent, the latest included.
type AgentVersion struct {
	AgentID string
	Version int
	Body    json.RawMessage
}

// Session is a session's record.
type Session struct {
	ID      string
	Status  core.Status
	AgentID string
	LastSeq uint64
	// ExternalKey is the origin key that routes to it, "" for none; Links
	// the other keys that do.
	ExternalKey string
	Links       []string
	// TurnHolder is the runtime that logged the open turn's
	// turn.started (possibly ""), nil when no turn is open: recovery
	// finds the turn through it.
	TurnHolder *string
	// Provider and Tenant are what the session lists filter by
	// (core.Session.Provider, core.Session.Tenant); FirstText what a
	// text filter reads (record.FirstText), nil before a user message.
	Provider  string
	Tenant    string
	FirstText *string
	Body      json.RawMessage
}

// Event is one logged event.
type Event struct {
	SessionID string
	Seq       uint64
	Body      json.RawMessage
}

// Input is an input queued on a session and not logged yet; Pos orders a
// session's inputs.
type Input struct {
	SessionID string
	Pos       uint64
	Type      string
	Body      json.RawMessage
}

// RequestKey is a dedupe key (Idempotency false: Hash and Answer empty)
// or an idempotency key with its request's hash and stored answer.
type RequestKey struct {
	Idempotency bool
	Key         string
	Created     time.Time
	Hash        string
	Answer      []byte
}

// Wake is a session's place in the wake queue.
type Wake struct {
	SessionID string
	Due       time.Time
}

// SinkPosition is an output sink's position in a session's log.
type SinkPosition struct {
	Sink, SessionID string
	Body            json.RawMessage
}

// SinkMark says a sink may be behind on a session.
type SinkMark struct {
	Sink, SessionID string
}

// Vault is a vault's record.
type Vault struct {
	ID   string
	Body json.RawMessage
}

// Credential is a vault credential's metadata with its sealed secret
// (aad: the credential's id).
type Credential struct {
	ID, VaultID string
	Body        json.RawMessage
	Sealed      []byte
}

// Environment is a sandbox environment.
type Environment struct {
	ID, Name string
	Body     json.RawMessage
}

// Installation is an installation's record with its sealed tokens (aad:
// core.InstallationAAD), nil when it has none.
type Installation struct {
	ID, Provider, ExternalID string
	Body                     json.RawMessage
	SealedTokens             []byte
}

// Once is a remembered single-use key.
type Once struct {
	Key   string
	Until time.Time
}

// Destination is a webhook destination with its sealed signing secret
// (aad: the destination's id), nil when it has none.
type Destination struct {
	ID, SessionID, AgentID string
	Status                 core.DestinationStatus
	Body                   json.RawMessage
	SealedSecret           []byte
}

// Delivery is one delivery in any state, with its attempts.
type Delivery struct {
	ID, DestinationID, SessionID string
	Seq                          uint64
	State                        core.DeliveryState
	Body                         json.RawMessage
}

// DeliveryStream is a destination's pending deliveries of one session:
// Due is when its first is next attempted, nil while the destination is
// paused.
type DeliveryStream struct {
	DestinationID, SessionID string
	Due                      *time.Time
}

// Skill is a skill's latest version.
type Skill struct {
	ID, Name string
	Version  int
	Body     json.RawMessage
}

// SkillVersion is one version of a skill, the latest included.
type SkillVersion struct {
	SkillID string
	Version int
	Body    json.RawMessage
}

// SkillContent is the content of one or more files of a skill's
// versions, by its sha256 (hex, as the versions' file lists give it).
type SkillContent struct {
	SkillID, SHA256 string
	Content         []byte
}

// Attachment is the bytes of an attachment of a message.
type Attachment struct {
	ID   string
	Data []byte
}

// AttachToken is a session's attach token (its JSON holds the hash of
// the secret, never the secret).
type AttachToken struct {
	ID, SessionID string
	Body          json.RawMessage
}

// MemoryStore is a memory store's record.
type MemoryStore struct {
	ID, Name string
	Body     json.RawMessage
}

// MemoryVersion is one retained version of a memory file: Body is the
// JSON of core.MemoryVersion without its content, Content the file's
// text (nil for a deletion), Seq its place in its partition's order of
// writes.
type MemoryVersion struct {
	StoreID, Partition, Path string
	Version                  int
	Seq                      int64
	Deleted                  bool
	Size                     int
	Body                     json.RawMessage
	Content                  []byte
}

// Schedule is a schedule's record; NextAt (nil while it will not fire)
// is what its due index is rebuilt from.
type Schedule struct {
	ID        string
	NextAt    *time.Time
	SessionID string // the session it targets, "" for an agent's
	CreatedBy string
	Body      json.RawMessage
}

// HourStats are the counters of one hour of turns.
type HourStats core.HourStats

func (Agent) Kind() string        { return "agents" }
func (AgentVersion) Kind() string { return "agent versions" }
func (Session) Kind() string      { return "sessions" }
func (Event) Kind() string        { return "events" }
func (Input) Kind() string        { return "queued inputs" }
func (k RequestKey) Kind() string {
	if k.Idempotency {
		return "idempotency keys"
	}
	return "dedupe keys"
}
func (Wake) Kind() string           { return "wakes" }
func (SinkPosition) Kind() string   { return "sink positions" }
func (SinkMark) Kind() string       { return "sink marks" }
func (Vault) Kind() string          { return "vaults" }
func (Credential) Kind() string     { return "credentials" }
func (Environment) Kind() string    { return "environments" }
func (Installation) Kind() string   { return "installations" }
func (Once) Kind() string           { return "once keys" }
func (Destination) Kind() string    { return "destinations" }
func (Delivery) Kind() string       { return "deliveries" }
func (DeliveryStream) Kind() string { return "delivery streams" }
func (Skill) Kind() string          { return "skills" }
func (SkillVersion) Kind() string   { return "skill versions" }
func (SkillContent) Kind() string   { return "skill contents" }
func (Attachment) Kind() string     { return "attachments" }
func (AttachToken) Kind() string    { return "attach tokens" }
func (MemoryStore) Kind() string    { return "memory stores" }
func (MemoryVersion) Kind() string  { return "memory versions" }
func (HourStats) Kind() string      { return "hourly stats" }
func (Schedule) Kind() string       { return "schedules" }
