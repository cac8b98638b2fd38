package record

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/switchboardhq/switchboard/core"
)

// Logged events are most of what a store writes and reads: a turn's
// appends, every wake's read of what is new, each follower's replay.
// EncodeEvent and DecodeEvent read and write their records without
// reflection, in exactly the bytes encoding/json makes of a core.Event
// (core.EncodeJSON), so records written either way read either way.

// EncodeEvent is Encode for a logged event. The body must be as
// PrepareEvent left it, compact and valid: it is written as it is, where
// encoding/json would scan it again.
func EncodeEvent(e *core.Event) []byte {
	buf := make([]byte, 0, 160+len(e.ID)+len(e.SessionID)+len(e.TurnID)+len(e.SourceKey)+len(e.Body))
	buf = append(buf, `{"id":`...)
	buf = appendJSONString(buf, e.ID)
	buf = append(buf, `,"session_id":`...)
	buf = appendJSONString(buf, e.SessionID)
	buf = append(buf, `,"seq":`...)
	buf = strconv.AppendUint(buf, e.Seq, 10)
	buf = append(buf, `,"type":`...)
	buf = appendJSONString(buf, e.Type)
	buf = append(buf, `,"level":`...)
	buf = appendJSONString(buf, string(e.Level))
	buf = append(buf, `,"actor":`...)
	buf = appendJSONString(buf, string(e.Actor))
	if e.TurnID != "" {
		buf = append(buf, `,"turn_id":`...)
		buf = appendJSONString(buf, e.TurnID)
	}
	buf = append(buf, `,"created_at":`...)
	buf = appendJSONTime(buf, e.CreatedAt)
	buf = appendOptTime(buf, `,"queued_at":`, e.QueuedAt)
	buf = appendOptTime(buf, `,"processed_at":`, e.ProcessedAt)
	if e.SourceKey != "" {
		buf = append(buf, `,"source_key":`...)
		buf = appendJSONString(buf, e.SourceKey)
	}
	buf = append(buf, `,"body":`...)
	if len(e.Body) == 0 {
		// PrepareEvent makes an empty body {}; one that was not prepared
		// still makes a record that reads.
		buf = append(buf, "null"...)
	} else {
		buf = append(buf, e.Body...)
	}
	return append(buf, '}')
}

// DecodeEvent is Decode for a logged event. A record as EncodeEvent (or
// encoding/json) writes it, with no escape in its strings, is read field
// by field; any other goes through encoding/json. raw may be reused once
// it returns (a database's page): nothing of the event points into it.
func DecodeEvent(what string, raw []byte) (*core.Event, error) {
	if e, ok := readEvent(raw); ok {
		return e, nil
	}
	return Decode[core.Event](what, raw)
}

// readEvent reads raw in EncodeEvent's form; ok is false for anything
// else, leaving it to encoding/json.
func readEvent(raw []byte) (*core.Event, bool) {
	r := fieldReader{b: raw}
	e := &core.Event{}
	var level, actor string
	if !r.lit(`{"id":`) || !r.str(&e.ID) ||
		!r.lit(`,"session_id":`) || !r.str(&e.SessionID) ||
		!r.lit(`,"seq":`) || !r.uint(&e.Seq) ||
		!r.lit(`,"type":`) || !r.str(&e.Type) ||
		!r.lit(`,"level":`) || !r.str(&level) ||
		!r.lit(`,"actor":`) || !r.str(&actor) {
		return nil, false
	}
	e.Level, e.Actor = core.Level(level), core.Actor(actor)
	if !r.optStr(`,"turn_id":`, &e.TurnID) ||
		!r.lit(`,"created_at":`) || !r.time(&e.CreatedAt) ||
		!r.optTime(`,"queued_at":`, &e.QueuedAt) ||
		!r.optTime(`,"processed_at":`, &e.ProcessedAt) ||
		!r.optStr(`,"source_key":`, &e.SourceKey) ||
		!r.lit(`,"body":`) || len(raw) <= r.i || raw[len(raw)-1] != '}' {
		return nil, false
	}
	// The body is the last field: the rest but the closing brace.
	body := raw[r.i : len(raw)-1]
	if !json.Valid(body) {
		return nil, false
	}
	e.Body = bytes.Clone(body) // null too, as json.RawMessage reads it
	return e, true
}
