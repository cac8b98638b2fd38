// Package installations serves /v1/installations, shared by every
// provider: list and read the installations (Slack workspaces, GitHub App
// installations, Linear organizations), bind one to an agent, set who may
// trigger it, and delete it, which revokes its tokens at the platform and
// forgets them. Tokens never appear in an answer.
//
// It lives under providers/ rather than under sessions/ because deleting an
// installation is a provider's act (each revokes its own tokens), and it
// reaches the providers only through the providers.Revoker capability.
package installations

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
	"github.com/switchboardhq/switchboard/providers"
)

// Agents resolves the agent an installation is bound to.
type Agents interface {
	GetAgent(ctx context.Context, idOrName string) (*core.Agent, error)
}

// Handler serves the endpoints. Every one is admin-only.
type Handler struct {
	Store  core.InstallationStore
	Agents Agents
	// Revokers revoke tokens at the platform, by provider name; a provider
	// without one has its tokens forgotten only.
	Revokers map[string]providers.Revoker
	Logger   *slog.Logger
	MaxBody  int64 // default 64 KiB
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
	handle("GET /v1/installations", h.list)
	handle("GET /v1/installations/{id}", h.get)
	handle("POST /v1/installations/{id}", h.update)
	handle("DELETE /v1/installations/{id}", h.delete)
}

func (h *Handler) list(w http.ResponseWriter, r *http.Request) error {
	limit, err := web.Limit(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	list, more, err := h.Store.ListInstallations(r.Context(), core.InstallationQuery{Provider: q.Get("provider"), After: q.Get("after"), Limit: limit})
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, web.Page[*core.Installation]{Data: list, HasMore: more})
	return nil
}

func (h *Handler) get(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	in, err := h.Store.GetInstallation(r.Context(), id)
	if err != nil {
		return web.NotFound(err, "installation", id)
	}
	web.WriteJSON(w, http.StatusOK, in)
	return nil
}

// updateBody is the body of POST /v1/installations/{id}: the fields given
// replace the installation's. agent is an agent id or name; "" or null
// unbinds it (it serves the agent named default again).
type updateBody struct {
	Agent  json.RawMessage    `json:"agent"`
	Policy *core.AccessPolicy `json:"policy"`
	// BudgetApprovers replaces the users who may set a session's budget
	// from its thread; [] leaves none.
	BudgetApprovers *[]string `json:"budget_approvers"`
	// TenantGroup replaces the installation's tenant group; "" takes it
	// out of any.
	TenantGroup *string `json:"tenant_group"`
}

func (h *Handler) update(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	raw, err := web.ReadBody(w, r, h.MaxBody)
	if err != nil {
		return err
	}
	var b updateBody
	if err := web.Decode(raw, &b); err != nil {
		return err
	}
	agentID, setAgent, err := h.resolveAgent(r.Context(), b.Agent)
	if err != nil {
		return err
	}
	if b.Policy != nil {
		for _, list := range [][]string{b.Policy.Channels, b.Policy.Users} {
			for _, v := range list {
				if v == "" {
					return web.Invalid("policy lists may not hold empty strings")
				}
			}
		}
	}
	if g := b.TenantGroup; g != nil && (len(*g) > 64 || strings.TrimSpace(*g) != *g) {
		return web.Invalid("field \"tenant_group\": at most 64 characters, without spaces around")
	}
	if b.BudgetApprovers != nil && slices.Contains(*b.BudgetApprovers, "") {
		return web.Invalid("field \"budget_approvers\" may not hold empty strings")
	}
	in, err := h.Store.UpdateInstallation(r.Context(), id, func(in *core.Installation) error {
		if setAgent {
			in.Agent = agentID
		}
		if b.Policy != nil {
			in.Policy = *b.Policy
		}
		if b.BudgetApprovers != nil {
			in.BudgetApprovers = *b.BudgetApprovers
		}
		if b.TenantGroup != nil {
			in.TenantGroup = *b.TenantGroup
		}
		return nil
	})
	if err != nil {
		return web.NotFound(err, "installation", id)
	}
	h.Logger.Info("installation updated", "installation_id", id, "agent_id", in.Agent, "channels", len(in.Policy.Channels), "users", len(in.Policy.Users))
	web.WriteJSON(w, http.StatusOK, in)
	return nil
}

// resolveAgent reads the body's agent field: absent leaves the binding,
// null or "" clears it, a name or id binds the agent's id.
func (h *Handler) resolveAgent(ctx context.Context, raw json.RawMessage) (id string, set bool, err error) {
	if len(raw) == 0 {
		return "", false, nil
	}
	if string(raw) == "null" {
		return "", true, nil
	}
	var ref string
	if err := json.Unmarshal(raw, &ref); err != nil {
		return "", false, web.Invalid(`field "agent": want an agent id or name, or null`)
	}
	if ref == "" {
		return "", true, nil
	}
	a, err := h.Agents.GetAgent(ctx, ref)
	if errors.Is(err, core.ErrNotFound) {
		return "", false, web.Invalid("agent %q not found", ref)
	}
	if err != nil {
		return "", false, err
	}
	return a.ID, true, nil
}

func (h *Handler) delete(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	in, err := h.Store.GetInstallation(r.Context(), id)
	if err != nil {
		return web.NotFound(err, "installation", id)
	}
	// Revokers are asked whether or not tokens are stored: GitHub's are
	// made from the App key and held only in memory.
	if rv := h.Revokers[in.Provider]; rv != nil {
		// The tokens are forgotten whatever the platform answers: an admin
		// deleting an installation wants the gateway to hold nothing of it.
		if err := rv.Revoke(r.Context(), in); err != nil {
			h.Logger.Warn("revoke tokens at the platform failed; forgetting them anyway", "installation_id", id, "provider", in.Provider, "err", err)
		}
	}
	if err := h.Store.DeleteInstallation(r.Context(), id); err != nil {
		return web.NotFound(err, "installation", id)
	}
	h.Logger.Info("installation deleted", "installation_id", id, "provider", in.Provider)
	w.WriteHeader(http.StatusNoContent)
	return nil
}
