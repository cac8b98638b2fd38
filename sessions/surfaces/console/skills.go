package console

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

// skillPageSize is how many skills one page of the list shows.
const skillPageSize = 100

func (h *Handler) registerSkills(mux *http.ServeMux) {
	mux.HandleFunc("GET /console/skills", h.signedIn(h.skills))
	mux.HandleFunc("POST /console/skills", h.signedIn(h.createSkill))
	mux.HandleFunc("GET /console/skills/{id}", h.signedIn(h.skill))
	mux.HandleFunc("POST /console/skills/{id}/versions", h.signedIn(h.updateSkill))
	mux.HandleFunc("GET /console/skills/{id}/delete", h.signedIn(h.skillDeletePage))
	mux.HandleFunc("POST /console/skills/{id}/delete", h.signedIn(h.deleteSkill))
}

// skillPin is an agent whose latest version pins a skill.
type skillPin struct {
	AgentID, AgentName string
	// Version is the skill's version the agent pins.
	Version int
}

// skillRow is one skill of the list.
type skillRow struct {
	*core.Skill
	Pins []skillPin
}

// skillsPage is the skill list with the upload form of a new skill.
type skillsPage struct {
	CSRF   string
	Skills []skillRow
	// Next is the address of the next page, "" on the last; First that
	// of the first, "" on it.
	Next, First string
	Errors      formErrors
	// MaxUpload is the console's upload limit, in MiB as the page says it.
	MaxUpload string
}

func (h *Handler) skills(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	p := &skillsPage{CSRF: s.CSRF}
	h.skillList(w, r, s, p, http.StatusOK)
}

// skillList fills p with a page of skills and their pins and renders it
// with status.
func (h *Handler) skillList(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession, p *skillsPage, status int) {
	ctx := r.Context()
	after := r.URL.Query().Get("after")
	page, err := h.api.ListSkills(ctx, client.ListParams{After: after, Limit: skillPageSize})
	if err != nil {
		h.failed(w, r, s, "list the skills", err)
		return
	}
	pins, err := h.skillPins(ctx)
	if err != nil {
		h.failed(w, r, s, "list the agents", err)
		return
	}
	for i := range page.Data {
		sk := &page.Data[i]
		p.Skills = append(p.Skills, skillRow{Skill: sk, Pins: pins[sk.ID]})
	}
	if page.HasMore && len(page.Data) > 0 {
		p.Next = "skills?after=" + url.QueryEscape(page.Data[len(page.Data)-1].ID)
	}
	if after != "" {
		p.First = "skills"
	}
	p.MaxUpload = mib(h.cfg.MaxUpload)
	h.render(w, r, status, "skills", layout{Title: "Skills", Nav: "skills", CSRF: s.CSRF, Page: p})
}

// skillPins maps each skill's id to the agents whose latest version pins
// it, read from every page of the agent list.
func (h *Handler) skillPins(ctx context.Context) (map[string][]skillPin, error) {
	pins := map[string][]skillPin{}
	after := ""
	for {
		page, err := h.api.ListAgents(ctx, client.ListParams{After: after, Limit: 1000})
		if err != nil {
			return nil, err
		}
		for _, a := range page.Data {
			for _, ref := range a.Skills {
				pins[ref.ID] = append(pins[ref.ID], skillPin{AgentID: a.ID, AgentName: a.Name, Version: ref.Version})
			}
		}
		if !page.HasMore || len(page.Data) == 0 {
			return pins, nil
		}
		after = page.Data[len(page.Data)-1].ID
	}
}

func (h *Handler) createSkill(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	sk, fe, status, err := h.uploadSkill(r, "")
	switch {
	case err != nil:
		h.failed(w, r, s, "upload the skill", err)
	case fe.Any():
		h.skillList(w, r, s, &skillsPage{CSRF: s.CSRF, Errors: fe}, status)
	default:
		done(w, r, "skills/"+url.PathEscape(sk.ID))
	}
}

// mib says n bytes in MiB.
func mib(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
