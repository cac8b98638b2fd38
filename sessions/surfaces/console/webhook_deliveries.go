package console

import (
	"net/http"
	"net/url"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

// deliveryStates are the states the deliveries page filters by.
var deliveryStates = []core.DeliveryState{core.DeliveryPending, core.DeliveryDelivered, core.DeliveryDead}

// deliveriesPageSize is how many deliveries one page of the list shows.
const deliveriesPageSize = 100

// deliveryFilter is the deliveries page's form, as the address carries it.
type deliveryFilter struct {
	State, Destination, Session string
}

// deliveriesQuery is the deliveries page's address (relative to the
// console) for f, going on after the delivery after.
func deliveriesQuery(f deliveryFilter, after string) string {
	v := url.Values{}
	for k, s := range map[string]string{"state": f.State, "destination": f.Destination, "session": f.Session, "after": after} {
		if s != "" {
			v.Set(k, s)
		}
	}
	return "webhooks/deliveries?" + v.Encode()
}

type deliveriesPage struct {
	Root, CSRF string
	States     []core.DeliveryState
	Filter     deliveryFilter
	Deliveries deliveryTable
	// Error is the API's refusal of the filter.
	Error       string
	Next, First string
}

func (h *Handler) deliveries(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	q := r.URL.Query()
	f := deliveryFilter{State: q.Get("state"), Destination: q.Get("destination"), Session: q.Get("session")}
	after := q.Get("after")
	p := deliveriesPage{Root: relative(r, ""), CSRF: s.CSRF, States: deliveryStates, Filter: f}
	l := layout{Title: "Webhook deliveries", Nav: "webhooks", CSRF: s.CSRF, Page: &p}
	page, err := h.api.ListDeliveries(r.Context(), client.DeliveryListParams{
		State: core.DeliveryState(f.State), Destination: f.Destination, Session: f.Session,
		ListParams: client.ListParams{After: after, Limit: deliveriesPageSize},
	})
	if err != nil {
		fe, status, ok := refusal(err)
		if !ok {
			h.failed(w, r, s, "list the webhook deliveries", err)
			return
		}
		p.Error = fe.Form
		h.render(w, r, status, "webhook_deliveries", l)
		return
	}
	p.Deliveries = newDeliveryTable(p.Root, s.CSRF, "deliveries", "In the order they were made; Next goes on to later ones.", page.Data)
	if page.HasMore && len(page.Data) > 0 {
		p.Next = p.Root + deliveriesQuery(f, page.Data[len(page.Data)-1].ID)
	}
	if after != "" {
		p.First = p.Root + deliveriesQuery(f, "")
	}
	h.render(w, r, http.StatusOK, "webhook_deliveries", l)
}

type deliveryPage struct {
	Root, CSRF string
	Delivery   *core.Delivery
}

func (h *Handler) delivery(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	d, err := h.api.GetDelivery(r.Context(), r.PathValue("id"))
	if err != nil {
		h.apiFailed(w, r, s, "read the delivery", err)
		return
	}
	h.render(w, r, http.StatusOK, "webhook_delivery", layout{Title: "Delivery " + d.ID, Nav: "webhooks", CSRF: s.CSRF,
		Page: &deliveryPage{Root: relative(r, ""), CSRF: s.CSRF, Delivery: d}})
}

func (h *Handler) redeliver(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	id := r.PathValue("id")
	if _, err := h.api.Redeliver(r.Context(), id); err != nil {
		h.apiFailed(w, r, s, "redeliver "+id, err)
		return
	}
	done(w, r, "webhooks/deliveries/"+url.PathEscape(id))
}

// deliveryTable is what the "deliveryTable" template shows.
type deliveryTable struct {
	Root, CSRF string
	// ID prefixes the table's id; Caption says what it lists.
	ID, Caption string
	List        []deliveryRow
}

// deliveryRow is a delivery with its last attempt (nil before the first).
type deliveryRow struct {
	core.Delivery
	Last *core.Attempt
}

func newDeliveryTable(root, csrf, id, caption string, list []core.Delivery) deliveryTable {
	t := deliveryTable{Root: root, CSRF: csrf, ID: id, Caption: caption, List: make([]deliveryRow, len(list))}
	for i, d := range list {
		t.List[i].Delivery = d
		if n := len(d.Attempts); n > 0 {
			t.List[i].Last = &d.Attempts[n-1]
		}
	}
	return t
}
