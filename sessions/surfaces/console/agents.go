package console

import (
	"context"
	"errors"
	"net/http"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

func (h *Handler) registerAgents(mux *http.ServeMux) {
	mux.HandleFunc("GET /console/agents", h.signedIn(h.agents))
	mux.HandleFunc("GET /console/agents/new", h.signedIn(h.newAgent))
	mux.HandleFunc("POST /console/agents", h.signedIn(h.createAgent))
	mux.HandleFunc("GET /console/agents/{id}", h.signedIn(h.agent))
	mux.HandleFunc("POST /console/agents/{id}", h.signedIn(h.saveAgent))
	mux.HandleFunc("GET /console/agents/{id}/diff", h.signedIn(h.agentDiff))
}

type agentsPage struct {
	Agents []core.Agent
	// After is this page's cursor; Next the next page's, "" on the last.
	After, Next string
}

func (h *Handler) agents(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	after := r.URL.Query().Get("after")
	page, err := h.api.ListAgents(r.Context(), client.ListParams{After: after, Limit: pageSize})
	if err != nil {
		if fe, status, ok := refusal(err); ok {
			h.message(w, r, s, status, "Agents", fe.Form)
			return
		}
		h.failed(w, r, s, "list the agents", err)
		return
	}
	p := agentsPage{Agents: page.Data, After: after}
	if page.HasMore && len(page.Data) > 0 {
		p.Next = page.Data[len(page.Data)-1].ID
	}
	h.render(w, r, http.StatusOK, "agents", layout{Title: "Agents", Nav: "agents", CSRF: s.CSRF, Page: p})
}

// agentPage is the create and the edit form.
type agentPage struct {
	Root, CSRF string
	// Agent is the latest version (nil on create).
	Agent  *core.Agent
	Form   agentForm
	Errors formErrors
	// Environments are names offered for the environment field.
	Environments []string
	// Conflict is set when the save was refused because another version
	// was saved since the form was opened.
	Conflict *agentConflict
	Pins     *versionPins
}

// agentConflict says which version the form was opened at and which is
// the latest now.
type agentConflict struct{ Opened, Latest int }

func (h *Handler) newAgent(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	h.agentForm(w, r, s, http.StatusOK, &agentPage{Form: agentForm{}})
}

func (h *Handler) agent(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	a, err := h.api.GetAgent(r.Context(), r.PathValue("id"))
	if err != nil {
		h.apiFailed(w, r, s, "read the agent", err)
		return
	}
	h.agentForm(w, r, s, http.StatusOK, &agentPage{Agent: a, Form: agentFormOf(a)})
}

// agentForm renders the create or edit page, with the version pins on
// the edit page.
func (h *Handler) agentForm(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession, status int, p *agentPage) {
	p.Root, p.CSRF = relative(r, ""), s.CSRF
	ctx := r.Context()
	if envs, err := h.api.ListEnvironments(ctx, client.ListParams{Limit: pageSize}); err == nil {
		for _, e := range envs.Data {
			p.Environments = append(p.Environments, e.Name)
		}
	} else if !errors.Is(err, context.Canceled) {
		// Only the suggestions are missing; the field still takes a name.
		h.log.Warn("console: list environments for the agent form", "err", err)
	}
	title := "New agent"
	if p.Agent != nil {
		title = "Agent " + p.Agent.Name
		pins, err := h.versionPins(ctx, p.Agent)
		if err != nil {
			h.failed(w, r, s, "count the sessions of each version", err)
			return
		}
		p.Pins = pins
	}
	h.render(w, r, status, "agent", layout{Title: title, Nav: "agents", CSRF: s.CSRF, Page: p})
}

func (h *Handler) createAgent(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	f := readAgentForm(r.PostForm)
	params, fe := f.params(true)
	if fe.Any() {
		h.agentForm(w, r, s, http.StatusBadRequest, &agentPage{Form: f, Errors: fe})
		return
	}
	a, err := h.api.CreateAgent(r.Context(), params)
	if err != nil {
		fe, status, ok := refusal(err, agentFields...)
		if !ok {
			h.failed(w, r, s, "create the agent", err)
			return
		}
		h.agentForm(w, r, s, status, &agentPage{Form: f, Errors: fe})
		return
	}
	h.log.Info("console: agent created", "agent_id", a.ID)
	done(w, r, "agents/"+a.ID)
}

func (h *Handler) saveAgent(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	ctx, id := r.Context(), r.PathValue("id")
	cur, err := h.api.GetAgent(ctx, id)
	if err != nil {
		h.apiFailed(w, r, s, "read the agent", err)
		return
	}
	f := readAgentForm(r.PostForm)
	p := &agentPage{Agent: cur, Form: f}
	params, fe := f.params(false)
	if f.Version < 1 {
		fe.Form = "The form does not say which version it was opened at. Reload the page and make the change again."
	}
	if fe.Any() {
		p.Errors = fe
		h.agentForm(w, r, s, http.StatusBadRequest, p)
		return
	}
	opened := cur
	if f.Version != cur.Version {
		if opened, err = h.api.GetAgentVersion(ctx, cur.ID, f.Version); err != nil {
			h.apiFailed(w, r, s, "read the version the form was opened at", err)
			return
		}
	}
	keepUnshownLimits(params.Limits, opened.Limits)
	a, err := h.api.UpdateAgent(ctx, cur.ID, params)
	if err != nil {
		fe, status, ok := refusal(err, agentFields...)
		if !ok {
			h.failed(w, r, s, "save the agent", err)
			return
		}
		// A 409 is either a name taken or a version saved since the form
		// was opened; the latest version tells which.
		if status == http.StatusConflict {
			if latest, gerr := h.api.GetAgent(ctx, cur.ID); gerr == nil && latest.Version != f.Version {
				p.Agent, p.Conflict = latest, &agentConflict{Opened: f.Version, Latest: latest.Version}
				// Saving the form again replaces the latest version with
				// what is typed, knowingly.
				p.Form.Version, fe = latest.Version, formErrors{}
			}
		}
		p.Errors = fe
		h.agentForm(w, r, s, status, p)
		return
	}
	h.log.Info("console: agent saved", "agent_id", a.ID, "version", a.Version)
	done(w, r, "agents/"+a.ID)
}
