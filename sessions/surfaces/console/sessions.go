package console

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// pageSize is how many sessions one page of the list shows.
const pageSize = 100

// providers are the origins the provider filter offers: "api" (sessions
// started over the API) and the platforms'.
func (h *Handler) providers() []string {
	out := []string{core.ProviderAPI}
	for _, p := range h.cfg.Platforms {
		out = append(out, p.Name)
	}
	return out
}

// sessionFilter is the sessions page's form, as the address carries it.
type sessionFilter struct {
	Status, Provider, Agent, Tenant, Q, After string
}

func readFilter(q url.Values, providers []string) (sessionFilter, error) {
	f := sessionFilter{
		Status: q.Get("status"), Provider: q.Get("provider"), Agent: q.Get("agent"),
		Tenant: q.Get("tenant"), Q: q.Get("q"), After: q.Get("after"),
	}
	if f.Status != "" && !slices.Contains(statuses, core.Status(f.Status)) {
		return f, fmt.Errorf("status %q: want one of the statuses offered", f.Status)
	}
	if f.Provider != "" && !slices.Contains(providers, f.Provider) {
		return f, fmt.Errorf("provider %q: want one of %s", f.Provider, strings.Join(providers, ", "))
	}
	for name, v := range map[string]string{"agent": f.Agent, "tenant": f.Tenant, "text": f.Q, "after": f.After} {
		if len(v) > 500 {
			return f, fmt.Errorf("%s: %d characters, at most 500", name, len(v))
		}
	}
	return f, nil
}

// query is the filter as an address's query, the cursor set to after.
func (f sessionFilter) query(after string) string {
	v := url.Values{}
	for k, s := range map[string]string{"status": f.Status, "provider": f.Provider, "agent": f.Agent, "tenant": f.Tenant, "q": f.Q, "after": after} {
		if s != "" {
			v.Set(k, s)
		}
	}
	return "sessions?" + v.Encode()
}

type sessionsPage struct {
	Filter    sessionFilter
	Statuses  []core.Status
	Providers []string
	// Agents are the agent filter's choices, by name; AgentID is the
	// agent the filter chose (its value may name it or give its id).
	Agents   []agentChoice
	AgentID  string
	Error    string
	Sessions []sessionRow
	// Next and First are the addresses of the next and the first page,
	// "" when there is none to go to.
	Next, First string
	Capped      bool
	Examined    int
}

func (h *Handler) sessions(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	f, err := readFilter(r.URL.Query(), h.providers())
	p := sessionsPage{Filter: f, Statuses: statuses, Providers: h.providers()}
	l := layout{Title: "Sessions", Nav: "sessions", CSRF: s.CSRF, Page: &p}
	names, aerr := h.agentNames(r.Context())
	if aerr != nil {
		h.failed(w, r, s, "list the agents", aerr)
		return
	}
	p.Agents, p.AgentID = names.choices(f.Agent), names.idOf(f.Agent)
	if err != nil {
		p.Error = err.Error()
		h.render(w, r, http.StatusBadRequest, "sessions", l)
		return
	}
	list, err := h.store.ListSessions(r.Context(), core.SessionFilter{
		Status: core.Status(f.Status), Provider: f.Provider, AgentID: p.AgentID, Tenant: f.Tenant,
		Text: f.Q, After: f.After, Limit: pageSize,
	})
	if err != nil {
		h.failed(w, r, s, "list the sessions", err)
		return
	}
	p.Sessions, p.Capped, p.Examined = names.rows(list.Sessions), list.Capped, core.DefaultMaxExamined
	if list.HasMore && list.Next != "" {
		p.Next = f.query(list.Next)
	}
	if f.After != "" {
		p.First = f.query("")
	}
	h.render(w, r, http.StatusOK, "sessions", l)
}
