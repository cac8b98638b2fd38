package console

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

func (h *Handler) registerSchedules(mux *http.ServeMux) {
	mux.HandleFunc("GET /console/schedules", h.signedIn(h.schedules))
	mux.HandleFunc("POST /console/schedules", h.signedIn(h.createSchedule))
	mux.HandleFunc("POST /console/schedules/{id}/pause", h.signedIn(h.scheduleAction((*client.Client).PauseSchedule, "pause the schedule")))
	mux.HandleFunc("POST /console/schedules/{id}/resume", h.signedIn(h.scheduleAction((*client.Client).ResumeSchedule, "resume the schedule")))
	mux.HandleFunc("POST /console/schedules/{id}/delete", h.signedIn(h.deleteSchedule))
}

// schedulesPage lists schedules and holds the create form.
type schedulesPage struct {
	CSRF      string
	Schedules []core.Schedule
	// AgentNames name the agents the schedules start sessions of.
	AgentNames  agentNames
	After, Next string
	Form        scheduleForm
	Errors      formErrors
	Now         time.Time
}

// scheduleForm is the create form as typed.
type scheduleForm struct {
	Kind, Cron, TimeZone, At, Target, Input string
}

// scheduleFields are the API's fields a refusal may name, longest first.
var scheduleFields = []string{"target.session_id", "target.agent", "target.input", "target", "time_zone", "cron", "at"}

func (h *Handler) schedules(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	h.showSchedules(w, r, s, http.StatusOK, schedulesPage{Form: scheduleForm{Kind: "cron", TimeZone: "UTC"}})
}

func (h *Handler) showSchedules(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession, status int, p schedulesPage) {
	p.After = r.URL.Query().Get("after")
	page, err := h.api.ListSchedules(r.Context(), "", client.ListParams{After: p.After, Limit: pageSize})
	if err != nil {
		h.apiFailed(w, r, s, "list the schedules", err)
		return
	}
	if slices.ContainsFunc(page.Data, func(sc core.Schedule) bool { return sc.Target.Agent != "" }) {
		if p.AgentNames, err = h.agentNames(r.Context()); err != nil {
			h.failed(w, r, s, "list the agents", err)
			return
		}
	}
	p.CSRF, p.Schedules, p.Now = s.CSRF, page.Data, time.Now()
	if page.HasMore && len(page.Data) > 0 {
		p.Next = page.Data[len(page.Data)-1].ID
	}
	h.render(w, r, status, "schedules", layout{Title: "Schedules", Nav: "schedules", CSRF: s.CSRF, Page: p})
}

// params is the API's body for the form; a time that does not parse is
// an error under "at".
func (f scheduleForm) params() (client.ScheduleParams, formErrors) {
	var p client.ScheduleParams
	var fe formErrors
	switch f.Kind {
	case "once":
		t, err := time.Parse(time.RFC3339, strings.TrimSpace(f.At))
		if err != nil {
			fe.Fields = map[string]string{"at": "Give the time as RFC 3339, with its offset: 2030-05-06T09:00:00+02:00 or 2030-05-06T07:00:00Z."}
			return p, fe
		}
		at := core.NewTime(t)
		p.At = &at
	default:
		p.Cron, p.TimeZone = f.Cron, strings.TrimSpace(f.TimeZone)
		if p.TimeZone == "UTC" {
			p.TimeZone = ""
		}
	}
	target := strings.TrimSpace(f.Target)
	if core.HasPrefix(target, core.PrefixSession) {
		p.Target.SessionID = target
	} else {
		p.Target.Agent = target
	}
	p.Target.Input = f.Input
	return p, fe
}

func (h *Handler) createSchedule(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	pf := r.PostForm
	f := scheduleForm{Kind: pf.Get("kind"), Cron: pf.Get("cron"), TimeZone: pf.Get("time_zone"), At: pf.Get("at"), Target: pf.Get("target"), Input: pf.Get("input")}
	params, fe := f.params()
	if fe.Any() {
		h.showSchedules(w, r, s, http.StatusBadRequest, schedulesPage{Form: f, Errors: fe})
		return
	}
	sc, err := h.api.CreateSchedule(r.Context(), params)
	if err != nil {
		fe, status, ok := refusal(err, scheduleFields...)
		if !ok {
			h.failed(w, r, s, "create the schedule", err)
			return
		}
		h.showSchedules(w, r, s, status, schedulesPage{Form: f, Errors: fe})
		return
	}
	h.log.Info("console: schedule created", "schedule_id", sc.ID)
	done(w, r, "schedules")
}

// scheduleAction answers a form that changes one schedule.
func (h *Handler) scheduleAction(change func(*client.Client, context.Context, string) (*core.Schedule, error), what string) func(http.ResponseWriter, *http.Request, *core.ConsoleSession) {
	return func(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
		if _, err := change(h.api, r.Context(), r.PathValue("id")); err != nil {
			h.scheduleRefused(w, r, s, what, err)
			return
		}
		done(w, r, "schedules")
	}
}

func (h *Handler) deleteSchedule(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	if err := h.api.DeleteSchedule(r.Context(), r.PathValue("id")); err != nil {
		h.scheduleRefused(w, r, s, "delete the schedule", err)
		return
	}
	done(w, r, "schedules")
}

// scheduleRefused shows the list again with the API's refusal above it.
func (h *Handler) scheduleRefused(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession, what string, err error) {
	fe, status, ok := refusal(err)
	if !ok {
		h.failed(w, r, s, what, err)
		return
	}
	h.showSchedules(w, r, s, status, schedulesPage{Form: scheduleForm{Kind: "cron", TimeZone: "UTC"}, Errors: formErrors{Form: fe.Form}})
}
