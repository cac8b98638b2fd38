package anthropic

import (
	"bytes"

	sdk "github.com/anthropics/anthropic-sdk-go"
)

// bodyStart opens every request body: "stream" first (the SDK sets it for
// a stream, and finds it at once), then the messages.
const bodyStart = `{"stream":true,"messages":[`

// requestRest is p without its messages and tools, as the SDK encodes
// it: the members of the body after the messages and tools, without
// their braces (empty when there are none).
func requestRest(p sdk.MessageNewParams) ([]byte, error) {
	p.Messages, p.Tools = nil, nil
	rest, err := p.MarshalJSON()
	if err != nil {
		return nil, err
	}
	if inner := bytes.TrimSpace(rest); len(inner) > 2 {
		return inner[1 : len(inner)-1], nil
	}
	return nil, nil
}

// build makes r's body: what the SDK would send for the request, from the
// kept encodings of its messages (r.raw) and tools and the rest of its
// parameters (requestRest). The messages r repeats from its
// conversation's last request (r.same) are taken as they are in that
// request's body, which r holds when that request was sent whole: only
// what follows them is written again, in the same array while it has
// room.
func (r *lastRequest) build(tools [][]byte, rest []byte) {
	keep := 0
	if r.body != nil && r.same > 0 && len(r.ends) >= r.same {
		keep = r.ends[r.same-1]
	} else {
		r.same = 0
	}
	size := keep
	if keep == 0 {
		size = len(bodyStart)
	}
	for _, raw := range r.raw[r.same:] {
		size += len(raw) + 1
	}
	size += len(`],"tools":[]`) + len(rest) + 1
	for _, t := range tools {
		size += len(t) + 1
	}
	buf := r.body[:keep]
	if cap(buf) < size {
		// Room for a few more steps of a conversation, so that the next
		// ones are written in place.
		room := 0
		if r.name != "" {
			room = size / 8
		}
		grown := make([]byte, keep, size+room)
		copy(grown, buf)
		buf = grown
	}
	if keep == 0 {
		buf = append(buf, bodyStart...)
	}
	ends := r.ends[:r.same]
	for _, raw := range r.raw[r.same:] {
		if raw != nil {
			if len(buf) > len(bodyStart) {
				buf = append(buf, ',')
			}
			buf = append(buf, raw...)
		}
		ends = append(ends, len(buf))
	}
	buf = append(buf, ']')
	if len(tools) > 0 {
		buf = append(buf, `,"tools":[`...)
		for i, t := range tools {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = append(buf, t...)
		}
		buf = append(buf, ']')
	}
	if len(rest) > 0 {
		buf = append(buf, ',')
		buf = append(buf, rest...)
	}
	r.body, r.ends = append(buf, '}'), ends
}
