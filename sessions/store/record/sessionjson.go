package record

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/switchboardhq/switchboard/core"
)

// A session's record is written again by every append and every input
// queued to it, inside the store's one write transaction: EncodeSession
// writes it without reflection, in exactly the bytes encoding/json makes
// of a core.Session (core.EncodeJSON), so that records written either way
// read either way. What a session rarely holds (a pending action, limits
// of its own, a fork's origin) goes through encoding/json.

// EncodeSession is Encode for a session's record.
func EncodeSession(s *core.Session) ([]byte, error) {
	raw, err := encodeSession(s)
	if err != nil {
		return nil, fmt.Errorf("encode session %s: %w", s.ID, err)
	}
	return raw, nil
}

func encodeSession(s *core.Session) ([]byte, error) {
	buf := make([]byte, 0, 448+len(s.TurnText)+sessionExtraSize(s))
	buf = append(buf, `{"id":`...)
	buf = appendJSONString(buf, s.ID)
	buf = append(buf, `,"status":`...)
	buf = appendJSONString(buf, string(s.Status))
	if s.StopReason != "" {
		buf = appendReason(append(buf, `,"stop_reason":`...), s.StopReason)
	}
	var err error
	if s.PendingAction != nil {
		if buf, err = appendEncoded(append(buf, `,"pending_action":`...), s.PendingAction); err != nil {
			return nil, err
		}
	}
	buf = append(buf, `,"agent":{"id":`...)
	buf = appendJSONString(buf, s.Agent.ID)
	buf = append(buf, `,"version":`...)
	buf = strconv.AppendInt(buf, int64(s.Agent.Version), 10)
	buf = append(buf, `},"origin":`...)
	buf = appendOrigin(buf, s.Origin)
	buf = append(buf, `,"metadata":`...)
	buf = appendStringMap(buf, s.Metadata)
	if s.Environment != "" {
		buf = appendJSONString(append(buf, `,"environment":`...), s.Environment)
	}
	if s.Limits != nil {
		if buf, err = appendEncoded(append(buf, `,"limits":`...), s.Limits); err != nil {
			return nil, err
		}
	}
	if s.ForkedFrom != nil {
		if buf, err = appendEncoded(append(buf, `,"forked_from":`...), s.ForkedFrom); err != nil {
			return nil, err
		}
	}
	if len(s.Links) > 0 {
		buf = appendLinks(append(buf, `,"links":`...), s.Links)
	}
	if s.Tenant != "" {
		buf = appendJSONString(append(buf, `,"tenant":`...), s.Tenant)
	}
	buf = append(buf, `,"usage":{"input_tokens":`...)
	buf = strconv.AppendInt(buf, s.Usage.InputTokens, 10)
	buf = append(buf, `,"output_tokens":`...)
	buf = strconv.AppendInt(buf, s.Usage.OutputTokens, 10)
	buf = append(buf, `,"cache_read_input_tokens":`...)
	buf = strconv.AppendInt(buf, s.Usage.CacheReadInputTokens, 10)
	buf = append(buf, `,"cache_creation_input_tokens":`...)
	buf = strconv.AppendInt(buf, s.Usage.CacheCreationInputTokens, 10)
	buf = append(buf, `},"cost_usd":`...)
	if s.CostUSD == nil {
		buf = append(buf, "null"...)
	} else if buf, err = appendJSONFloat(buf, *s.CostUSD); err != nil {
		return nil, err
	}
	buf = append(buf, `,"turns":`...)
	buf = strconv.AppendInt(buf, int64(s.Turns), 10)
	buf = append(buf, `,"last_seq":`...)
	buf = strconv.AppendUint(buf, s.LastSeq, 10)
	if s.TurnID != "" {
		buf = appendJSONString(append(buf, `,"turn_id":`...), s.TurnID)
	}
	if r := s.Result; r != nil {
		buf = append(buf, `,"result":{"turn_id":`...)
		buf = appendJSONString(buf, r.TurnID)
		buf = appendReason(append(buf, `,"yield_reason":`...), r.YieldReason)
		buf = appendJSONString(append(buf, `,"text":`...), r.Text)
		buf = appendJSONTime(append(buf, `,"completed_at":`...), r.CompletedAt)
		buf = append(buf, '}')
	}
	if s.TurnText != "" {
		buf = appendJSONString(append(buf, `,"turn_text":`...), s.TurnText)
	}
	if s.ClientTokenHash != "" {
		buf = appendJSONString(append(buf, `,"client_token_hash":`...), s.ClientTokenHash)
	}
	buf = appendJSONTime(append(buf, `,"created_at":`...), s.CreatedAt)
	buf = appendJSONTime(append(buf, `,"updated_at":`...), s.UpdatedAt)
	return append(buf, '}'), nil
}

