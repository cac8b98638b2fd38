package memory

import (
	"log/slog"
	"net/http"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
)

// Handler serves /v1/memory_stores. Every endpoint is admin-only.
type Handler struct {
	Stores core.MemoryStores
	Logger *slog.Logger
	// MaxBody bounds request bodies (default 64 KiB).
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
	handle("POST /v1/memory_stores", h.create)
	handle("GET /v1/memory_stores", h.list)
	handle("GET /v1/memory_stores/{id}", h.get)
	handle("POST /v1/memory_stores/{id}", h.update)
	handle("DELETE /v1/memory_stores/{id}", h.delete)
	handle("GET /v1/memory_stores/{id}/tenants", h.tenants)
	handle("GET /v1/memory_stores/{id}/files", h.files)
	handle("GET /v1/memory_stores/{id}/files/{path...}", h.file)
	handle("GET /v1/memory_stores/{id}/history/{path...}", h.history)
	handle("POST /v1/memory_stores/{id}/revert", h.revert)
}

// StoreParams is the body of memory store create and update. Pointers
// tell given from absent: on update only the given fields change (the
// name never does).
type StoreParams struct {
	Name        *string            `json:"name,omitempty"`
	Description *string            `json:"description,omitempty"`
	Shared      *bool              `json:"shared,omitempty"`
	Limits      *core.MemoryLimits `json:"limits,omitempty"`
	Metadata    *map[string]string `json:"metadata,omitempty"`
}

const maxDescription = 1024

// check refuses what no store may hold, naming the field.
func (b *StoreParams) check() error {
	if b.Name != nil {
		if err := (&core.MemoryStore{Name: *b.Name}).Validate(); err != nil {
			return web.Invalid("field \"name\" (%q): %v", *b.Name, err)
		}
	}
	if b.Description != nil && (utf8.RuneCountInString(*b.Description) > maxDescription || !utf8.ValidString(*b.Description)) {
		return web.Invalid("field \"description\": want valid UTF-8 of at most %d characters", maxDescription)
	}
	if l := b.Limits; l != nil {
		for _, f := range []struct {
			name string
			n    int64
		}{{"max_file_bytes", int64(l.MaxFileBytes)}, {"max_partition_bytes", l.MaxPartitionBytes}, {"max_versions", int64(l.MaxVersions)}} {
			if f.n < 0 {
				return web.Invalid("field \"limits.%s\" is %d: want 0 (the default) or more", f.name, f.n)
			}
		}
	}
	return nil
}

// apply sets the given fields on m.
func (b *StoreParams) apply(m *core.MemoryStore) {
	if b.Description != nil {
		m.Description = *b.Description
	}
	if b.Shared != nil {
		m.Shared = *b.Shared
	}
	if b.Limits != nil {
		m.Limits = *b.Limits
	}
	if b.Metadata != nil {
		m.Metadata = *b.Metadata
	}
}

func (h *Handler) read(w http.ResponseWriter, r *http.Request, v any) error {
	raw, err := web.ReadBody(w, r, h.MaxBody)
	if err != nil {
		return err
	}
	return web.Decode(raw, v)
}

func (h *Handler) create(w http.ResponseWriter, r *http.Request) error {
	var b StoreParams
	if err := h.read(w, r, &b); err != nil {
		return err
	}
	if b.Name == nil {
		return web.Invalid("field \"name\" is required")
	}
	if err := b.check(); err != nil {
		return err
	}
	m := &core.MemoryStore{Name: *b.Name}
	b.apply(m)
	m, err := h.Stores.CreateMemoryStore(r.Context(), m)
	if err != nil {
		return err
	}
	h.Logger.Info("memory store created", "memory_store_id", m.ID, "shared", m.Shared)
	web.WriteJSON(w, http.StatusCreated, m)
	return nil
}

func (h *Handler) list(w http.ResponseWriter, r *http.Request) error {
	return web.List(w, r, h.Stores.ListMemoryStores)
}

// store loads the path's store.
func (h *Handler) store(r *http.Request) (*core.MemoryStore, error) {
	id := r.PathValue("id")
	m, err := h.Stores.GetMemoryStore(r.Context(), id)
	if err != nil {
		return nil, web.NotFound(err, "memory store", id)
	}
	return m, nil
}

func (h *Handler) get(w http.ResponseWriter, r *http.Request) error {
	m, err := h.store(r)
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, m)
	return nil
}

func (h *Handler) update(w http.ResponseWriter, r *http.Request) error {
	var b StoreParams
	if err := h.read(w, r, &b); err != nil {
		return err
	}
	if b.Name != nil {
		return web.Invalid("field \"name\" cannot change: agents and the memory tool know the store by it")
	}
	if err := b.check(); err != nil {
		return err
	}
	id := r.PathValue("id")
	m, err := h.Stores.UpdateMemoryStore(r.Context(), id, func(m *core.MemoryStore) error {
		b.apply(m)
		return nil
	})
	if err != nil {
		return web.NotFound(err, "memory store", id)
	}
	h.Logger.Info("memory store updated", "memory_store_id", m.ID, "shared", m.Shared)
	web.WriteJSON(w, http.StatusOK, m)
	return nil
}

func (h *Handler) delete(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if err := h.Stores.DeleteMemoryStore(r.Context(), id); err != nil {
		return web.NotFound(err, "memory store", id)
	}
	h.Logger.Info("memory store deleted", "memory_store_id", id)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// partition is the tenant query parameter, required unless the store is
// shared (then its one partition is the default).
func partition(m *core.MemoryStore, given string) (string, error) {
	switch {
	case given != "":
		return given, nil
	case m.Shared:
		return core.SharedPartition, nil
	}
	return "", web.Invalid("tenant is required: memory store %q is not shared, so its files are kept per tenant (GET /v1/memory_stores/%s/tenants lists them)", m.Name, m.ID)
}
