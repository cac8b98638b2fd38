package console

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

// maxVaultsShown bounds the vaults one page of the list shows.
const maxVaultsShown = 100

func (h *Handler) registerVaults(mux *http.ServeMux) {
	mux.HandleFunc("GET /console/vaults", h.signedIn(h.vaults))
	mux.HandleFunc("POST /console/vaults", h.signedIn(h.createVault))
	mux.HandleFunc("GET /console/vaults/{id}", h.signedIn(h.vault))
	mux.HandleFunc("POST /console/vaults/{id}/delete", h.signedIn(h.deleteVault))
	mux.HandleFunc("POST /console/vaults/{id}/credentials", h.signedIn(h.createCredential))
	mux.HandleFunc("POST /console/vaults/{id}/credentials/{cid}/rotate", h.signedIn(h.rotateCredential))
	mux.HandleFunc("POST /console/vaults/{id}/credentials/{cid}/delete", h.signedIn(h.deleteCredential))
}

// vaultForm is the create-vault form as typed.
type vaultForm struct {
	Name, Description string
	Errors            formErrors
}

type vaultsPage struct {
	Root, CSRF string
	Vaults     []core.Vault
	// Next is the address of the next page, "" on the last.
	Next   string
	First  bool
	Create vaultForm
}

func (h *Handler) vaults(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	h.renderVaults(w, r, s, http.StatusOK, vaultForm{})
}

// renderVaults shows the vault list with the create form f.
func (h *Handler) renderVaults(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession, status int, f vaultForm) {
	after := r.URL.Query().Get("after")
	list, err := h.api.ListVaults(r.Context(), client.ListParams{After: after, Limit: maxVaultsShown})
	if err != nil {
		h.apiFailed(w, r, s, "list the vaults", err)
		return
	}
	p := vaultsPage{Root: relative(r, ""), CSRF: s.CSRF, Vaults: list.Data, First: after != "", Create: f}
	if list.HasMore && len(list.Data) > 0 {
		p.Next = p.Root + "vaults?after=" + url.QueryEscape(list.Data[len(list.Data)-1].ID)
	}
	h.render(w, r, status, "vaults", layout{Title: "Vaults", Nav: "vaults", CSRF: s.CSRF, Page: &p})
}

func (h *Handler) createVault(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	f := vaultForm{Name: strings.TrimSpace(r.PostForm.Get("name")), Description: strings.TrimSpace(r.PostForm.Get("description"))}
	v, err := h.api.CreateVault(r.Context(), client.VaultParams{Name: f.Name, Description: f.Description})
	if err != nil {
		fe, status, ok := refusal(err, "name", "description")
		if !ok {
			h.failed(w, r, s, "create the vault", err)
			return
		}
		f.Errors = fe
		h.renderVaults(w, r, s, status, f)
		return
	}
	done(w, r, "vaults/"+url.PathEscape(v.ID))
}

func (h *Handler) deleteVault(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	if err := h.api.DeleteVault(r.Context(), r.PathValue("id")); err != nil {
		h.apiFailed(w, r, s, "delete the vault", err)
		return
	}
	done(w, r, "vaults")
}
