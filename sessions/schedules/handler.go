package schedules

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/crontab"
	"github.com/switchboardhq/switchboard/core/web"
	"github.com/switchboardhq/switchboard/sessions/store/record"
)

// Handler serves /v1/schedules. Every endpoint is admin-only.
type Handler struct {
	Store Store
	// Openers are the providers a schedule may post in (Target.Post).
	Openers map[string]core.ThreadOpener
	Runner  interface{ Poke() } // told of new and resumed schedules
	Clock   Clock               // default the wall clock
	Logger  *slog.Logger
	// MaxBody bounds request bodies (default 64 KiB).
	MaxBody int64
}

// Register mounts the endpoints on mux.
func (h *Handler) Register(mux *http.ServeMux) {
	if h.MaxBody <= 0 {
		h.MaxBody = 64 << 10
	}
	if h.Logger == nil {
		h.Logger = slog.New(slog.DiscardHandler)
	}
	if h.Clock == nil {
		h.Clock = core.WallClock{}
	}
	handle := web.AdminRoutes(mux, h.Logger)
	handle("POST /v1/schedules", h.create)
	handle("GET /v1/schedules", h.list)
	handle("GET /v1/schedules/{id}", h.get)
	handle("POST /v1/schedules/{id}/pause", h.pause)
	handle("POST /v1/schedules/{id}/resume", h.resume)
	handle("DELETE /v1/schedules/{id}", h.delete)
}

// Params is the body of POST /v1/schedules: cron (with time_zone) or at,
// and the target.
type Params struct {
	Cron     string              `json:"cron,omitempty"`
	TimeZone string              `json:"time_zone,omitempty"`
	At       *core.Time          `json:"at,omitempty"`
	Target   core.ScheduleTarget `json:"target"`
	Paused   bool                `json:"paused,omitempty"`
}

// Check refuses a schedule that cannot run, naming the field, and makes
// the schedule: agent names resolve to ids, and the first due time is
// set unless it starts paused.
func Check(ctx context.Context, store Store, openers map[string]core.ThreadOpener, p Params, now time.Time) (*core.Schedule, error) {
	sc := &core.Schedule{Cron: strings.TrimSpace(p.Cron), TimeZone: p.TimeZone, At: p.At, Target: p.Target, Paused: p.Paused}
	switch {
	case sc.Cron == "" && sc.At == nil:
		return nil, web.Invalid("give \"cron\" (with \"time_zone\") for a recurring schedule, or \"at\" for a one-off")
	case sc.Cron != "" && sc.At != nil:
		return nil, web.Invalid("field \"at\": give \"cron\" or \"at\", not both")
	case sc.TimeZone != "" && sc.Cron == "":
		return nil, web.Invalid("field \"time_zone\": only a cron schedule takes a time zone; \"at\" is an instant")
	case sc.At != nil && !sc.At.After(now):
		return nil, web.Invalid("field \"at\": %s is not in the future", sc.At.Format(time.RFC3339))
	}
	if sc.Cron != "" {
		if _, err := crontab.Parse(sc.Cron, sc.TimeZone); err != nil {
			return nil, err // names the field, and is a 400
		}
	}
	if err := checkTarget(ctx, store, &sc.Target); err != nil {
		return nil, err
	}
	if err := checkPost(ctx, store, openers, sc.Target); err != nil {
		return nil, err
	}
	if !sc.Paused {
		next, err := First(sc, now)
		if err != nil {
			return nil, err
		}
		sc.NextAt = next
	}
	return sc, nil
}

// postable says which providers a schedule may post in.
func postable(openers map[string]core.ThreadOpener) string {
	if len(openers) == 0 {
		return "no platform that posts is configured"
	}
	return "want " + strings.Join(slices.Sorted(maps.Keys(openers)), " or ") + ", with its app configured"
}

// checkPost checks where a new session is to be posted: an installation
// of a provider that can post, and a channel its policy allows
// (core.Installation.CheckPostChannel, which the runner checks again at
// each fire).
func checkPost(ctx context.Context, store Store, openers map[string]core.ThreadOpener, t core.ScheduleTarget) error {
	p := t.Post
	switch {
	case p == nil:
		return nil
	case t.Agent == "":
		return web.Invalid("field \"target.post\": only a schedule that starts new sessions (\"agent\") is posted; a session answers where it is")
	case t.Tenant != "":
		return web.Invalid("field \"target.tenant\": a posted session's tenant is its workspace's; leave it out")
	case openers[p.Provider] == nil:
		return web.Invalid("field \"target.post.provider\": %q cannot be posted in (%s)", p.Provider, postable(openers))
	case strings.TrimSpace(p.Channel) == "":
		return web.Invalid("field \"target.post.channel\" is required: the channel's id, e.g. C0123ABCD")
	}
	in, err := store.GetInstallation(ctx, p.Installation)
	if errors.Is(err, core.ErrNotFound) || err == nil && in.Provider != p.Provider {
		return web.Invalid("field \"target.post.installation\": no %s installation %q", p.Provider, p.Installation)
	}
	if err != nil {
		return err
	}
	if err := in.CheckPostChannel(p.Channel); err != nil {
		return fmt.Errorf("field \"target.post.channel\": %w", err)
	}
	return nil
}

