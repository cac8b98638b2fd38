// Package record holds what both session stores (bbolt in sessions/, and
// sessions/store/postgres) check and prepare before a write, independent of how
// they store it: inputs and events with their ids and bodies fixed, keys,
// destinations, sinks and installations, so the two stores refuse and
// normalise exactly alike.
package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// PrepareInputs validates inputs and fixes their ids before any
// transaction, so a bad request fails alone and a transaction run again
// assigns the same ids.
func PrepareInputs(in []core.Event) ([]core.Event, error) {
	out := make([]core.Event, len(in))
	for i, e := range in {
		if !core.IsInput(e.Type) {
			return nil, fmt.Errorf("input %d: type %q is not an input type: %w", i, e.Type, core.ErrInvalid)
		}
		e, err := PrepareEvent(e)
		if err != nil {
			return nil, fmt.Errorf("input %d: %w", i, err)
		}
		out[i] = e
	}
	return out, nil
}

// PrepareEvent normalizes an event before any transaction, so a malformed
// one fails alone and a transaction run again assigns the same id.
func PrepareEvent(e core.Event) (core.Event, error) {
	body, err := normalizeBody(e.Body)
	if err != nil {
		return e, err
	}
	e.Body = body
	if e.ID == "" {
		e.ID = core.NewID(core.PrefixEvent)
	}
	e.Seq = 0
	normalizeTimes(&e)
	return e, nil
}

// normalizeBody compacts a body so that what is returned equals what is
// stored; an empty body becomes {}.
func normalizeBody(b json.RawMessage) (json.RawMessage, error) {
	if len(b) == 0 {
		return json.RawMessage(`{}`), nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return nil, fmt.Errorf("event body is not json: %v: %w", err, core.ErrInvalid)
	}
	return buf.Bytes(), nil
}

// normalizeTimes truncates caller-supplied times to the stored precision.
func normalizeTimes(e *core.Event) {
	if !e.CreatedAt.IsZero() {
		e.CreatedAt = core.NewTime(e.CreatedAt.Time)
	}
	if e.QueuedAt != nil {
		e.QueuedAt = core.NewTime(e.QueuedAt.Time).Ptr()
	}
	if e.ProcessedAt != nil {
		e.ProcessedAt = core.NewTime(e.ProcessedAt.Time).Ptr()
	}
}

// ValidateKeys refuses empty keys, and keys a store cannot keep
// (core.CheckText), before any transaction.
func ValidateKeys(idem *core.Idempotency, dedupe []string) error {
	if idem != nil {
		if idem.Key == "" {
			return fmt.Errorf("idempotency key is empty: %w", core.ErrInvalid)
		}
		if err := core.CheckText("idempotency key", idem.Key); err != nil {
			return err
		}
	}
	for _, d := range dedupe {
		if d == "" {
			return fmt.Errorf("dedupe key is empty: %w", core.ErrInvalid)
		}
		if err := core.CheckText("dedupe key", d); err != nil {
			return err
		}
	}
	return nil
}

// ValidateCreate refuses, before any transaction, a create whose keys or
// indexed fields a store cannot keep; its inputs are free text and are
// kept as given.
func ValidateCreate(req core.NewSession) error {
	if err := ValidateKeys(req.Idempotency, req.Dedupe); err != nil {
		return err
	}
	fields := []struct{ name, v string }{
		{"session id", req.Session.ID},
		{"tenant", req.Session.Tenant},
		{"external key", req.ExternalKey},
	}
	if o := req.Session.Origin; o != nil {
		fields = append(fields, struct{ name, v string }{"origin provider", o.Provider})
	}
	for _, f := range fields {
		if err := core.CheckText(f.name, f.v); err != nil {
			return fmt.Errorf("create session: %w", err)
		}
	}
	return nil
}

// AnswersPending refuses tool answers that name a call the session does
// not wait for.
func AnswersPending(sess *core.Session, inputs []core.Event) error {
	var waiting []string
	if sess.PendingAction != nil {
		waiting = sess.PendingAction.ToolUseIDs
	}
	for i, e := range inputs {
		if e.Type != core.TypeUserCustomToolResult && e.Type != core.TypeUserToolConfirmation {
			continue
		}
		var b struct {
			ToolUseID string `json:"tool_use_id"`
		}
		if err := e.Decode(&b); err != nil {
			return fmt.Errorf("events[%d]: %w", i, err)
		}
		if !slices.Contains(waiting, b.ToolUseID) {
			return fmt.Errorf("events[%d]: %s for tool_use_id %q: session %s waits for no such call (pending_action: %q): %w",
				i, e.Type, b.ToolUseID, sess.ID, waiting, core.ErrConflict)
		}
	}
	return nil
}

