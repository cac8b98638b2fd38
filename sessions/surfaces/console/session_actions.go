package console

import (
	"context"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

// The session page's forms: each sends one input (or archives) through
// the API and returns to the page; the API's refusal is shown on it.

func (h *Handler) sessionConfirm(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	f := r.PostForm
	h.sendInput(w, r, s, client.Input{
		Type: core.TypeUserToolConfirmation, ToolUseID: f.Get("tool_use_id"),
		Result: f.Get("result"), Message: f.Get("message"),
	})
}

func (h *Handler) sessionToolResult(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	f := r.PostForm
	output := f.Get("output")
	h.sendInput(w, r, s, client.Input{
		Type: core.TypeUserCustomToolResult, ToolUseID: f.Get("tool_use_id"),
		Output: &output, IsError: f.Get("is_error") == "true",
	})
}

func (h *Handler) sessionStop(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	h.sendInput(w, r, s, client.Input{Type: core.TypeUserInterrupt})
}

// sessionRetry runs the turn the page showed as failed again; the API
// refuses when a later turn ended meanwhile.
func (h *Handler) sessionRetry(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	h.sendInput(w, r, s, client.Input{Type: core.TypeUserRetry, TurnID: r.PostForm.Get("turn_id")})
}

// sessionBudget sets the session's budgets and max_turns (the fields
// filled in); raising the one that paused its turn resumes the turn.
func (h *Handler) sessionBudget(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	var l core.Limits
	var bad []string
	if v := strings.TrimSpace(r.PostForm.Get("max_session_tokens")); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			bad = append(bad, "the token budget must be a whole number above 0")
		}
		l.MaxSessionTokens = n
	}
	if v := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(r.PostForm.Get("max_session_cost_usd")), "$")); v != "" {
		usd, err := strconv.ParseFloat(v, 64)
		if err != nil || usd <= 0 || math.IsInf(usd, 0) || math.IsNaN(usd) {
			bad = append(bad, "the cost budget must be a number of US dollars above 0")
		}
		l.MaxSessionCostUSD = usd
	}
	if v := strings.TrimSpace(r.PostForm.Get("max_turns")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			bad = append(bad, "the turn limit must be a whole number above 0")
		}
		l.MaxTurns = n
	}
	switch {
	case len(bad) > 0:
		h.showSession(w, r, s, http.StatusBadRequest, "Not set: "+strings.Join(bad, "; ")+".", "")
		return
	case l == (core.Limits{}):
		h.showSession(w, r, s, http.StatusBadRequest, "Not set: fill in a token budget, a cost budget or a turn limit.", "")
		return
	}
	id := r.PathValue("id")
	if _, err := h.api.SetLimits(r.Context(), id, l); err != nil {
		h.sessionRefused(w, r, s, err, "")
		return
	}
	done(w, r, "sessions/"+url.PathEscape(id))
}

// sessionLink routes another origin key to the session; the API refuses a
// key of another customer's installation, said at the top of the page.
func (h *Handler) sessionLink(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	h.changeLinks(w, r, s, (*client.Client).AddLink)
}

func (h *Handler) sessionUnlink(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	h.changeLinks(w, r, s, (*client.Client).RemoveLink)
}

func (h *Handler) changeLinks(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession, change func(*client.Client, context.Context, string, string) (*client.SessionView, error)) {
	id := r.PathValue("id")
	if _, err := change(h.api, r.Context(), id, strings.TrimSpace(r.PostForm.Get("key"))); err != nil {
		h.sessionRefused(w, r, s, err, "")
		return
	}
	done(w, r, "sessions/"+url.PathEscape(id))
}

func (h *Handler) sessionMessage(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	h.sendInput(w, r, s, client.Input{Type: core.TypeUserMessage, Text: r.PostForm.Get("text")})
}

// sendInput queues in and returns to the page.
func (h *Handler) sendInput(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession, in client.Input) {
	id := r.PathValue("id")
	if _, err := h.api.SendEvents(r.Context(), id, []client.Input{in}, ""); err != nil {
		h.sessionRefused(w, r, s, err, in.Text)
		return
	}
	done(w, r, "sessions/"+url.PathEscape(id))
}

func (h *Handler) sessionArchive(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	if r.PostForm.Get("confirm") != "yes" {
		h.showSession(w, r, s, http.StatusBadRequest, "Tick “Archive this session” to confirm: an archived session is read-only for good.", "")
		return
	}
	id := r.PathValue("id")
	if _, err := h.api.Archive(r.Context(), id); err != nil {
		h.sessionRefused(w, r, s, err, "")
		return
	}
	done(w, r, "sessions/"+url.PathEscape(id))
}

// sessionRefused shows the page again with the API's refusal, keeping the
// message typed; a failure that is no refusal is the failure page.
func (h *Handler) sessionRefused(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession, err error, text string) {
	fe, status, ok := refusal(err)
	if !ok {
		h.failed(w, r, s, "change the session", err)
		return
	}
	h.showSession(w, r, s, status, fe.Form, text)
}
