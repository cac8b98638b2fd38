// Package skills serves the /v1/skills endpoints (skill folders uploaded
// as archives, each upload a new version; listed, read file by file,
// deleted) and gives sessions their agent's pinned skills: the primer that
// tells the model of them, the skill tool that reads them on a gateway
// without sandboxes, and the source of what a sandbox mounts at
// /skills/<name>/.
package skills

import (
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/skill"
	"github.com/switchboardhq/switchboard/core/web"
)

// Handler serves the skill endpoints. Every one is admin-only.
type Handler struct {
	Store  core.SkillStore
	Logger *slog.Logger
	// MaxBytes bounds an upload: its body, and its files uncompressed
	// (default core.DefaultMaxSkillBytes). The API's body limit does not
	// apply: skills are larger than the JSON the other endpoints take.
	MaxBytes int64
}

// Register mounts the endpoints on mux. Authentication happens before:
// every request carries a core.Principal.
func (h *Handler) Register(mux *http.ServeMux) {
	if h.MaxBytes <= 0 {
		h.MaxBytes = core.DefaultMaxSkillBytes
	}
	if h.Logger == nil {
		h.Logger = slog.New(slog.DiscardHandler)
	}
	handle := web.AdminRoutes(mux, h.Logger)
	handle("POST /v1/skills", h.create)
	handle("GET /v1/skills", h.list)
	handle("GET /v1/skills/{id}", h.get)
	handle("DELETE /v1/skills/{id}", h.delete)
	handle("POST /v1/skills/{id}/versions", h.update)
	handle("GET /v1/skills/{id}/files/{path...}", h.file)
}

// upload reads the body as a skill folder.
func (h *Handler) upload(w http.ResponseWriter, r *http.Request) (core.SkillUpload, error) {
	raw, err := web.ReadBody(w, r, h.MaxBytes)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return core.SkillUpload{}, web.Errorf(http.StatusRequestEntityTooLarge, "payload_too_large",
			"the skill upload is larger than %d bytes, the gateway's limit (SWITCHBOARD_SKILL_MAX_BYTES)", h.MaxBytes)
	}
	if err != nil {
		return core.SkillUpload{}, err
	}
	return skill.ReadArchive(raw, r.Header.Get("Content-Type"), h.MaxBytes)
}

func (h *Handler) create(w http.ResponseWriter, r *http.Request) error {
	up, err := h.upload(w, r)
	if err != nil {
		return err
	}
	s, err := h.Store.CreateSkill(r.Context(), up)
	if err != nil {
		return err
	}
	h.Logger.Info("skill created", "skill_id", s.ID, "name", s.Name, "files", len(s.Files), "bytes", s.Size)
	web.WriteJSON(w, http.StatusCreated, s)
	return nil
}

func (h *Handler) update(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	up, err := h.upload(w, r)
	if err != nil {
		return err
	}
	s, err := h.Store.UpdateSkill(r.Context(), id, up)
	if err != nil {
		return web.NotFound(err, "skill", id)
	}
	h.Logger.Info("skill version created", "skill_id", s.ID, "version", s.Version, "files", len(s.Files), "bytes", s.Size)
	web.WriteJSON(w, http.StatusCreated, s)
	return nil
}

func (h *Handler) list(w http.ResponseWriter, r *http.Request) error {
	return web.List(w, r, h.Store.ListSkills)
}

// version reads ?version=N; absent is 0, the latest.
func version(r *http.Request) (int, error) {
	s := r.URL.Query().Get("version")
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, web.Invalid("version=%q: want a whole number ≥ 1", s)
	}
	return n, nil
}

// lookup returns the skill version the request names.
func (h *Handler) lookup(r *http.Request) (*core.Skill, error) {
	id := r.PathValue("id")
	v, err := version(r)
	if err != nil {
		return nil, err
	}
	s, err := h.Store.GetSkill(r.Context(), id, v)
	if errors.Is(err, core.ErrNotFound) && v > 0 {
		return nil, web.Errorf(http.StatusNotFound, "not_found", "skill %q has no version %d", id, v)
	}
	if err != nil {
		return nil, web.NotFound(err, "skill", id)
	}
	return s, nil
}

func (h *Handler) get(w http.ResponseWriter, r *http.Request) error {
	s, err := h.lookup(r)
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, s)
	return nil
}

func (h *Handler) file(w http.ResponseWriter, r *http.Request) error {
	s, err := h.lookup(r)
	if err != nil {
		return err
	}
	p := r.PathValue("path")
	if !hasFile(s, p) {
		return web.Errorf(http.StatusNotFound, "not_found", "skill %q version %d has no file %q; it has %s", s.Name, s.Version, p, fileList(s))
	}
	b, err := h.Store.SkillFile(r.Context(), s.ID, s.Version, p)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", contentType(p, b))
	// A file is shown as what it is declared, never as a page.
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Security-Policy", "sandbox")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
	return nil
}

func (h *Handler) delete(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if err := h.Store.DeleteSkill(r.Context(), id); err != nil {
		return web.NotFound(err, "skill", id)
	}
	h.Logger.Info("skill deleted", "skill", id)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// contentType is a file's type as served: Markdown and other text as
// text, common images as images, anything else (HTML and SVG included,
// which a browser would run) as bytes or plain text.
func contentType(p string, b []byte) string {
	if strings.HasSuffix(strings.ToLower(p), ".md") && isText(b) {
		return "text/markdown; charset=utf-8"
	}
	switch t := http.DetectContentType(b); t {
	case "image/png", "image/jpeg", "image/gif", "image/webp", "application/pdf":
		return t
	}
	if isText(b) {
		return "text/plain; charset=utf-8"
	}
	return "application/octet-stream"
}
