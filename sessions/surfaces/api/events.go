package api

import (
	"encoding/json"
	"fmt"

	"net/http"
	"strconv"
	"strings"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
)

// maxEventsPerPost bounds one POST …/events.
const maxEventsPerPost = 100

func (h *Handler) events(w http.ResponseWriter, r *http.Request) error {
	s, err := h.session(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	level, err := core.ParseLevel(q.Get("level"))
	if err != nil {
		return web.Invalid("%v", err)
	}
	after, err := parseSeq(q.Get("after"), "after")
	if err != nil {
		return err
	}
	if strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		name := "after"
		if id := r.Header.Get("Last-Event-ID"); id != "" {
			if after, err = parseSeq(id, "Last-Event-ID"); err != nil {
				return err
			}
			name = "Last-Event-ID"
		}
		if err := pastEnd(s, after, name); err != nil {
			return err
		}
		p, _ := core.PrincipalFrom(r.Context())
		return h.stream(w, r, s.ID, after, level, p.AttachToken)
	}
	if err := pastEnd(s, after, "after"); err != nil {
		return err
	}
	limit, err := web.Limit(r)
	if err != nil {
		return err
	}
	page, more, err := h.page(r, s.ID, after, limit, level)
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, web.Page[core.Event]{Data: page, HasMore: more})
	return nil
}

// page collects up to limit events above the level threshold after a seq.
func (h *Handler) page(r *http.Request, id string, after uint64, limit int, level core.Level) ([]core.Event, bool, error) {
	out := []core.Event{}
	for {
		evs, err := h.Store.Events(r.Context(), id, after, limit+1)
		if err != nil {
			return nil, false, err
		}
		for _, e := range evs {
			if !level.Shows(e.Level) {
				continue
			}
			if len(out) == limit {
				return out, true, nil
			}
			out = append(out, e)
		}
		if len(evs) <= limit {
			return out, false, nil
		}
		after = evs[len(evs)-1].Seq
	}
}

// pastEnd refuses a seq past the session's last event: no event was
// sent with it, and a stream resumed there would skip what is logged
// until the log reaches it.
func pastEnd(s *core.Session, after uint64, name string) error {
	if after > s.LastSeq {
		return web.Invalid("%s %d is past the session's last event (seq %d): resume from the id of an event sent", name, after, s.LastSeq)
	}
	return nil
}

func parseSeq(s, name string) (uint64, error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, web.Invalid("%s=%q: want a seq (a whole number ≥ 0)", name, s)
	}
	return n, nil
}

// inputBody is one posted input; fields not of its type are refused.
type inputBody struct {
	Type      string  `json:"type"`
	Text      *string `json:"text,omitempty"`
	ToolUseID *string `json:"tool_use_id,omitempty"`
	Result    *string `json:"result,omitempty"`
	Message   *string `json:"message,omitempty"`
	Output    *string `json:"output,omitempty"`
	IsError   *bool   `json:"is_error,omitempty"`
	TurnID    *string `json:"turn_id,omitempty"`
	Always    *bool   `json:"always,omitempty"`
}

// allowed lists each input type's fields.
var inputFields = map[string][]string{
	core.TypeUserMessage:          {"text"},
	core.TypeUserInterrupt:        {},
	core.TypeUserToolConfirmation: {"tool_use_id", "result", "message", "always"},
	core.TypeUserCustomToolResult: {"tool_use_id", "output", "is_error"},
	core.TypeUserRetry:            {"turn_id"},
}

// parseInput validates one posted input and returns its logged body.
func parseInput(i int, raw json.RawMessage) (string, []byte, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return "", nil, web.Invalid("events[%d]: want a JSON object", i)
	}
	var b inputBody
	if err := json.Unmarshal(raw, &b); err != nil {
		return "", nil, web.Invalid("events[%d]: %s", i, strings.TrimPrefix(err.Error(), "json: "))
	}
	allowed, ok := inputFields[b.Type]
	if !ok {
		return "", nil, web.Invalid("events[%d]: unknown event type %q (want one of %s)", i, b.Type, strings.Join(core.InputTypes, ", "))
	}
	for name := range fields {
		if name != "type" && !contains(allowed, name) {
			return "", nil, web.Invalid("events[%d]: unknown field %q for %s", i, name, b.Type)
		}
	}
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	switch b.Type {
	case core.TypeUserMessage:
		if strings.TrimSpace(str(b.Text)) == "" {
			return "", nil, web.Invalid("events[%d]: user.message needs a non-empty \"text\"", i)
		}
		return b.Type, mustJSON(core.MessageBody{Text: *b.Text}), nil
	case core.TypeUserInterrupt:
		return b.Type, []byte(`{}`), nil
	case core.TypeUserRetry:
		return b.Type, mustJSON(core.RetryBody{TurnID: str(b.TurnID)}), nil
	case core.TypeUserToolConfirmation:
		if str(b.ToolUseID) == "" {
			return "", nil, web.Invalid("events[%d]: user.tool_confirmation needs \"tool_use_id\"", i)
		}
		if r := str(b.Result); r != "allow" && r != "deny" {
			return "", nil, web.Invalid("events[%d]: \"result\" must be allow or deny, got %q", i, r)
		}
		always := b.Always != nil && *b.Always
		return b.Type, mustJSON(core.ToolConfirmationBody{ToolUseID: *b.ToolUseID, Result: *b.Result, Message: str(b.Message), Always: always}), nil
	default: // user.custom_tool_result
		if str(b.ToolUseID) == "" || b.Output == nil {
			return "", nil, web.Invalid("events[%d]: user.custom_tool_result needs \"tool_use_id\" and \"output\"", i)
		}
		isErr := b.IsError != nil && *b.IsError
		return b.Type, mustJSON(core.CustomToolResultBody{ToolUseID: *b.ToolUseID, Output: *b.Output, IsError: isErr}), nil
	}
}

