package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
)

type createSessionBody struct {
	Agent       *agentRef         `json:"agent"`
	Input       *string           `json:"input"`
	Metadata    map[string]string `json:"metadata"`
	Environment string            `json:"environment"`
	// Tenant partitions the session's memory (default core.DefaultTenant).
	Tenant string `json:"tenant"`
	// Destinations are created with the session, in its transaction, so
	// they see its first event.
	Destinations []core.DestinationSpec `json:"destinations"`
	// Limits override the agent's for this session (its budgets, mostly).
	Limits *core.Limits `json:"limits"`
}

// createdWithDestinations is the create answer when the body had
// destinations; a generated secret is in it the first time only (the
// answer kept for idempotent replays leaves secrets out).
type createdWithDestinations struct {
	CreatedSession
	Destinations []core.CreatedDestination `json:"destinations"`
}

// Metadata bounds, so a session record stays small.
const (
	maxMetadataKeys  = 50
	maxMetadataKey   = 64
	maxMetadataValue = 512
)

func checkMetadata(m map[string]string) error {
	if len(m) > maxMetadataKeys {
		return web.Invalid("metadata has %d keys; at most %d", len(m), maxMetadataKeys)
	}
	for k, v := range m {
		if k == "" || len(k) > maxMetadataKey {
			return web.Invalid("metadata key %q: want 1 to %d bytes", k, maxMetadataKey)
		}
		if len(v) > maxMetadataValue {
			return web.Invalid("metadata %q: value longer than %d bytes", k, maxMetadataValue)
		}
	}
	return nil
}

// maxTenant bounds a tenant, which is a key of memory partitions.
const maxTenant = 128

// checkTenant validates the tenant a session is created with; none is
// core.DefaultTenant.
func checkTenant(t string) (string, error) {
	switch {
	case t == "":
		return core.DefaultTenant, nil
	case t == core.SharedPartition:
		return "", web.Invalid("field \"tenant\": %q is the partition of shared memory stores, not a tenant", t)
	case !utf8.ValidString(t) || utf8.RuneCountInString(t) > maxTenant:
		return "", web.Invalid("field \"tenant\": want 1 to %d characters of valid UTF-8", maxTenant)
	}
	for _, r := range t {
		if !unicode.IsPrint(r) {
			return "", web.Invalid("field \"tenant\" (%q): control and other non-printable characters are not allowed", t)
		}
	}
	return t, nil
}

// idempotency reads the Idempotency-Key header into a store request.
func idempotency(r *http.Request, scope string, body []byte) (*core.Idempotency, error) {
	key := r.Header.Get("Idempotency-Key")
	if key == "" {
		return nil, nil
	}
	if len(key) > 255 {
		return nil, web.Invalid("Idempotency-Key is longer than 255 characters")
	}
	sum := sha256.Sum256(body)
	return &core.Idempotency{Key: "api:" + scope + ":" + key, Hash: hex.EncodeToString(sum[:])}, nil
}