// sessionExtraSize is about the bytes a record's variable parts take, so
// that the buffer is made once.
func sessionExtraSize(s *core.Session) int {
	n := len(s.ID) + len(s.Agent.ID) + len(s.TurnID) + len(s.Tenant) + len(s.ClientTokenHash) + len(s.Environment)
	if s.Origin != nil {
		n += len(s.Origin.Key) + len(s.Origin.URL) + len(s.Origin.Title) + len(s.Origin.TenantID)
	}
	if s.Result != nil {
		n += 128 + len(s.Result.TurnID) + len(s.Result.Text)
	}
	for k, v := range s.Metadata {
		n += len(k) + len(v) + 6
	}
	return n + len(s.Links)*128
}

func appendOrigin(buf []byte, o *core.Origin) []byte {
	if o == nil {
		return append(buf, "null"...)
	}
	buf = appendJSONString(append(buf, `{"provider":`...), o.Provider)
	buf = appendJSONString(append(buf, `,"key":`...), o.Key)
	if o.TenantID != "" {
		buf = appendJSONString(append(buf, `,"tenant":`...), o.TenantID)
	}
	if o.URL != "" {
		buf = appendJSONString(append(buf, `,"url":`...), o.URL)
	}
	if o.Title != "" {
		buf = appendJSONString(append(buf, `,"title":`...), o.Title)
	}
	return append(buf, '}')
}

func appendLinks(buf []byte, links []core.Link) []byte {
	buf = append(buf, '[')
	for i, l := range links {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = appendJSONString(append(buf, `{"key":`...), l.Key)
		buf = appendJSONString(append(buf, `,"added_by":`...), l.AddedBy)
		buf = appendJSONTime(append(buf, `,"added_at":`...), l.AddedAt)
		if l.URL != "" {
			buf = appendJSONString(append(buf, `,"url":`...), l.URL)
		}
		buf = append(buf, '}')
	}
	return append(buf, ']')
}

// appendStringMap appends m as encoding/json does: null when nil, its
// keys sorted.
func appendStringMap(buf []byte, m map[string]string) []byte {
	if m == nil {
		return append(buf, "null"...)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	buf = append(buf, '{')
	for i, k := range keys {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = appendJSONString(buf, k)
		buf = appendJSONString(append(buf, ':'), m[k])
	}
	return append(buf, '}')
}

// appendReason appends r as core.Reason's MarshalJSON writes it: null
// when empty, else through json.Marshal, which escapes HTML, unless it
// has nothing to escape.
func appendReason(buf []byte, r core.Reason) []byte {
	if r == "" {
		return append(buf, "null"...)
	}
	if plainJSON(string(r)) && !htmlSpecial(string(r)) {
		return appendJSONString(buf, string(r))
	}
	raw, _ := json.Marshal(string(r)) // a string always encodes
	return append(buf, raw...)
}

func htmlSpecial(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '<' || c == '>' || c == '&' {
			return true
		}
	}
	return false
}

// appendJSONFloat appends f as encoding/json writes a float64: as %f
// between 1e-6 and 1e21, else in exponent form with at least one digit
// of exponent; NaN and the infinities are refused.
func appendJSONFloat(buf []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, &json.UnsupportedValueError{Str: strconv.FormatFloat(f, 'g', -1, 64)}
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	buf = strconv.AppendFloat(buf, f, format, -1, 64)
	if format == 'e' {
		// e-09 as e-9
		if n := len(buf); n >= 4 && buf[n-4] == 'e' && buf[n-3] == '-' && buf[n-2] == '0' {
			buf[n-2] = buf[n-1]
			buf = buf[:n-1]
		}
	}
	return buf, nil
}

// appendEncoded appends v as encoding/json writes it.
func appendEncoded(buf []byte, v any) ([]byte, error) {
	raw, err := core.EncodeJSON(v)
	if err != nil {
		return nil, err
	}
	return append(buf, raw...), nil
}
