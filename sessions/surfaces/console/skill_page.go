package console

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard/core"
)

// skillPage is one skill: a version's files, one of them shown, the
// versions, the agents that pin it, and the upload of a next version.
type skillPage struct {
	Root, CSRF string
	Skill      *core.Skill
	// Latest is the skill's latest version; Versions every version,
	// newest first.
	Latest   int
	Versions []int
	Pins     []skillPin
	// File is the path shown; Text its content when it is text, else
	// Binary is set.
	File   string
	Text   string
	Binary bool
	Errors formErrors
	// MaxUpload is the console's upload limit, as the page says it.
	MaxUpload string
}

// Next is the number the next upload gets.
func (p *skillPage) Next() int { return p.Latest + 1 }

// Query is the address, relative to the page, of version v's file path.
func (p *skillPage) Query(v int, path string) string {
	q := url.Values{"file": {path}}
	if v != p.Latest {
		q.Set("version", strconv.Itoa(v))
	}
	return p.Root + "skills/" + url.PathEscape(p.Skill.ID) + "?" + q.Encode()
}

func (h *Handler) skill(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	h.skillView(w, r, s, r.PathValue("id"), formErrors{}, http.StatusOK)
}

// skillView renders the page of skill id with fe under the upload form.
func (h *Handler) skillView(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession, id string, fe formErrors, status int) {
	ctx, q := r.Context(), r.URL.Query()
	version, ok := versionParam(q)
	if !ok {
		h.message(w, r, s, http.StatusBadRequest, "No such version", "A skill's versions are numbered from 1.")
		return
	}
	latest, err := h.api.GetSkill(ctx, id, 0)
	if err != nil {
		h.apiFailed(w, r, s, "read the skill", err)
		return
	}
	sk := latest
	if version > 0 && version != latest.Version {
		if sk, err = h.api.GetSkill(ctx, id, version); err != nil {
			h.apiFailed(w, r, s, "read the skill", err)
			return
		}
	}
	pins, err := h.skillPins(ctx)
	if err != nil {
		h.failed(w, r, s, "list the agents", err)
		return
	}
	p := &skillPage{Root: relative(r, ""), CSRF: s.CSRF, Skill: sk, Latest: latest.Version, Pins: pins[sk.ID],
		File: q.Get("file"), Errors: fe, MaxUpload: mib(h.cfg.MaxUpload)}
	for v := latest.Version; v >= 1; v-- {
		p.Versions = append(p.Versions, v)
	}
	if p.File == "" {
		p.File = core.SkillManifestFile
	}
	b, err := h.api.SkillFile(ctx, sk.ID, sk.Version, p.File)
	if err != nil {
		h.apiFailed(w, r, s, "read the skill's file", err)
		return
	}
	if utf8.Valid(b) {
		p.Text = string(b)
	} else {
		p.Binary = true
	}
	h.render(w, r, status, "skill", layout{Title: "Skill " + sk.Name, Nav: "skills", CSRF: s.CSRF, Page: p})
}

func (h *Handler) updateSkill(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	id := r.PathValue("id")
	sk, fe, status, err := h.uploadSkill(r, id)
	switch {
	case err != nil:
		h.failed(w, r, s, "upload the skill", err)
	case fe.Any():
		h.skillView(w, r, s, id, fe, status)
	default:
		done(w, r, "skills/"+url.PathEscape(sk.ID))
	}
}

// confirmPage asks before a deletion.
type confirmPage struct {
	Root, CSRF string
	// What names the record; Back is the address of its page, relative
	// to the console's.
	What, Back string
	Error      string
}

func (h *Handler) skillDeletePage(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	sk, err := h.api.GetSkill(r.Context(), r.PathValue("id"), 0)
	if err != nil {
		h.apiFailed(w, r, s, "read the skill", err)
		return
	}
	h.confirm(w, r, s, http.StatusOK, "skill_delete", "skills", sk.Name, "skills/"+url.PathEscape(sk.ID), "")
}

func (h *Handler) deleteSkill(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	h.deleteConfirmed(w, r, s, "skill_delete", "skills", "skill", h.api.DeleteSkill)
}

// confirm renders the confirmation page of a deletion: nav's page named
// page, asking about the record what whose page is back, with a refusal
// msg.
func (h *Handler) confirm(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession, status int, page, nav, what, back, msg string) {
	h.render(w, r, status, page, layout{Title: "Delete " + what, Nav: nav, CSRF: s.CSRF,
		Page: &confirmPage{Root: relative(r, ""), CSRF: s.CSRF, What: what, Back: back, Error: msg}})
}

// deleteConfirmed deletes the record {id} of nav's section through del
// and goes back to the section's list. A refusal (something still uses
// the record) is shown on the confirmation page named page, in the API's
// words.
func (h *Handler) deleteConfirmed(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession, page, nav, kind string, del func(context.Context, string) error) {
	id := r.PathValue("id")
	err := del(r.Context(), id)
	if err == nil {
		done(w, r, nav)
		return
	}
	fe, status, ok := refusal(err)
	if !ok {
		h.failed(w, r, s, "delete the "+kind, err)
		return
	}
	h.confirm(w, r, s, status, page, nav, id, nav+"/"+url.PathEscape(id), fe.Form)
}

// versionParam is the ?version= of q: 0 when absent, ok false when it
// is not a version number.
func versionParam(q url.Values) (version int, ok bool) {
	v := q.Get("version")
	if v == "" {
		return 0, true
	}
	n, err := strconv.Atoi(v)
	return n, err == nil && n >= 1
}
