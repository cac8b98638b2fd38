package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
	"github.com/switchboardhq/switchboard/sessions/surfaces/api"
)

// The session shapes are the server's own.
type (
	SessionView    = api.SessionView
	CreatedSession = api.CreatedSession
	QueuedInput    = api.QueuedInput
)

// SessionParams is the body of session create.
type SessionParams struct {
	// Agent is an agent id or name; AgentVersion pins a version (0: the
	// latest).
	Agent        string
	AgentVersion int
	// Input, when set, is the first user.message and the session starts
	// queued.
	Input       *string
	Metadata    map[string]string
	Environment string
	// Tenant partitions the session's memory (empty: the server's
	// default, "api").
	Tenant string
	// Limits override the agent's for this session (nil: the agent's).
	Limits *core.Limits
	// IdempotencyKey, when set, makes a retry return the first answer.
	IdempotencyKey string
}

// MarshalJSON writes the API's body; agent is an id or {id, version}.
func (p SessionParams) MarshalJSON() ([]byte, error) {
	var body struct {
		Agent       any               `json:"agent"`
		Input       *string           `json:"input,omitempty"`
		Metadata    map[string]string `json:"metadata,omitempty"`
		Environment string            `json:"environment,omitempty"`
		Tenant      string            `json:"tenant,omitempty"`
		Limits      *core.Limits      `json:"limits,omitempty"`
	}
	body.Agent = p.Agent
	body.Limits = p.Limits
	if p.AgentVersion > 0 {
		body.Agent = core.AgentRef{ID: p.Agent, Version: p.AgentVersion}
	}
	body.Input, body.Metadata, body.Environment, body.Tenant = p.Input, p.Metadata, p.Environment, p.Tenant
	return json.Marshal(body)
}

// SessionFilter narrows and pages a session list.
type SessionFilter struct {
	Status    string
	Agent     string
	OriginKey string
	Provider  string // slack, github, linear or api
	Tenant    string
	// Text is searched, ignoring case, in each session's first user
	// message; a page that stopped at the server's bound says Capped and
	// goes on from its Next.
	Text  string
	After string
	Limit int
}

// Input is one input posted to a session. Fields not of its type must stay
// empty; the server refuses them.
type Input struct {
	Type      string  `json:"type"`
	Text      string  `json:"text,omitempty"`        // user.message
	ToolUseID string  `json:"tool_use_id,omitempty"` // confirmation, custom tool result
	Result    string  `json:"result,omitempty"`      // user.tool_confirmation: allow or deny
	Message   string  `json:"message,omitempty"`     // user.tool_confirmation
	Output    *string `json:"output,omitempty"`      // user.custom_tool_result
	IsError   bool    `json:"is_error,omitempty"`    // user.custom_tool_result
	TurnID    string  `json:"turn_id,omitempty"`     // user.retry: the turn (default the last)
}

// EventsQuery pages a session's log.
type EventsQuery struct {
	After uint64 // seq
	Limit int    // 0: the server's default of 100
	Level string // user, progress or internal (default)
}

