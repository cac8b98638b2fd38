package record

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard/core"
)

// The pieces EncodeEvent, EncodeDelivery and their readers share: they
// write what encoding/json writes (core.EncodeJSON), and read that form
// back field by field.

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

// appendJSONTime appends t as core.Time's MarshalJSON writes it. Every
// record holds a time or more, so the layout's digits are written here
// rather than by time's layout interpreter, for the years it has four
// digits for.
func appendJSONTime(buf []byte, t core.Time) []byte {
	if t.IsZero() {
		return append(buf, "null"...)
	}
	u := t.UTC()
	year, month, day := u.Date()
	if year < 0 || year > 9999 {
		buf = append(buf, '"')
		buf = u.AppendFormat(buf, core.TimeLayout)
		return append(buf, '"')
	}
	hour, minute, sec := u.Clock()
	buf = append(buf, '"')
	buf = appendDigits(buf, year, 4)
	buf = appendDigits(append(buf, '-'), int(month), 2)
	buf = appendDigits(append(buf, '-'), day, 2)
	buf = appendDigits(append(buf, 'T'), hour, 2)
	buf = appendDigits(append(buf, ':'), minute, 2)
	buf = appendDigits(append(buf, ':'), sec, 2)
	buf = appendDigits(append(buf, '.'), u.Nanosecond()/int(time.Millisecond), 3)
	return append(buf, 'Z', '"')
}

// appendDigits appends n, which is not negative, in width digits.
func appendDigits(buf []byte, n, width int) []byte {
	start := len(buf)
	for range width {
		buf = append(buf, 0)
	}
	for i := len(buf) - 1; i >= start; i-- {
		buf[i] = byte('0' + n%10)
		n /= 10
	}
	return buf
}

// appendOptTime appends name and t when t is set: an omitempty time.
func appendOptTime(buf []byte, name string, t *core.Time) []byte {
	if t == nil {
		return buf
	}
	return appendJSONTime(append(buf, name...), *t)
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

// int reads a number that fits an int (a negative one is left to
// encoding/json).
func (r *fieldReader) int(out *int) bool {
	var n uint64
	if !r.uint(&n) || n > math.MaxInt {
		return false
	}
	*out = int(n)
	return true
}

// optStr reads an omitempty string: name and the string, or nothing.
func (r *fieldReader) optStr(name string, out *string) bool {
	return !r.lit(name) || r.str(out)
}

// optTime reads an omitempty time: name and the time, or nothing.
func (r *fieldReader) optTime(name string, out **core.Time) bool {
	return !r.lit(name) || r.timePtr(out)
}
