// Package vaults serves the /v1/vaults endpoints (vaults and their
// credentials, write-only: answers carry metadata, never a value) and
// resolves credentials for outbound requests (Resolver, a
// core.CredentialSource), refreshing oauth access tokens. Secrets are
// sealed with the credential id as aad before they reach the store.
package vaults

import (
	"log/slog"
	"net/http"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
)

// Handler serves the vault endpoints. Every one is admin-only.
type Handler struct {
	Store  core.VaultStore
	Sealer core.Sealer
	Logger *slog.Logger
	// MaxBody bounds request bodies (default 64 KiB: credentials are small).
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
	handle("POST /v1/vaults", h.createVault)
	handle("GET /v1/vaults", h.listVaults)
	handle("GET /v1/vaults/{id}", h.getVault)
	handle("DELETE /v1/vaults/{id}", h.deleteVault)
	handle("POST /v1/vaults/{id}/credentials", h.createCredential)
	handle("GET /v1/vaults/{id}/credentials", h.listCredentials)
	handle("GET /v1/vaults/{id}/credentials/{cid}", h.getCredential)
	handle("POST /v1/vaults/{id}/credentials/{cid}", h.rotateCredential)
	handle("DELETE /v1/vaults/{id}/credentials/{cid}", h.deleteCredential)
}

type vaultBody struct {
	Name        string            `json:"name"`
	Description string            `json:"description"`
	Metadata    map[string]string `json:"metadata"`
}

const maxName = 200

func checkName(field, s string) error {
	switch {
	case s == "":
		return web.Invalid("field %q is required", field)
	case len(s) > maxName || !utf8.ValidString(s):
		return web.Invalid("field %q must be valid UTF-8 of at most %d bytes", field, maxName)
	}
	return nil
}

func (h *Handler) createVault(w http.ResponseWriter, r *http.Request) error {
	raw, err := web.ReadBody(w, r, h.MaxBody)
	if err != nil {
		return err
	}
	var b vaultBody
	if err := web.Decode(raw, &b); err != nil {
		return err
	}
	if err := checkName("name", b.Name); err != nil {
		return err
	}
	v, err := h.Store.CreateVault(r.Context(), &core.Vault{Name: b.Name, Description: b.Description, Metadata: b.Metadata})
	if err != nil {
		return err
	}
	h.Logger.Info("vault created", "vault_id", v.ID)
	web.WriteJSON(w, http.StatusCreated, v)
	return nil
}

func (h *Handler) listVaults(w http.ResponseWriter, r *http.Request) error {
	return web.List(w, r, h.Store.ListVaults)
}

func (h *Handler) getVault(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	v, err := h.Store.GetVault(r.Context(), id)
	if err != nil {
		return web.NotFound(err, "vault", id)
	}
	web.WriteJSON(w, http.StatusOK, v)
	return nil
}

func (h *Handler) deleteVault(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if err := h.Store.DeleteVault(r.Context(), id); err != nil {
		return web.NotFound(err, "vault", id)
	}
	h.Logger.Info("vault deleted", "vault_id", id)
	w.WriteHeader(http.StatusNoContent)
	return nil
}
