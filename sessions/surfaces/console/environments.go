package console

import (
	"context"
	"fmt"
	"net/http"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

func (h *Handler) registerEnvironments(mux *http.ServeMux) {
	mux.HandleFunc("GET /console/environments", h.signedIn(h.environments))
	mux.HandleFunc("GET /console/environments/new", h.signedIn(h.newEnvironment))
	mux.HandleFunc("POST /console/environments", h.signedIn(h.createEnvironment))
	mux.HandleFunc("GET /console/environments/{id}", h.signedIn(h.environment))
	mux.HandleFunc("POST /console/environments/{id}", h.signedIn(h.saveEnvironment))
	mux.HandleFunc("GET /console/environments/{id}/delete", h.signedIn(h.confirmDeleteEnvironment))
	mux.HandleFunc("POST /console/environments/{id}/delete", h.signedIn(h.deleteEnvironment))
}

type environmentsPage struct {
	Environments []core.Environment
	After, Next  string
	// SandboxOff: no session runs in an environment; Why is the cause
	// and its fix, when the gateway knows them.
	SandboxOff bool
	Why        *SandboxOff
}

func (h *Handler) environments(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	after := r.URL.Query().Get("after")
	page, err := h.api.ListEnvironments(r.Context(), client.ListParams{After: after, Limit: pageSize})
	if err != nil {
		h.apiFailed(w, r, s, "list the environments", err)
		return
	}
	p := environmentsPage{Environments: page.Data, After: after, SandboxOff: h.cfg.Containers == nil, Why: h.cfg.SandboxOff}
	if page.HasMore && len(page.Data) > 0 {
		p.Next = page.Data[len(page.Data)-1].ID
	}
	h.render(w, r, http.StatusOK, "environments", layout{Title: "Environments", Nav: "environments", CSRF: s.CSRF, Page: p})
}

// environmentPage is the create and the edit form.
type environmentPage struct {
	Root, CSRF  string
	Environment *core.Environment // nil on create
	Form        environmentForm
	Errors      formErrors
	Managers    []string
}

func (h *Handler) newEnvironment(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	h.environmentForm(w, r, s, http.StatusOK, &environmentPage{Form: environmentForm{Mode: core.NetworkNone, Packages: map[string]string{}}})
}

func (h *Handler) environment(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	e, err := h.api.GetEnvironment(r.Context(), r.PathValue("id"))
	if err != nil {
		h.apiFailed(w, r, s, "read the environment", err)
		return
	}
	h.environmentForm(w, r, s, http.StatusOK, &environmentPage{Environment: e, Form: environmentFormOf(e)})
}

func (h *Handler) environmentForm(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession, status int, p *environmentPage) {
	p.Root, p.CSRF, p.Managers = relative(r, ""), s.CSRF, packageManagers
	title := "New environment"
	if p.Environment != nil {
		title = "Environment " + p.Environment.Name
	}
	h.render(w, r, status, "environment", layout{Title: title, Nav: "environments", CSRF: s.CSRF, Page: p})
}

func (h *Handler) createEnvironment(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	h.postEnvironment(w, r, s, nil)
}

func (h *Handler) saveEnvironment(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	cur, err := h.api.GetEnvironment(r.Context(), r.PathValue("id"))
	if err != nil {
		h.apiFailed(w, r, s, "read the environment", err)
		return
	}
	h.postEnvironment(w, r, s, cur)
}

// postEnvironment creates an environment (cur nil) or replaces cur's
// fields with the form's.
func (h *Handler) postEnvironment(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession, cur *core.Environment) {
	f := readEnvironmentForm(r.PostForm)
	p := &environmentPage{Environment: cur, Form: f}
	params, fe := f.params()
	if fe.Any() {
		p.Errors = fe
		h.environmentForm(w, r, s, http.StatusBadRequest, p)
		return
	}
	var e *core.Environment
	var err error
	what := "create the environment"
	if cur == nil {
		e, err = h.api.CreateEnvironment(r.Context(), params)
	} else {
		what = "save the environment"
		e, err = h.api.UpdateEnvironment(r.Context(), cur.ID, params)
	}
	if err != nil {
		fe, status, ok := refusal(err, environmentFields...)
		if !ok {
			h.failed(w, r, s, what, err)
			return
		}
		p.Errors = fe
		h.environmentForm(w, r, s, status, p)
		return
	}
	h.log.Info("console: environment saved", "environment_id", e.ID)
	done(w, r, "environments/"+e.ID)
}

// deletePage confirms a deletion, naming the agents it would break.
type deletePage struct {
	Root, CSRF  string
	Environment *core.Environment
	// Agents are those whose latest version names the environment;
	// Capped says more agents exist than were looked at.
	Agents []core.Agent
	Capped bool
	Error  string
}

func (h *Handler) confirmDeleteEnvironment(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	e, err := h.api.GetEnvironment(r.Context(), r.PathValue("id"))
	if err != nil {
		h.apiFailed(w, r, s, "read the environment", err)
		return
	}
	h.deleteForm(w, r, s, http.StatusOK, &deletePage{Environment: e})
}

func (h *Handler) deleteForm(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession, status int, p *deletePage) {
	p.Root, p.CSRF = relative(r, ""), s.CSRF
	var err error
	if p.Agents, p.Capped, err = h.agentsNaming(r.Context(), p.Environment); err != nil {
		h.failed(w, r, s, "list the agents", err)
		return
	}
	h.render(w, r, status, "environment_delete", layout{Title: "Delete environment " + p.Environment.Name, Nav: "environments", CSRF: s.CSRF, Page: p})
}

func (h *Handler) deleteEnvironment(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	ctx, id := r.Context(), r.PathValue("id")
	e, err := h.api.GetEnvironment(ctx, id)
	if err != nil {
		h.apiFailed(w, r, s, "read the environment", err)
		return
	}
	if err := h.api.DeleteEnvironment(ctx, e.ID); err != nil {
		fe, status, ok := refusal(err)
		if !ok {
			h.failed(w, r, s, "delete the environment", err)
			return
		}
		h.deleteForm(w, r, s, status, &deletePage{Environment: e, Error: fe.Form})
		return
	}
	h.log.Info("console: environment deleted", "environment_id", e.ID)
	done(w, r, "environments")
}

// maxAgentPages bounds the pages of agents read to find those naming an
// environment.
const maxAgentPages = 10

// agentsNaming lists the agents whose latest version names e, by id or
// by name.
func (h *Handler) agentsNaming(ctx context.Context, e *core.Environment) (out []core.Agent, capped bool, err error) {
	after := ""
	for range maxAgentPages {
		page, err := h.api.ListAgents(ctx, client.ListParams{After: after, Limit: pageSize})
		if err != nil {
			return nil, false, fmt.Errorf("list agents: %w", err)
		}
		for _, a := range page.Data {
			if a.Environment != "" && (a.Environment == e.ID || a.Environment == e.Name) {
				out = append(out, a)
			}
		}
		if !page.HasMore || len(page.Data) == 0 {
			return out, false, nil
		}
		after = page.Data[len(page.Data)-1].ID
	}
	return out, true, nil
}
