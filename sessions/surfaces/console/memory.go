package console

import (
	"net/http"
	"net/url"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

func (h *Handler) registerMemory(mux *http.ServeMux) {
	mux.HandleFunc("GET /console/memory", h.signedIn(h.memoryStores))
	mux.HandleFunc("POST /console/memory", h.signedIn(h.createMemoryStore))
	mux.HandleFunc("GET /console/memory/{id}", h.signedIn(h.memoryStore))
	mux.HandleFunc("POST /console/memory/{id}", h.signedIn(h.updateMemoryStore))
	mux.HandleFunc("GET /console/memory/{id}/delete", h.signedIn(h.memoryDeletePage))
	mux.HandleFunc("POST /console/memory/{id}/delete", h.signedIn(h.deleteMemoryStore))
	mux.HandleFunc("GET /console/memory/{id}/files", h.signedIn(h.memoryFiles))
	mux.HandleFunc("GET /console/memory/{id}/file", h.signedIn(h.memoryFile))
	mux.HandleFunc("POST /console/memory/{id}/revert", h.signedIn(h.revertMemory))
}

// memoryStoreForm is the create and edit form of a store, as typed.
type memoryStoreForm struct {
	Name, Description string
	Shared            bool
}

func readMemoryStoreForm(r *http.Request) memoryStoreForm {
	return memoryStoreForm{Name: r.PostForm.Get("name"), Description: r.PostForm.Get("description"), Shared: r.PostForm.Get("shared") == "on"}
}

// memoryStoresPage lists the stores, with the form of a new one.
type memoryStoresPage struct {
	CSRF        string
	Stores      []core.MemoryStore
	Next, First string
	Form        memoryStoreForm
	Errors      formErrors
}

func (h *Handler) memoryStores(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	h.memoryStoreList(w, r, s, &memoryStoresPage{CSRF: s.CSRF}, http.StatusOK)
}

func (h *Handler) memoryStoreList(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession, p *memoryStoresPage, status int) {
	after := r.URL.Query().Get("after")
	page, err := h.api.ListMemoryStores(r.Context(), client.ListParams{After: after, Limit: skillPageSize})
	if err != nil {
		h.failed(w, r, s, "list the memory stores", err)
		return
	}
	p.Stores = page.Data
	if page.HasMore && len(page.Data) > 0 {
		p.Next = "memory?after=" + url.QueryEscape(page.Data[len(page.Data)-1].ID)
	}
	if after != "" {
		p.First = "memory"
	}
	h.render(w, r, status, "memory", layout{Title: "Memory", Nav: "memory", CSRF: s.CSRF, Page: p})
}

func (h *Handler) createMemoryStore(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	f := readMemoryStoreForm(r)
	m, err := h.api.CreateMemoryStore(r.Context(), client.MemoryStoreParams{Name: &f.Name, Description: &f.Description, Shared: &f.Shared})
	if err != nil {
		fe, status, ok := refusal(err, "name", "description", "shared")
		if !ok {
			h.failed(w, r, s, "create the memory store", err)
			return
		}
		h.memoryStoreList(w, r, s, &memoryStoresPage{CSRF: s.CSRF, Form: f, Errors: fe}, status)
		return
	}
	done(w, r, "memory/"+url.PathEscape(m.ID))
}

// memoryStorePage is one store: its settings, their form, and its
// partitions.
type memoryStorePage struct {
	Root, CSRF string
	Store      *core.MemoryStore
	// Limits are the store's limits with the defaults filled in.
	Limits  core.MemoryLimits
	Tenants []string
	Form    memoryStoreForm
	Errors  formErrors
}

// Files is the address of a partition's files.
func (p *memoryStorePage) Files(tenant string) string {
	return p.Root + "memory/" + url.PathEscape(p.Store.ID) + "/files?" + url.Values{"tenant": {tenant}}.Encode()
}

func (h *Handler) memoryStore(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	h.memoryStoreView(w, r, s, nil, formErrors{}, http.StatusOK)
}

// memoryStoreView renders the store's page; f, when set, is the edit
// form as typed, shown with fe.
func (h *Handler) memoryStoreView(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession, f *memoryStoreForm, fe formErrors, status int) {
	ctx := r.Context()
	m, err := h.api.GetMemoryStore(ctx, r.PathValue("id"))
	if err != nil {
		h.apiFailed(w, r, s, "read the memory store", err)
		return
	}
	tenants, err := h.api.MemoryTenants(ctx, m.ID)
	if err != nil {
		h.failed(w, r, s, "list the memory store's tenants", err)
		return
	}
	p := &memoryStorePage{Root: relative(r, ""), CSRF: s.CSRF, Store: m, Limits: m.Limits.Or(core.DefaultMemoryLimits), Tenants: tenants,
		Form: memoryStoreForm{Name: m.Name, Description: m.Description, Shared: m.Shared}, Errors: fe}
	if f != nil {
		p.Form = *f
	}
	h.render(w, r, status, "memory_store", layout{Title: "Memory store " + m.Name, Nav: "memory", CSRF: s.CSRF, Page: p})
}

func (h *Handler) updateMemoryStore(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	f := readMemoryStoreForm(r)
	m, err := h.api.UpdateMemoryStore(r.Context(), r.PathValue("id"), client.MemoryStoreParams{Description: &f.Description, Shared: &f.Shared})
	if err != nil {
		fe, status, ok := refusal(err, "description", "shared")
		if !ok {
			h.failed(w, r, s, "change the memory store", err)
			return
		}
		h.memoryStoreView(w, r, s, &f, fe, status)
		return
	}
	done(w, r, "memory/"+url.PathEscape(m.ID))
}

func (h *Handler) memoryDeletePage(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	m, err := h.api.GetMemoryStore(r.Context(), r.PathValue("id"))
	if err != nil {
		h.apiFailed(w, r, s, "read the memory store", err)
		return
	}
	h.confirm(w, r, s, http.StatusOK, "memory_delete", "memory", m.Name, "memory/"+url.PathEscape(m.ID), "")
}

func (h *Handler) deleteMemoryStore(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	h.deleteConfirmed(w, r, s, "memory_delete", "memory", "memory store", h.api.DeleteMemoryStore)
}