// sign adds to an input's body who posted it with an attach token
// (core.MessageBody's Via, By and AttachToken): the log says whose it
// is, and the thread is told.
func sign(body json.RawMessage, p core.Principal) json.RawMessage {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		fields = map[string]json.RawMessage{}
	}
	fields["via"] = mustJSON(core.ViaEditor)
	fields["by"] = mustJSON(p.Person)
	fields["attach_token"] = mustJSON(p.AttachToken)
	return mustJSON(fields)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func (h *Handler) postEvents(w http.ResponseWriter, r *http.Request) error {
	// The store refuses a session that does not exist or is archived in
	// the transaction that queues: only a retry reads the session first.
	id := r.PathValue("id")
	p, ok := core.PrincipalFrom(r.Context())
	if !ok {
		return web.Errorf(http.StatusUnauthorized, "unauthorized", "missing credentials")
	}
	if err := mayAct(p, id); err != nil {
		return err
	}
	raw, err := web.ReadBody(w, r, h.MaxBody)
	if err != nil {
		return err
	}
	var body struct {
		Events []json.RawMessage `json:"events"`
	}
	if err := web.Decode(raw, &body); err != nil {
		var bare struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(raw, &bare) == nil && bare.Type != "" {
			// One event sent bare, as the stream shows them.
			return web.Invalid("the body is one event; send a list of them instead: {\"events\":[{\"type\":%q, …}]}", bare.Type)
		}
		return err
	}
	if len(body.Events) == 0 {
		return web.Invalid("field \"events\" is required: a non-empty list of inputs")
	}
	if len(body.Events) > maxEventsPerPost {
		return web.Invalid("%d events in one request; at most %d", len(body.Events), maxEventsPerPost)
	}
	inputs := make([]core.Event, 0, len(body.Events))
	for i, e := range body.Events {
		typ, b, err := parseInput(i, e)
		if err != nil {
			return err
		}
		in := core.NewInput(typ, b)
		if typ == core.TypeUserRetry {
			s, err := h.session(r)
			if err != nil {
				return err
			}
			var rb core.RetryBody
			_ = json.Unmarshal(b, &rb) // parseInput wrote it
			if in, err = core.NewRetry(s, rb.TurnID); err != nil {
				return fmt.Errorf("events[%d]: %w", i, err)
			}
		}
		in.SessionID = id
		if p.AttachToken != "" {
			in.Body = sign(in.Body, p)
		}
		inputs = append(inputs, in)
	}
	idem, err := idempotency(r, "events:"+id, raw)
	if err != nil {
		return err
	}
	answer := web.Page[QueuedInput]{Data: make([]QueuedInput, 0, len(inputs))}
	for _, in := range inputs {
		answer.Data = append(answer.Data, QueuedInput{ID: in.ID, Type: in.Type, QueuedAt: *in.QueuedAt})
	}
	if idem != nil {
		idem.Answer = mustJSON(map[string]any{"data": answer.Data})
	}
	res, err := h.Store.QueueInputs(background(r), id, core.QueueRequest{Inputs: inputs, Idempotency: idem, AnswersPending: true})
	if err != nil {
		return err
	}
	if res.Replay != nil {
		writeRaw(w, http.StatusAccepted, res.Replay)
		return nil
	}
	web.WriteJSON(w, http.StatusAccepted, map[string]any{"data": answer.Data})
	return nil
}

func (h *Handler) pending(w http.ResponseWriter, r *http.Request) error {
	s, err := h.session(r)
	if err != nil {
		return err
	}
	evs, err := h.Store.Pending(r.Context(), s.ID)
	if err != nil {
		return err
	}
	if evs == nil {
		evs = []core.Event{}
	}
	web.WriteJSON(w, http.StatusOK, web.Page[core.Event]{Data: evs})
	return nil
}
