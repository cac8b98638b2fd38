package webhooks

import (
	"log/slog"
	"net/http"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
)

// Handler serves /v1/destinations, /v1/sessions/{id}/destinations and
// /v1/deliveries. Every endpoint is admin-only.
type Handler struct {
	Service *Service
	Logger  *slog.Logger
	// MaxBody bounds request bodies (default 64 KiB: destinations are small).
	MaxBody int64
}

// Register mounts the endpoints on mux. Authentication happens before:
// every request carries a core.Principal.
func (h *Handler) Register(mux *http.ServeMux) {
	if h.MaxBody <= 0 {
		h.MaxBody = 64 << 10
	}
	if h.Logger == nil {
		h.Logger = slog.New(slog.DiscardHandler)
	}
	handle := web.AdminRoutes(mux, h.Logger)
	handle("POST /v1/destinations", h.createDestination)
	handle("GET /v1/destinations", h.listDestinations)
	handle("GET /v1/destinations/{id}", h.getDestination)
	handle("DELETE /v1/destinations/{id}", h.deleteDestination)
	handle("POST /v1/destinations/{id}/pause", h.pauseDestination)
	handle("POST /v1/destinations/{id}/resume", h.resumeDestination)
	handle("POST /v1/sessions/{id}/destinations", h.createSessionDestination)
	handle("GET /v1/sessions/{id}/destinations", h.listSessionDestinations)
	handle("GET /v1/deliveries", h.listDeliveries)
	handle("GET /v1/deliveries/{id}", h.getDelivery)
	handle("POST /v1/deliveries/{id}/redeliver", h.redeliver)
}

func (h *Handler) store() Store { return h.Service.cfg.Store }

func (h *Handler) create(w http.ResponseWriter, r *http.Request, sessionID string) error {
	raw, err := web.ReadBody(w, r, h.MaxBody)
	if err != nil {
		return err
	}
	var spec core.DestinationSpec
	if err := web.Decode(raw, &spec); err != nil {
		return err
	}
	nd, shown, err := h.Service.prepare(r.Context(), "", sessionID, spec, core.Now())
	if err != nil {
		return err
	}
	d, err := h.store().CreateDestination(r.Context(), nd)
	if err != nil {
		return web.NotFound(err, "session", sessionID)
	}
	shown.Destination = *d
	h.Logger.Info("destination created", "destination_id", d.ID, "session_id", d.SessionID, "agent_id", d.AgentID)
	web.WriteJSON(w, http.StatusCreated, shown)
	return nil
}

func (h *Handler) createDestination(w http.ResponseWriter, r *http.Request) error {
	return h.create(w, r, "")
}

func (h *Handler) createSessionDestination(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if _, err := h.store().GetSession(r.Context(), id); err != nil {
		return web.NotFound(err, "session", id)
	}
	return h.create(w, r, id)
}

func (h *Handler) list(w http.ResponseWriter, r *http.Request, q core.DestinationQuery) error {
	limit, err := web.Limit(r)
	if err != nil {
		return err
	}
	q.After, q.Limit = r.URL.Query().Get("after"), limit
	list, more, err := h.store().ListDestinations(r.Context(), q)
	if err != nil {
		return err
	}
	if list == nil {
		list = []*core.Destination{}
	}
	web.WriteJSON(w, http.StatusOK, web.Page[*core.Destination]{Data: list, HasMore: more})
	return nil
}

// listDestinations lists every destination, or with ?agent= the global
// ones limited to that agent (id or name), or with ?session= a session's.
func (h *Handler) listDestinations(w http.ResponseWriter, r *http.Request) error {
	q := core.DestinationQuery{SessionID: r.URL.Query().Get("session")}
	if agent := r.URL.Query().Get("agent"); agent != "" {
		a, err := h.store().GetAgent(r.Context(), agent)
		if err != nil {
			return web.NotFound(err, "agent", agent)
		}
		q.AgentID = a.ID
	}
	if q.SessionID != "" && q.AgentID != "" {
		return web.Invalid("session= and agent= select different destinations; give one")
	}
	return h.list(w, r, q)
}

func (h *Handler) listSessionDestinations(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if _, err := h.store().GetSession(r.Context(), id); err != nil {
		return web.NotFound(err, "session", id)
	}
	return h.list(w, r, core.DestinationQuery{SessionID: id})
}

func (h *Handler) getDestination(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	d, err := h.store().GetDestination(r.Context(), id)
	if err != nil {
		return web.NotFound(err, "destination", id)
	}
	web.WriteJSON(w, http.StatusOK, d)
	return nil
}

func (h *Handler) deleteDestination(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if err := h.store().DeleteDestination(r.Context(), id); err != nil {
		return web.NotFound(err, "destination", id)
	}
	h.Service.forget(id)
	h.Logger.Info("destination deleted", "destination_id", id)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// pauseDestination stops the destination's attempts until a resume; no
// dispatcher needs telling, since a paused destination's deliveries are
// never due.
func (h *Handler) pauseDestination(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	d, err := h.store().PauseDestination(r.Context(), id)
	if err != nil {
		return web.NotFound(err, "destination", id)
	}
	h.Logger.Info("destination paused", "destination_id", id)
	web.WriteJSON(w, http.StatusOK, d)
	return nil
}

func (h *Handler) resumeDestination(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	d, err := h.store().ResumeDestination(r.Context(), id)
	if err != nil {
		return web.NotFound(err, "destination", id)
	}
	h.Service.Notify()
	h.Logger.Info("destination resumed", "destination_id", id)
	web.WriteJSON(w, http.StatusOK, d)
	return nil
}

func (h *Handler) listDeliveries(w http.ResponseWriter, r *http.Request) error {
	limit, err := web.Limit(r)
	if err != nil {
		return err
	}
	v := r.URL.Query()
	state, ok := core.ParseDeliveryState(v.Get("state"))
	if !ok {
		return web.Invalid("state=%q: want pending, delivered or dead", v.Get("state"))
	}
	q := core.DeliveryQuery{DestinationID: v.Get("destination"), SessionID: v.Get("session"), State: state, After: v.Get("after"), Limit: limit}
	list, more, err := h.store().ListDeliveries(r.Context(), q)
	if err != nil {
		return err
	}
	if list == nil {
		list = []*core.Delivery{}
	}
	web.WriteJSON(w, http.StatusOK, web.Page[*core.Delivery]{Data: list, HasMore: more})
	return nil
}

func (h *Handler) getDelivery(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	d, err := h.store().GetDelivery(r.Context(), id)
	if err != nil {
		return web.NotFound(err, "delivery", id)
	}
	web.WriteJSON(w, http.StatusOK, d)
	return nil
}

func (h *Handler) redeliver(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	d, err := h.store().Redeliver(r.Context(), id)
	if err != nil {
		return web.NotFound(err, "delivery", id)
	}
	h.Service.Notify()
	h.Logger.Info("delivery redelivered", "delivery_id", id, "destination_id", d.DestinationID)
	web.WriteJSON(w, http.StatusAccepted, d)
	return nil
}
