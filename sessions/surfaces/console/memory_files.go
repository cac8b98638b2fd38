package console

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

// memoryPlace is a store and one of its partitions, as a page names them.
type memoryPlace struct {
	Root  string
	Store *core.MemoryStore
	// Tenant is the partition ("*" is a shared store's).
	Tenant string
}

// StorePage is the address of the store's page.
func (p memoryPlace) StorePage() string { return p.Root + "memory/" + url.PathEscape(p.Store.ID) }

// FilesPage is the address of the partition's files.
func (p memoryPlace) FilesPage() string {
	return p.StorePage() + "/files?" + url.Values{"tenant": {p.Tenant}}.Encode()
}

// FilePage is the address of version v of the partition's file path (0:
// the latest).
func (p memoryPlace) FilePage(path string, v int) string {
	q := url.Values{"tenant": {p.Tenant}, "path": {path}}
	if v > 0 {
		q.Set("version", strconv.Itoa(v))
	}
	return p.StorePage() + "/file?" + q.Encode()
}

// memoryRow is a version as a list shows it.
type memoryRow struct {
	core.MemoryVersion
	// Session is the address of the page of the session that wrote it,
	// "" when none did.
	Session string
}

// rows are list's versions as a page at the place's depth shows them.
func (p memoryPlace) rows(list []core.MemoryVersion) []memoryRow {
	out := make([]memoryRow, len(list))
	for i, v := range list {
		out[i].MemoryVersion = v
		if v.SessionID != "" {
			out[i].Session = p.Root + "sessions/" + url.PathEscape(v.SessionID)
		}
	}
	return out
}

// place reads the request's store and tenant; ok is false when it
// answered already.
func (h *Handler) place(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession, tenant string) (memoryPlace, bool) {
	m, err := h.api.GetMemoryStore(r.Context(), r.PathValue("id"))
	if err != nil {
		h.apiFailed(w, r, s, "read the memory store", err)
		return memoryPlace{}, false
	}
	if tenant == "" && m.Shared {
		tenant = core.SharedPartition
	}
	return memoryPlace{Root: relative(r, ""), Store: m, Tenant: tenant}, true
}

// memoryFilesPage is a partition's files.
type memoryFilesPage struct {
	memoryPlace
	Files []memoryRow
}

func (h *Handler) memoryFiles(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	pl, ok := h.place(w, r, s, r.URL.Query().Get("tenant"))
	if !ok {
		return
	}
	files, err := h.api.MemoryFiles(r.Context(), pl.Store.ID, pl.Tenant)
	if err != nil {
		h.apiFailed(w, r, s, "list the memory files", err)
		return
	}
	h.render(w, r, http.StatusOK, "memory_files", layout{Title: "Memory of " + pl.Tenant, Nav: "memory", CSRF: s.CSRF,
		Page: &memoryFilesPage{memoryPlace: pl, Files: pl.rows(files)}})
}

// memoryFilePage is a file's versions and one version's content.
type memoryFilePage struct {
	memoryPlace
	CSRF, Path string
	Versions   []memoryRow
	// Shown is the version shown, with its content; Latest the file's
	// latest version.
	Shown  *core.MemoryVersion
	Latest int
	Errors formErrors
}

func (h *Handler) memoryFile(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	h.memoryFileView(w, r, s, r.URL.Query(), formErrors{}, http.StatusOK)
}

// memoryFileView renders the page of the file q names (tenant, path,
// version), with fe above its versions.
func (h *Handler) memoryFileView(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession, q url.Values, fe formErrors, status int) {
	ctx := r.Context()
	pl, ok := h.place(w, r, s, q.Get("tenant"))
	if !ok {
		return
	}
	p := &memoryFilePage{memoryPlace: pl, CSRF: s.CSRF, Path: q.Get("path"), Errors: fe}
	version, ok := versionParam(q)
	if !ok {
		h.message(w, r, s, http.StatusBadRequest, "No such version", "A memory file's versions are numbered from 1.")
		return
	}
	history, err := h.api.MemoryHistory(ctx, pl.Store.ID, pl.Tenant, p.Path)
	if err != nil {
		h.apiFailed(w, r, s, "read the file's versions", err)
		return
	}
	p.Versions = pl.rows(history)
	if len(p.Versions) > 0 {
		p.Latest = p.Versions[0].Version
	}
	if version == 0 {
		version = p.Latest
	}
	if p.Shown, err = h.api.MemoryFile(ctx, pl.Store.ID, pl.Tenant, p.Path, version); err != nil {
		h.apiFailed(w, r, s, "read the file", err)
		return
	}
	h.render(w, r, status, "memory_file", layout{Title: "Memory " + p.Path, Nav: "memory", CSRF: s.CSRF, Page: p})
}

func (h *Handler) revertMemory(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	f := r.PostForm
	b := client.MemoryRevert{Tenant: f.Get("tenant"), Path: f.Get("path")}
	// A version that is not a number is sent as 0, which the API refuses
	// in its words.
	b.Version, _ = strconv.Atoi(f.Get("version"))
	store := r.PathValue("id")
	v, err := h.api.RevertMemory(r.Context(), store, b)
	if err == nil {
		pl := memoryPlace{Store: &core.MemoryStore{ID: v.Store}, Tenant: v.Partition}
		done(w, r, pl.FilePage(v.Path, 0))
		return
	}
	fe, status, ok := refusal(err)
	if !ok {
		h.failed(w, r, s, "revert the memory file", err)
		return
	}
	h.memoryFileView(w, r, s, url.Values{"tenant": {b.Tenant}, "path": {b.Path}}, fe, status)
}
