// Package record is what both session stores (bbolt in sessions/store/bolt,
// and sessions/store/postgres) decide alike, written once, so that the two
// refuse, default and change records exactly alike. A store method calls
// it to check and prepare what it is given before any transaction (inputs
// and events with their ids and bodies fixed, keys, new records with
// their ids and times), and inside its transaction to derive what it
// writes from what it read (a session's projection of an append, an
// attempt's outcome, an installation's update); the store keeps only how
// it reads and writes. Encode and Decode are the stored form of every
// record: the JSON both stores keep, as every earlier release wrote it, so
// a field added to a core type is stored without a change here. The
// records written most (logged events, deliveries, sessions) have
// encoders of their own that write the same bytes without reflection:
// for those, a field added to the core type is added to its encoder too,
// which a test of each (its EveryField test) fails without.
package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

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

// Replay is what a request with idempotency key idem answers when the key
// is stored already with hash and answer: the answer again, unless the key
// was used with another request.
func Replay(idem *core.Idempotency, hash string, answer []byte) ([]byte, error) {
	if hash != idem.Hash {
		return nil, fmt.Errorf("idempotency key %q was used with another request: %w", idem.Key, core.ErrConflict)
	}
	return append([]byte{}, answer...), nil // an empty answer still replays
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
		if !isToolAnswer(e) {
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

// HasToolAnswer reports whether inputs hold a tool answer, which
// AnswersPending checks against the session's record: without one, the
// check needs no record.
func HasToolAnswer(inputs []core.Event) bool {
	return slices.ContainsFunc(inputs, isToolAnswer)
}

func isToolAnswer(e core.Event) bool {
	return e.Type == core.TypeUserCustomToolResult || e.Type == core.TypeUserToolConfirmation
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