// checkTarget checks that the target exists and can take input.
func checkTarget(ctx context.Context, store Store, t *core.ScheduleTarget) error {
	t.Input = strings.TrimSpace(t.Input)
	switch {
	case t.Input == "":
		return web.Invalid("field \"target.input\" is required: the message the schedule sends")
	case len(t.Input) > record.MaxScheduleInput:
		return web.Invalid("field \"target.input\" is over %d bytes", record.MaxScheduleInput)
	case (t.SessionID == "") == (t.Agent == ""):
		return web.Invalid("field \"target\": give \"session_id\" (send to that session) or \"agent\" (start a new session of it at each time), not both")
	case t.SessionID != "" && (t.Metadata != nil || t.Tenant != ""):
		return web.Invalid("field \"target\": \"metadata\" and \"tenant\" are for a new session (\"agent\"), not an existing one")
	case len(t.Tenant) > 128:
		return web.Invalid("field \"target.tenant\" is over 128 characters")
	}
	if t.SessionID != "" {
		s, err := store.GetSession(ctx, t.SessionID)
		if errors.Is(err, core.ErrNotFound) {
			return web.Invalid("field \"target.session_id\": no session %q", t.SessionID)
		}
		if err != nil {
			return err
		}
		if s.Status == core.StatusArchived {
			return web.Invalid("field \"target.session_id\": session %s is archived", s.ID)
		}
		return nil
	}
	a, err := store.GetAgent(ctx, t.Agent)
	if errors.Is(err, core.ErrNotFound) {
		return web.Invalid("field \"target.agent\": no agent %q", t.Agent)
	}
	if err != nil {
		return err
	}
	t.Agent = a.ID
	return nil
}

func (h *Handler) create(w http.ResponseWriter, r *http.Request) error {
	raw, err := web.ReadBody(w, r, h.MaxBody)
	if err != nil {
		return err
	}
	var p Params
	if err := web.Decode(raw, &p); err != nil {
		return err
	}
	sc, err := Check(r.Context(), h.Store, h.Openers, p, h.Clock.Now())
	if err != nil {
		return err
	}
	sc.CreatedBy = core.CreatedByAdmin
	if sc, err = h.Store.CreateSchedule(r.Context(), sc); err != nil {
		return err
	}
	h.Logger.Info("schedule created", "schedule_id", sc.ID, "cron", sc.Cron, "time_zone", sc.TimeZone, "next_at", sc.NextAt)
	h.poke()
	web.WriteJSON(w, http.StatusCreated, sc)
	return nil
}

func (h *Handler) list(w http.ResponseWriter, r *http.Request) error {
	session := r.URL.Query().Get("session_id")
	return web.List(w, r, func(ctx context.Context, after string, limit int) ([]*core.Schedule, bool, error) {
		return h.Store.ListSchedules(ctx, core.ScheduleQuery{Session: session, After: after, Limit: limit})
	})
}

func (h *Handler) get(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	sc, err := h.Store.GetSchedule(r.Context(), id)
	if err != nil {
		return web.NotFound(err, "schedule", id)
	}
	web.WriteJSON(w, http.StatusOK, sc)
	return nil
}

func (h *Handler) pause(w http.ResponseWriter, r *http.Request) error {
	return h.change(w, r, func(sc *core.Schedule) error {
		sc.Paused, sc.NextAt = true, nil
		return nil
	})
}

// resume makes a paused schedule due again from now: a cron schedule at
// its next time (times missed while paused are skipped), a one-off at its
// time (at once if that passed). A one-off that fired already is a 409,
// paused or not: it will not fire again.
func (h *Handler) resume(w http.ResponseWriter, r *http.Request) error {
	now := h.Clock.Now()
	return h.change(w, r, func(sc *core.Schedule) error {
		if sc.At != nil && sc.Fires > 0 {
			return web.Errorf(http.StatusConflict, "conflict", "schedule %s was a one-off and fired at %s; create another", sc.ID, sc.LastFiredAt.Format(time.RFC3339))
		}
		if !sc.Paused {
			return nil
		}
		next, err := First(sc, now)
		if err != nil {
			return err
		}
		sc.Paused, sc.NextAt, sc.LastError = false, next, ""
		return nil
	})
}

// change applies fn to the path's schedule and answers it.
func (h *Handler) change(w http.ResponseWriter, r *http.Request, fn func(*core.Schedule) error) error {
	id := r.PathValue("id")
	sc, err := h.Store.UpdateSchedule(r.Context(), id, fn)
	if err != nil {
		return web.NotFound(err, "schedule", id)
	}
	h.poke()
	web.WriteJSON(w, http.StatusOK, sc)
	return nil
}

func (h *Handler) delete(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if err := h.Store.DeleteSchedule(r.Context(), id); err != nil {
		return web.NotFound(err, "schedule", id)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (h *Handler) poke() {
	if h.Runner != nil {
		h.Runner.Poke()
	}
}
