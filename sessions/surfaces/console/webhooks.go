package console

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

// Bounds of what the webhooks page reads: destinations are few, and the
// dead and pending deliveries shown are the first of their lists (the
// deliveries page pages through all of them).
const (
	maxDestinationsShown = 100
	maxDeliveriesShown   = 50
)

// levels are the event levels a destination can follow, most verbose first.
var levels = []core.Level{core.LevelInternal, core.LevelProgress, core.LevelUser}

func (h *Handler) registerWebhooks(mux *http.ServeMux) {
	mux.HandleFunc("GET /console/webhooks", h.signedIn(h.webhooks))
	mux.HandleFunc("POST /console/webhooks/destinations", h.signedIn(h.createDestination))
	mux.HandleFunc("POST /console/webhooks/destinations/{id}/{action}", h.signedIn(h.destinationAction))
	mux.HandleFunc("GET /console/webhooks/deliveries", h.signedIn(h.deliveries))
	mux.HandleFunc("GET /console/webhooks/deliveries/{id}", h.signedIn(h.delivery))
	mux.HandleFunc("POST /console/webhooks/deliveries/{id}/redeliver", h.signedIn(h.redeliver))
}

// destinationForm is the create-destination form as typed, without its
// secret.
type destinationForm struct {
	URL, Level, Types, Agent string
	Errors                   formErrors
	// Cleared says a secret was typed, which is not shown again.
	Cleared bool
}

type webhooksPage struct {
	Root, CSRF   string
	Levels       []core.Level
	Destinations []core.Destination
	// NextDestinations is the address of the destinations' next page.
	NextDestinations string
	FirstPage        bool
	Create           destinationForm
	Dead, Pending    deliveryTable
	// MoreDead and MorePending go on in the deliveries page, "" when the
	// list is whole.
	MoreDead, MorePending string
}

func (h *Handler) webhooks(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	h.renderWebhooks(w, r, s, http.StatusOK, destinationForm{Level: string(core.LevelInternal)})
}

func (h *Handler) renderWebhooks(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession, status int, f destinationForm) {
	ctx := r.Context()
	after := r.URL.Query().Get("after")
	dests, err := h.api.ListDestinations(ctx, client.DestinationListParams{ListParams: client.ListParams{After: after, Limit: maxDestinationsShown}})
	if err != nil {
		h.apiFailed(w, r, s, "list the webhook destinations", err)
		return
	}
	p := webhooksPage{Root: relative(r, ""), CSRF: s.CSRF, Levels: levels, Destinations: dests.Data, FirstPage: after != "", Create: f}
	if dests.HasMore && len(dests.Data) > 0 {
		p.NextDestinations = p.Root + "webhooks?after=" + url.QueryEscape(dests.Data[len(dests.Data)-1].ID)
	}
	for _, l := range []struct {
		state   core.DeliveryState
		caption string
		table   *deliveryTable
		more    *string
	}{
		{core.DeliveryDead, "Given up on after the retry horizon; Redeliver queues one again.", &p.Dead, &p.MoreDead},
		{core.DeliveryPending, "Waiting for their first attempt or retrying.", &p.Pending, &p.MorePending},
	} {
		page, err := h.api.ListDeliveries(ctx, client.DeliveryListParams{State: l.state, ListParams: client.ListParams{Limit: maxDeliveriesShown}})
		if err != nil {
			h.apiFailed(w, r, s, "list the webhook deliveries", err)
			return
		}
		*l.table = newDeliveryTable(p.Root, s.CSRF, string(l.state), l.caption, page.Data)
		if page.HasMore && len(page.Data) > 0 {
			*l.more = p.Root + deliveriesQuery(deliveryFilter{State: string(l.state)}, page.Data[len(page.Data)-1].ID)
		}
	}
	h.render(w, r, status, "webhooks", layout{Title: "Webhooks", Nav: "webhooks", CSRF: s.CSRF, Page: &p})
}

// createdPage shows a destination just created, with the secret the
// gateway generated for it: the only time anyone sees it.
type createdPage struct {
	Root        string
	Destination core.Destination
	Secret      string
}

func (h *Handler) createDestination(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	text := func(name string) string { return strings.TrimSpace(r.PostForm.Get(name)) }
	f := destinationForm{URL: text("url"), Level: text("level"), Types: text("types"), Agent: text("agent")}
	// The secret is taken as typed (blank: the gateway generates one).
	secret := r.PostForm.Get("secret")
	f.Cleared = secret != ""
	spec := core.DestinationSpec{URL: f.URL, Secret: secret, Level: core.Level(f.Level), Agent: f.Agent,
		Types: strings.FieldsFunc(f.Types, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\r' || r == '\t' })}
	d, err := h.api.CreateDestination(r.Context(), spec)
	if err != nil {
		fe, status, ok := refusal(err, "url", "level", "types", "agent", "secret")
		if !ok {
			h.failed(w, r, s, "create the webhook destination", err)
			return
		}
		f.Errors = fe
		h.renderWebhooks(w, r, s, status, f)
		return
	}
	if d.Secret == "" {
		done(w, r, "webhooks#dest-"+url.PathEscape(d.ID))
		return
	}
	// Answered here rather than after a redirect: the secret must not sit
	// anywhere a later request could fetch it from.
	h.render(w, r, http.StatusCreated, "webhook_created", layout{Title: "Destination created", Nav: "webhooks", CSRF: s.CSRF,
		Page: &createdPage{Root: relative(r, ""), Destination: d.Destination, Secret: d.Secret}})
}

// destinationAction pauses, resumes or deletes a destination.
func (h *Handler) destinationAction(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	id := r.PathValue("id")
	var err error
	switch r.PathValue("action") {
	case "pause":
		_, err = h.api.PauseDestination(r.Context(), id)
	case "resume":
		_, err = h.api.ResumeDestination(r.Context(), id)
	case "delete":
		err = h.api.DeleteDestination(r.Context(), id)
	default:
		h.message(w, r, s, http.StatusNotFound, "Not found", "There is no console page at this address.")
		return
	}
	if err != nil {
		h.apiFailed(w, r, s, r.PathValue("action")+" the webhook destination", err)
		return
	}
	done(w, r, "webhooks")
}