// CheckDestination refuses what the store cannot deliver to, as the bbolt
// store does. The API validates more (and first).
func CheckDestination(d *core.Destination) error {
	if !core.HasPrefix(d.ID, core.PrefixDestination) {
		return fmt.Errorf("destination id %q is not a destination id: %w", d.ID, core.ErrInvalid)
	}
	u, err := url.Parse(d.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("destination url %q: want an absolute http(s) URL: %w", d.URL, core.ErrInvalid)
	}
	if _, err := core.ParseLevel(string(d.Level)); err != nil {
		return err
	}
	if d.SessionID != "" && d.AgentID != "" {
		return fmt.Errorf("destination %s: a session destination takes no agent filter: %w", d.ID, core.ErrInvalid)
	}
	return nil
}

// ValidSink refuses what the bbolt store cannot key (a sink name with
// 0x00), so both stores accept the same names.
func ValidSink(sink, sessionID string) error {
	if sink == "" || strings.ContainsRune(sink, 0) || sessionID == "" {
		return fmt.Errorf("sink %q, session %q: %w", sink, sessionID, core.ErrInvalid)
	}
	return nil
}

func ValidInstallation(in *core.Installation) error {
	switch {
	case in.Provider == "" || strings.ContainsRune(in.Provider, 0):
		return fmt.Errorf("installation provider %q: %w", in.Provider, core.ErrInvalid)
	case in.ExternalID == "":
		return fmt.Errorf("installation external id is required: %w", core.ErrInvalid)
	}
	return nil
}

// AddAttempt appends an attempt, keeping the most recent ones.
func AddAttempt(d *core.Delivery, a core.Attempt, now core.Time) {
	d.AttemptCount++
	d.Attempts = append(d.Attempts, a)
	if n := len(d.Attempts) - core.MaxAttemptsKept; n > 0 {
		d.Attempts = append([]core.Attempt{}, d.Attempts[n:]...)
	}
	if d.FirstAttemptAt == nil {
		d.FirstAttemptAt = a.At.Ptr()
	}
	d.UpdatedAt = now
}

// ClampLimit applies the list paging rules: default 100, at most 1000.
func ClampLimit(limit int) int {
	switch {
	case limit <= 0:
		return 100
	case limit > 1000:
		return 1000
	}
	return limit
}

func KnownStatus(st core.Status) bool {
	switch st {
	case core.StatusQueued, core.StatusRunning, core.StatusAwaitingInput,
		core.StatusIdle, core.StatusFailed, core.StatusArchived:
		return true
	}
	return false
}

// NewVault is the vault record CreateVault stores for in at now: an id
// given when in has none, the id's prefix and the name checked.
func NewVault(in *core.Vault, now core.Time) (*core.Vault, error) {
	v := *in
	if v.ID == "" {
		v.ID = core.NewID(core.PrefixVault)
	}
	if !core.HasPrefix(v.ID, core.PrefixVault) {
		return nil, fmt.Errorf("create vault: id %q is not a vault id: %w", v.ID, core.ErrInvalid)
	}
	if v.Name == "" {
		return nil, fmt.Errorf("create vault: name is required: %w", core.ErrInvalid)
	}
	v.CreatedAt, v.UpdatedAt = now, now
	return &v, nil
}

// NewSession is the record of a new, empty, idle session made from req:
// what a create keeps of the session it is given.
func NewSession(req core.NewSession, id string, now core.Time) *core.Session {
	in := req.Session
	sess := &core.Session{
		ID:              id,
		Status:          core.StatusIdle,
		Agent:           in.Agent,
		Metadata:        maps.Clone(in.Metadata),
		Environment:     in.Environment,
		Tenant:          in.Tenant,
		ClientTokenHash: in.ClientTokenHash,
		CreatedAt:       now,
		UpdatedAt:       now,
	}
	if in.Limits != nil {
		l := *in.Limits
		sess.Limits = &l
	}
	if sess.Metadata == nil {
		sess.Metadata = map[string]string{}
	}
	if in.Origin != nil {
		o := *in.Origin
		if req.ExternalKey != "" {
			o.Key = req.ExternalKey
		}
		sess.Origin = &o
	}
	return sess
}
