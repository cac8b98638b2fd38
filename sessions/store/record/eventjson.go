package record

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"

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
	if e.QueuedAt != nil {
		buf = append(buf, `,"queued_at":`...)
		buf = appendJSONTime(buf, *e.QueuedAt)
	}
	if e.ProcessedAt != nil {
		buf = append(buf, `,"processed_at":`...)
		buf = appendJSONTime(buf, *e.ProcessedAt)
	}
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

// appendJSONString appends s quoted as encoding/json quotes it without
// HTML escaping. Strings of printable ASCII without a quote or backslash
// (ids, types, keys) are copied; any other goes through encoding/json.
func appendJSONString(buf []byte, s string) []byte {
	if plainJSON(s) {
		buf = append(buf, '"')
		buf = append(buf, s...)
		return append(buf, '"')
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return append(buf, bytes.TrimSuffix(b.Bytes(), []byte("\n"))...)
}

func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// appendJSONTime appends t as core.Time's MarshalJSON writes it.
func appendJSONTime(buf []byte, t core.Time) []byte {
	if t.IsZero() {
		return append(buf, "null"...)
	}
	buf = append(buf, '"')
	buf = t.UTC().AppendFormat(buf, core.TimeLayout)
	return append(buf, '"')
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
	if r.lit(`,"turn_id":`) && !r.str(&e.TurnID) {
		return nil, false
	}
	if !r.lit(`,"created_at":`) || !r.time(&e.CreatedAt) {
		return nil, false
	}
	if r.lit(`,"queued_at":`) && !r.timePtr(&e.QueuedAt) {
		return nil, false
	}
	if r.lit(`,"processed_at":`) && !r.timePtr(&e.ProcessedAt) {
		return nil, false
	}
	if r.lit(`,"source_key":`) && !r.str(&e.SourceKey) {
		return nil, false
	}
	if !r.lit(`,"body":`) || len(raw) <= r.i || raw[len(raw)-1] != '}' {
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

// fieldReader reads a record from its start, field by field.
type fieldReader struct {
	b []byte
	i int
}

func (r *fieldReader) lit(s string) bool {
	if !bytes.HasPrefix(r.b[r.i:], []byte(s)) {
		return false
	}
	r.i += len(s)
	return true
}

// str reads a quoted string with no escape in it.
func (r *fieldReader) str(out *string) bool {
	if r.i >= len(r.b) || r.b[r.i] != '"' {
		return false
	}
	end := bytes.IndexByte(r.b[r.i+1:], '"')
	if end < 0 {
		return false
	}
	s := r.b[r.i+1 : r.i+1+end]
	ascii := true
	for _, c := range s {
		if c < 0x20 || c == '\\' {
			return false
		}
		ascii = ascii && c < utf8.RuneSelf
	}
	if !ascii && !utf8.Valid(s) {
		return false
	}
	*out = string(s)
	r.i += end + 2
	return true
}

func (r *fieldReader) uint(out *uint64) bool {
	j := r.i
	for j < len(r.b) && r.b[j] >= '0' && r.b[j] <= '9' {
		j++
	}
	if j == r.i || (r.b[r.i] == '0' && j > r.i+1) {
		return false
	}
	n, err := strconv.ParseUint(string(r.b[r.i:j]), 10, 64)
	if err != nil {
		return false
	}
	*out, r.i = n, j
	return true
}

// time reads null or a time in core.TimeLayout.
func (r *fieldReader) time(out *core.Time) bool {
	if r.lit("null") {
		*out = core.Time{}
		return true
	}
	n := len(core.TimeLayout)
	if r.i+n+2 > len(r.b) || r.b[r.i] != '"' || r.b[r.i+n+1] != '"' {
		return false
	}
	t, err := time.Parse(core.TimeLayout, string(r.b[r.i+1:r.i+1+n]))
	if err != nil {
		return false
	}
	*out = core.NewTime(t)
	r.i += n + 2
	return true
}

// timePtr reads a time into a field that null leaves nil, as
// encoding/json does.
func (r *fieldReader) timePtr(out **core.Time) bool {
	if r.lit("null") {
		*out = nil
		return true
	}
	*out = new(core.Time)
	return r.time(*out)
}
