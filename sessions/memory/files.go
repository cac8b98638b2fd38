package memory

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
)

// RevertBody is the body of POST /v1/memory_stores/{id}/revert.
type RevertBody struct {
	Tenant  string `json:"tenant,omitempty"`
	Path    string `json:"path"`
	Version int    `json:"version"`
}

// revertedBy is who a revert from the API is recorded as.
const revertedBy = "admin"

func (h *Handler) tenants(w http.ResponseWriter, r *http.Request) error {
	m, err := h.store(r)
	if err != nil {
		return err
	}
	list, err := h.Stores.MemoryPartitions(r.Context(), m.ID)
	if err != nil {
		return err
	}
	if list == nil {
		list = []string{}
	}
	web.WriteJSON(w, http.StatusOK, web.Page[string]{Data: list})
	return nil
}

// scope is the store and partition of a files, file or history request.
func (h *Handler) scope(r *http.Request) (*core.MemoryStore, string, error) {
	m, err := h.store(r)
	if err != nil {
		return nil, "", err
	}
	p, err := partition(m, r.URL.Query().Get("tenant"))
	return m, p, err
}

// fileScope is scope and the file path of a file or history request.
func (h *Handler) fileScope(r *http.Request) (*core.MemoryStore, string, string, error) {
	m, p, err := h.scope(r)
	if err != nil {
		return nil, "", "", err
	}
	path := r.PathValue("path")
	if err := core.ValidMemoryPath(path); err != nil {
		return nil, "", "", web.Invalid("path: %s", reason(err))
	}
	return m, p, path, nil
}

func (h *Handler) files(w http.ResponseWriter, r *http.Request) error {
	m, p, err := h.scope(r)
	if err != nil {
		return err
	}
	list, err := h.Stores.MemoryFiles(r.Context(), m.ID, p, false)
	if err != nil {
		return err
	}
	writeVersions(w, list)
	return nil
}

func writeVersions(w http.ResponseWriter, list []core.MemoryVersion) {
	if list == nil {
		list = []core.MemoryVersion{}
	}
	web.WriteJSON(w, http.StatusOK, web.Page[core.MemoryVersion]{Data: list})
}

func (h *Handler) file(w http.ResponseWriter, r *http.Request) error {
	m, p, path, err := h.fileScope(r)
	if err != nil {
		return err
	}
	version := 0
	if s := r.URL.Query().Get("version"); s != "" {
		if version, err = strconv.Atoi(s); err != nil || version < 1 {
			return web.Invalid("version=%q: want a version number from 1 (omit it for the latest)", s)
		}
	}
	v, err := h.Stores.MemoryFile(r.Context(), m.ID, p, path, version)
	if errors.Is(err, core.ErrNotFound) {
		if version == 0 {
			return web.Errorf(http.StatusNotFound, "not_found", "memory file %q not found in tenant %q", path, p)
		}
		return web.Errorf(http.StatusNotFound, "not_found", "memory file %q has no version %d in tenant %q", path, version, p)
	}
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, v)
	return nil
}

func (h *Handler) history(w http.ResponseWriter, r *http.Request) error {
	m, p, path, err := h.fileScope(r)
	if err != nil {
		return err
	}
	list, err := h.Stores.MemoryHistory(r.Context(), m.ID, p, path)
	if errors.Is(err, core.ErrNotFound) || (err == nil && len(list) == 0) {
		return web.Errorf(http.StatusNotFound, "not_found", "memory file %q not found in tenant %q", path, p)
	}
	if err != nil {
		return err
	}
	writeVersions(w, list)
	return nil
}

func (h *Handler) revert(w http.ResponseWriter, r *http.Request) error {
	m, err := h.store(r)
	if err != nil {
		return err
	}
	var b RevertBody
	if err := h.read(w, r, &b); err != nil {
		return err
	}
	p, err := partition(m, b.Tenant)
	if err != nil {
		return err
	}
	if err := core.ValidMemoryPath(b.Path); err != nil {
		return web.Invalid("field \"path\": %s", reason(err))
	}
	if b.Version < 1 {
		return web.Invalid("field \"version\" is required: the version whose content to write again, from 1")
	}
	written, err := h.Stores.ChangeMemory(r.Context(), core.MemoryChange{Store: m.ID, Partition: p, Op: core.MemoryOpRevert, Path: b.Path, Version: b.Version, By: revertedBy})
	if errors.Is(err, core.ErrNotFound) {
		return web.Errorf(http.StatusNotFound, "not_found", "memory file %q has no version %d in tenant %q", b.Path, b.Version, p)
	}
	if err != nil {
		return err
	}
	if len(written) == 0 {
		return errors.New("revert wrote no version")
	}
	v := written[len(written)-1]
	h.Logger.Info("memory file reverted", "memory_store_id", m.ID, "tenant", p, "path", b.Path, "to_version", b.Version, "version", v.Version)
	web.WriteJSON(w, http.StatusOK, v)
	return nil
}