// CreateSession creates a session; with an input it starts queued.
func (c *Client) CreateSession(ctx context.Context, p SessionParams) (*CreatedSession, error) {
	var out CreatedSession
	rq := request{method: http.MethodPost, path: "/v1/sessions", body: p, header: idempotency(p.IdempotencyKey)}
	if err := c.do(ctx, rq, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// SetLimits sets the session's own limits (the fields given replace its
// own; admin). Raising the budget that paused its turn resumes the turn.
func (c *Client) SetLimits(ctx context.Context, id string, l core.Limits) (*SessionView, error) {
	var v SessionView
	body := struct {
		Limits core.Limits `json:"limits"`
	}{l}
	if err := c.do(ctx, request{method: http.MethodPost, path: pathf("/v1/sessions/%s", id), body: body}, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

// ListSessions returns one page of sessions.
func (c *Client) ListSessions(ctx context.Context, f SessionFilter) (*web.Page[SessionView], error) {
	q := ListParams{After: f.After, Limit: f.Limit}.query()
	for k, v := range map[string]string{"status": f.Status, "agent": f.Agent, "origin_key": f.OriginKey, "provider": f.Provider, "tenant": f.Tenant, "q": f.Text} {
		if v != "" {
			q.Set(k, v)
		}
	}
	var page web.Page[SessionView]
	if err := c.do(ctx, request{method: http.MethodGet, path: "/v1/sessions", query: q}, &page); err != nil {
		return nil, err
	}
	return &page, nil
}

// GetSession returns a session's state.
func (c *Client) GetSession(ctx context.Context, id string) (*SessionView, error) {
	var v SessionView
	if err := c.do(ctx, request{method: http.MethodGet, path: pathf("/v1/sessions/%s", id)}, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

// SendEvents queues inputs; they enter the log when the harness takes them.
func (c *Client) SendEvents(ctx context.Context, id string, inputs []Input, idempotencyKey string) ([]QueuedInput, error) {
	var out struct {
		Data []QueuedInput `json:"data"`
	}
	rq := request{
		method: http.MethodPost, path: pathf("/v1/sessions/%s/events", id),
		body: map[string]any{"events": inputs}, header: idempotency(idempotencyKey),
	}
	if err := c.do(ctx, rq, &out); err != nil {
		return nil, err
	}
	return out.Data, nil
}

// SendMessage queues one user.message.
func (c *Client) SendMessage(ctx context.Context, id, text, idempotencyKey string) (*QueuedInput, error) {
	return one(c.SendEvents(ctx, id, []Input{{Type: core.TypeUserMessage, Text: text}}, idempotencyKey))
}

// Interrupt queues a user.interrupt, which cancels the running turn.
func (c *Client) Interrupt(ctx context.Context, id string) (*QueuedInput, error) {
	return one(c.SendEvents(ctx, id, []Input{{Type: core.TypeUserInterrupt}}, ""))
}

func one(qs []QueuedInput, err error) (*QueuedInput, error) {
	if err != nil {
		return nil, err
	}
	if len(qs) == 0 {
		return nil, &APIError{Status: http.StatusAccepted, Type: "internal", Message: "the server queued no input"}
	}
	return &qs[0], nil
}

// Pending returns the queued inputs not yet in the log.
func (c *Client) Pending(ctx context.Context, id string) ([]core.Event, error) {
	var page web.Page[core.Event]
	if err := c.do(ctx, request{method: http.MethodGet, path: pathf("/v1/sessions/%s/pending", id)}, &page); err != nil {
		return nil, err
	}
	return page.Data, nil
}

// Wake asks the runtime to look at the session now.
func (c *Client) Wake(ctx context.Context, id string) (*SessionView, error) {
	var v SessionView
	if err := c.do(ctx, request{method: http.MethodPost, path: pathf("/v1/sessions/%s/wake", id)}, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

// Archive makes the session read-only, stopping a running turn.
func (c *Client) Archive(ctx context.Context, id string) (*SessionView, error) {
	var v SessionView
	if err := c.do(ctx, request{method: http.MethodPost, path: pathf("/v1/sessions/%s/archive", id)}, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

// Events returns one page of the session's logged events.
func (c *Client) Events(ctx context.Context, id string, q EventsQuery) (*web.Page[core.Event], error) {
	var page web.Page[core.Event]
	rq := request{method: http.MethodGet, path: pathf("/v1/sessions/%s/events", id), query: q.values()}
	if err := c.do(ctx, rq, &page); err != nil {
		return nil, err
	}
	return &page, nil
}

func (q EventsQuery) values() url.Values {
	v := url.Values{}
	if q.After > 0 {
		v.Set("after", strconv.FormatUint(q.After, 10))
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if q.Level != "" {
		v.Set("level", q.Level)
	}
	return v
}

func idempotency(key string) http.Header {
	if key == "" {
		return nil
	}
	return http.Header{"Idempotency-Key": {key}}
}

// ForkSession makes a new session with the session's log up to atSeq,
// which must end a turn (0: the end of its last completed turn). The
// answer holds the fork's client token.
func (c *Client) ForkSession(ctx context.Context, id string, atSeq uint64) (*CreatedSession, error) {
	var out CreatedSession
	body := struct {
		AtSeq uint64 `json:"at_seq,omitempty"`
	}{atSeq}
	if err := c.do(ctx, request{method: http.MethodPost, path: pathf("/v1/sessions/%s/", id) + "fork", body: body}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// AddLink routes another origin key to the session (admin).
func (c *Client) AddLink(ctx context.Context, id, key string) (*SessionView, error) {
	var v SessionView
	body := struct {
		Key string `json:"key"`
	}{key}
	if err := c.do(ctx, request{method: http.MethodPost, path: pathf("/v1/sessions/%s/", id) + "links", body: body}, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

// RemoveLink stops routing key to the session (admin).
func (c *Client) RemoveLink(ctx context.Context, id, key string) (*SessionView, error) {
	var v SessionView
	if err := c.do(ctx, request{method: http.MethodDelete, path: pathf("/v1/sessions/%s/", id) + "links", query: url.Values{"key": {key}}}, &v); err != nil {
		return nil, err
	}
	return &v, nil
}