func (h *Handler) createSession(w http.ResponseWriter, r *http.Request) error {
	raw, err := web.ReadBody(w, r, h.MaxBody)
	if err != nil {
		return err
	}
	var b createSessionBody
	if err := web.Decode(raw, &b); err != nil {
		return err
	}
	if b.Agent == nil || b.Agent.ID == "" {
		return web.Invalid("field \"agent\" is required: an agent id or name, or {\"id\":…, \"version\":…}")
	}
	if b.Input != nil && strings.TrimSpace(*b.Input) == "" {
		return web.Invalid("field \"input\" is empty: omit it to create an idle session")
	}
	if err := checkMetadata(b.Metadata); err != nil {
		return err
	}
	tenant, err := checkTenant(b.Tenant)
	if err != nil {
		return err
	}
	if b.Limits != nil {
		if err := b.Limits.Validate(); err != nil {
			return fmt.Errorf("field \"limits\": %w", err)
		}
	}
	idem, err := idempotency(r, "sessions", raw)
	if err != nil {
		return err
	}
	agent, err := h.Store.GetAgent(r.Context(), b.Agent.ID)
	if err != nil {
		if errors.Is(err, core.ErrNotFound) {
			return notFound("agent", b.Agent.ID)
		}
		return err
	}
	if b.Agent.Version != 0 && b.Agent.Version != agent.Version {
		if agent, err = h.Store.GetAgentVersion(r.Context(), agent.ID, b.Agent.Version); err != nil {
			if errors.Is(err, core.ErrNotFound) {
				return web.Errorf(http.StatusNotFound, "not_found", "agent %q has no version %d", b.Agent.ID, b.Agent.Version)
			}
			return err
		}
	}
	id := core.NewID(core.PrefixSession)
	if err := h.checkEnvironment(r.Context(), b.Environment); err != nil {
		return err
	}
	if err := h.checkCredentials(r.Context(), id, tenant, agent, b.Environment); err != nil {
		return err
	}
	var creator core.SessionDestinationCreator
	var dests []core.NewDestination
	var shown []core.CreatedDestination
	if b.Destinations != nil {
		if creator = h.Destinations; creator == nil {
			return web.Invalid("field \"destinations\": this server does not deliver webhooks")
		}
		if dests, shown, err = creator.PrepareDestinations(r.Context(), id, b.Destinations); err != nil {
			return err
		}
	}
	token, hash := NewClientToken(id)
	now := core.Now()
	s := core.Session{
		ID: id, Status: core.StatusIdle, Agent: core.AgentRef{ID: agent.ID, Version: agent.Version},
		Metadata: b.Metadata, Environment: b.Environment, Tenant: tenant, Limits: b.Limits, ClientTokenHash: hash, CreatedAt: now, UpdatedAt: now,
	}
	if s.Metadata == nil {
		s.Metadata = map[string]string{}
	}
	var inputs []core.Event
	if b.Input != nil {
		inputs = append(inputs, core.NewInput(core.TypeUserMessage, mustJSON(core.MessageBody{Text: *b.Input})))
		s.Status = core.StatusQueued
	}
	created := CreatedSession{ID: id, Status: s.Status, Agent: s.Agent, ClientToken: token, Metadata: s.Metadata, Environment: s.Environment, Tenant: tenant, CreatedAt: now}
	var answer any = created
	if creator != nil {
		answer = createdWithDestinations{CreatedSession: created, Destinations: shown}
	}
	if idem != nil {
		if idem.Answer, err = h.keepCreated(created, shown, creator != nil); err != nil {
			return err
		}
	}
	req := core.NewSession{Session: s, Inputs: inputs, Idempotency: idem}
	var res *core.CreateResult
	if creator != nil {
		res, err = creator.CreateSessionAndDestinations(background(r), req, dests)
	} else {
		res, err = h.Store.CreateSession(background(r), req)
	}
	if err != nil {
		return err
	}
	if res.Replay != nil {
		return h.replayCreated(w, res.Replay)
	}
	web.WriteJSON(w, http.StatusCreated, answer)
	return nil
}

// keptCreated is the create answer kept for Idempotency-Key replays. The
// client token is a bearer credential for its session, so the record
// holds it sealed with the master key, never in clear; destination
// secrets are left out.
type keptCreated struct {
	Session      CreatedSession             `json:"session"` // client_token empty
	Destinations *[]core.CreatedDestination `json:"destinations,omitempty"`
	SealedToken  []byte                     `json:"sealed_client_token"`
}

// tokenAAD binds a sealed client token to its session.
func tokenAAD(sessionID string) []byte { return []byte("client_token:" + sessionID) }

func (h *Handler) keepCreated(created CreatedSession, shown []core.CreatedDestination, withDestinations bool) ([]byte, error) {
	if h.Sealer == nil {
		return nil, errors.New("idempotent session create: no sealer for the client token")
	}
	sealed, err := h.Sealer.Seal([]byte(created.ClientToken), tokenAAD(created.ID))
	if err != nil {
		return nil, fmt.Errorf("seal client token: %w", err)
	}
	k := keptCreated{Session: created, SealedToken: sealed}
	k.Session.ClientToken = ""
	if withDestinations {
		d := make([]core.CreatedDestination, len(shown))
		for i, c := range shown {
			d[i] = core.CreatedDestination{Destination: c.Destination}
		}
		k.Destinations = &d
	}
	return mustJSON(k), nil
}

// replayCreated answers a replayed create with the kept answer, its client
// token opened again.
func (h *Handler) replayCreated(w http.ResponseWriter, raw []byte) error {
	var k keptCreated
	if err := json.Unmarshal(raw, &k); err != nil || k.SealedToken == nil {
		// Kept before tokens were sealed: the answer as it was stored.
		writeRaw(w, http.StatusCreated, raw)
		return nil
	}
	if h.Sealer == nil {
		return errors.New("replay session create: no sealer for the client token")
	}
	token, err := h.Sealer.Open(k.SealedToken, tokenAAD(k.Session.ID))
	if err != nil {
		return fmt.Errorf("open kept client token of %s: %w", k.Session.ID, err)
	}
	k.Session.ClientToken = string(token)
	if k.Destinations != nil {
		web.WriteJSON(w, http.StatusCreated, createdWithDestinations{CreatedSession: k.Session, Destinations: *k.Destinations})
		return nil
	}
	web.WriteJSON(w, http.StatusCreated, k.Session)
	return nil
}

func (h *Handler) listSessions(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	limit, err := web.Limit(r)
	if err != nil {
		return err
	}
	f := core.SessionFilter{
		Status: core.Status(q.Get("status")), AgentID: q.Get("agent"), OriginKey: q.Get("origin_key"),
		Provider: q.Get("provider"), Tenant: q.Get("tenant"), Text: q.Get("q"),
		After: q.Get("after"), Limit: limit,
	}
	switch f.Status {
	case "", core.StatusQueued, core.StatusRunning, core.StatusAwaitingInput, core.StatusIdle, core.StatusFailed, core.StatusArchived:
	default:
		return web.Invalid("status=%q: want queued, running, awaiting_input, idle, failed or archived", f.Status)
	}
	if len(f.Text) > core.MaxFirstText {
		// Longer text is never within what the stores keep of a message.
		return web.Invalid("q: longer than %d bytes", core.MaxFirstText)
	}
	list, err := h.Store.ListSessions(r.Context(), f)
	if err != nil {
		return err
	}
	views := make([]SessionView, 0, len(list.Sessions))
	for _, s := range list.Sessions {
		views = append(views, ViewSession(s))
	}
	web.WriteJSON(w, http.StatusOK, web.Page[SessionView]{Data: views, HasMore: list.HasMore, Next: list.Next, Capped: list.Capped})
	return nil
}

func (h *Handler) getSession(w http.ResponseWriter, r *http.Request) error {
	s, err := h.session(r)
	if err != nil {
		return err
	}
	v := ViewSession(s)
	if v.NextWakeAt, err = h.nextWake(r.Context(), s.ID); err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, v)
	return nil
}

// nextWake is when a schedule next sends the session input, nil when none
// will.
func (h *Handler) nextWake(ctx context.Context, id string) (*core.Time, error) {
	if h.Schedules == nil {
		return nil, nil
	}
	var next *core.Time
	err := core.EachSchedule(ctx, h.Schedules, core.ScheduleQuery{Session: id}, func(sc *core.Schedule) bool {
		if sc.Target.SessionID == id && sc.NextAt != nil && (next == nil || sc.NextAt.Before(next.Time)) {
			next = sc.NextAt
		}
		return true
	})
	return next, err
}

func (h *Handler) wake(w http.ResponseWriter, r *http.Request) error {
	s, err := h.session(r)
	if err != nil {
		return err
	}
	if s.Status == core.StatusArchived {
		return fmt.Errorf("session %s: %w", s.ID, core.ErrArchived)
	}
	h.Runtime.Wake(s.ID)
	web.WriteJSON(w, http.StatusAccepted, ViewSession(s))
	return nil
}

// updateSessionBody is what an admin may change on a session.
type updateSessionBody struct {
	Limits *core.Limits `json:"limits"`
}

// updateSession sets the session's own limits: the fields given replace
// the session's, the others keep their values. Raising a budget that
// paused the session's turn resumes the turn.
func (h *Handler) updateSession(w http.ResponseWriter, r *http.Request) error {
	raw, err := web.ReadBody(w, r, h.MaxBody)
	if err != nil {
		return err
	}
	var b updateSessionBody
	if err := web.Decode(raw, &b); err != nil {
		return err
	}
	if b.Limits == nil || *b.Limits == (core.Limits{}) {
		return web.Invalid("field \"limits\" is required: the limits to set, e.g. {\"limits\":{\"max_session_cost_usd\":5}}")
	}
	if err := b.Limits.Validate(); err != nil {
		return fmt.Errorf("field \"limits\": %w", err)
	}
	s, err := h.session(r)
	if err != nil {
		return err
	}
	if s, err = h.Store.SetSessionLimits(background(r), s.ID, *b.Limits, core.ActorHuman); err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, ViewSession(s))
	return nil
}

func (h *Handler) archive(w http.ResponseWriter, r *http.Request) error {
	s, err := h.session(r)
	if err != nil {
		return err
	}
	if s.Status != core.StatusArchived {
		ctx := background(r)
		// Logged first so followers see why the session went quiet.
		ev := core.NewEvent(core.TypeStatusChanged, core.LevelInternal, core.ActorHuman, core.StatusChangedBody{Status: core.StatusArchived, StopReason: s.StopReason})
		if _, err := h.Store.Append(ctx, s.ID, core.AppendRequest{Events: []core.Event{ev}}); err != nil && !errors.Is(err, core.ErrArchived) {
			return err
		}
		// The archive's commit stops a running turn.
		if s, err = h.Store.Archive(ctx, s.ID); err != nil {
			return err
		}
	}
	web.WriteJSON(w, http.StatusOK, ViewSession(s))
	return nil
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("api: marshal %T: %v", v, err))
	}
	return b
}

func writeRaw(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
	if len(body) == 0 || body[len(body)-1] != '\n' {
		_, _ = w.Write([]byte("\n"))
	}
}

// strictUnmarshal decodes a nested value with unknown fields refused.
func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
