package console

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

// maxScanPages bounds how many pages of a session's log the page reads to
// name the tool calls it waits on (100 events a page).
const maxScanPages = 100

// registerSession mounts the session page, its live stream and the
// actions it offers.
func (h *Handler) registerSession(mux *http.ServeMux) {
	mux.HandleFunc("GET /console/sessions/{id}", h.signedIn(h.sessionPage))
	mux.HandleFunc("GET /console/sessions/{id}/stream", h.signedIn(h.sessionStream))
	mux.HandleFunc("POST /console/sessions/{id}/confirm", h.signedIn(h.sessionConfirm))
	mux.HandleFunc("POST /console/sessions/{id}/tool-result", h.signedIn(h.sessionToolResult))
	mux.HandleFunc("POST /console/sessions/{id}/stop", h.signedIn(h.sessionStop))
	mux.HandleFunc("POST /console/sessions/{id}/retry", h.signedIn(h.sessionRetry))
	mux.HandleFunc("POST /console/sessions/{id}/budget", h.signedIn(h.sessionBudget))
	mux.HandleFunc("POST /console/sessions/{id}/links", h.signedIn(h.sessionLink))
	mux.HandleFunc("POST /console/sessions/{id}/unlink", h.signedIn(h.sessionUnlink))
	mux.HandleFunc("POST /console/sessions/{id}/message", h.signedIn(h.sessionMessage))
	mux.HandleFunc("POST /console/sessions/{id}/archive", h.signedIn(h.sessionArchive))
	mux.HandleFunc("POST /console/sessions/{id}/attach-tokens", h.signedIn(h.sessionAttachToken))
	mux.HandleFunc("POST /console/sessions/{id}/attach-tokens/revoke", h.signedIn(h.sessionRevokeAttachToken))
}

// sessionView is what the session page shows.
type sessionView struct {
	CSRF    string
	Session *client.SessionView
	// Origin is where the session came from, linked when an address
	// can be made of it.
	Origin originLink
	// Calls are the tool calls the session waits on, in call order.
	Calls []pendingCall
	// Queued are inputs sent but not yet taken by the agent.
	Queued []queuedInput
	// Running: a turn runs or is about to, so Stop is offered.
	Running, Archived bool
	// Retryable: the last turn failed or was stopped and can run again.
	Retryable bool
	// Paused is the session budget that paused the open turn, if one
	// did: the budget form raises it.
	Paused *core.BudgetPause
	// Error is an action's refusal; Text is the message typed, kept
	// when sending it was refused.
	Error, Text string
	// AgentName is the agent's name, "" when it could not be read.
	AgentName string
	// AttachTokens are the session's attach tokens; NewToken the one
	// just made, whose secret the page shows once, with Editor, the
	// command line for the person's editor.
	AttachTokens []client.AttachToken
	NewToken     *client.AttachToken
	Editor       string
	// Root is the console's address and Here the session page's, both
	// relative to the page's own: an action's answer is the page shown
	// at the action's address (a token made is shown there, once), whose
	// links must lead where the page's do.
	Root, Here string
}

// originLink is a session's origin as the page shows it.
type originLink struct {
	Label, Key, URL string
}

// pendingCall is one tool call waiting for the person: a confirmation
// (Allow/Deny) or a custom tool's result.
type pendingCall struct {
	// CSRF and Here are the page's, for the call's forms.
	CSRF, Here             string
	ToolUseID, Name, Input string
	Custom                 bool
	// Answered: an answer is queued and the agent has not taken it yet.
	Answered bool
}

// queuedInput is an input that waits for the agent.
type queuedInput struct {
	Type, Text string
}

func (h *Handler) sessionPage(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	h.showSession(w, r, s, http.StatusOK, "", "")
}

// showSession renders the session page with an action's refusal (errMsg)
// and the message typed (text), if any.
func (h *Handler) showSession(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession, status int, errMsg, text string) {
	h.showSessionWith(w, r, s, status, errMsg, text, nil)
}

// showSessionWith is showSession with an attach token just made, shown
// once.
func (h *Handler) showSessionWith(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession, status int, errMsg, text string, made *client.AttachToken) {
	id := r.PathValue("id")
	v, err := h.loadSession(r.Context(), id)
	var ae *client.APIError
	if errors.As(err, &ae) && ae.Status == http.StatusNotFound {
		h.message(w, r, s, http.StatusNotFound, "No such session", "There is no session "+id+". Find it in the session list.")
		return
	}
	if err != nil {
		h.failed(w, r, s, "read the session", err)
		return
	}
	v.CSRF, v.Error, v.Text = s.CSRF, errMsg, text
	// The page is under sessions/: its own address is one level up from
	// the console's root.
	v.Root, v.Here = relative(r, ""), strings.TrimPrefix(relative(r, url.PathEscape(id)), "../")
	if made != nil {
		v.NewToken, v.Editor = made, client.AttachCommand(h.gatewayURL(r), made.Token)
	}
	for i := range v.Calls {
		v.Calls[i].CSRF, v.Calls[i].Here = s.CSRF, v.Here
	}
	// page.js renders the conversation; session.js (named in the
	// template) adds what the console offers.
	h.render(w, r, status, "session", layout{Title: "Session " + id, Nav: "sessions", CSRF: s.CSRF, Scripts: sessionScripts, Page: v})
}

// loadSession reads what the page shows through the API.
func (h *Handler) loadSession(ctx context.Context, id string) (*sessionView, error) {
	sv, err := h.api.GetSession(ctx, id)
	if err != nil {
		return nil, err
	}
	queued, err := h.api.Pending(ctx, id)
	if err != nil {
		return nil, err
	}
	v := &sessionView{
		Session: sv, Origin: h.originOf(sv.Origin),
		Running:  sv.Status == core.StatusRunning || sv.Status == core.StatusQueued,
		Archived: sv.Status == core.StatusArchived,
	}
	if a, err := h.api.GetAgent(ctx, sv.Agent.ID); err == nil {
		v.AgentName = a.Name
	}
	if tokens, err := h.api.ListAttachTokens(ctx, id); err == nil {
		v.AttachTokens = tokens // a gateway without them shows none
	}
	v.Retryable = !v.Running && !v.Archived && sv.Result != nil && core.Retryable(sv.Result.YieldReason)
	if sv.PendingAction != nil {
		v.Paused = sv.PendingAction.Budget
	}
	answered := map[string]bool{}
	for _, q := range queued {
		var b struct {
			Text      string `json:"text"`
			ToolUseID string `json:"tool_use_id"`
		}
		_ = json.Unmarshal(q.Body, &b) // a body of another shape shows its type alone
		if b.ToolUseID != "" {
			answered[b.ToolUseID] = true
			b.Text = b.ToolUseID
		}
		v.Queued = append(v.Queued, queuedInput{Type: q.Type, Text: b.Text})
	}
	if sv.PendingAction != nil && len(sv.PendingAction.ToolUseIDs) > 0 {
		if v.Calls, err = h.pendingCalls(ctx, id, sv.PendingAction.ToolUseIDs); err != nil {
			return nil, err
		}
		for i := range v.Calls {
			v.Calls[i].Answered = answered[v.Calls[i].ToolUseID]
		}
	}
	return v, nil
}

// pendingCalls names the calls ids from the log: which tool, with what
// input, and whether it is a custom tool (its result comes from the
// person) or a call that waits for a confirmation.
func (h *Handler) pendingCalls(ctx context.Context, id string, ids []string) ([]pendingCall, error) {
	byID := map[string]*pendingCall{}
	calls := make([]pendingCall, len(ids))
	for i, tid := range ids {
		calls[i] = pendingCall{ToolUseID: tid}
		byID[tid] = &calls[i]
	}
	q := client.EventsQuery{Level: string(core.LevelProgress), Limit: 100}
	for range maxScanPages {
		page, err := h.api.Events(ctx, id, q)
		if err != nil {
			return nil, err
		}
		for _, e := range page.Data {
			q.After = e.Seq
			if e.Type != core.TypeAgentToolUse && e.Type != core.TypeAgentCustomToolUse {
				continue
			}
			var b core.ToolUseBody
			if e.Decode(&b) != nil {
				continue
			}
			if c := byID[b.ToolUseID]; c != nil {
				c.Name, c.Input, c.Custom = b.Name, indentJSON(b.Input), e.Type == core.TypeAgentCustomToolUse
			}
		}
		if !page.HasMore || len(page.Data) == 0 {
			break
		}
	}
	return calls, nil
}

func indentJSON(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return string(raw)
	}
	return string(b)
}

// originOf is the origin's label and, when one can be made, the address
// of its thread, pull request or issue: the URL the platform gave, else
// one its platform builds from the origin key.
func (h *Handler) originOf(o *core.Origin) originLink {
	if o == nil {
		return originLink{Label: "API"}
	}
	l := originLink{Key: o.Key, Label: o.Provider}
	p, known := h.platform(o.Provider)
	if known && p.Thread != "" {
		l.Label = p.Thread
	}
	if u, err := url.Parse(o.URL); err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" {
		l.URL = o.URL
		return l
	}
	if known && p.KeyURL != nil {
		l.URL = p.KeyURL(o.Key)
	}
	return l
}

// sessionScripts are the session page's scripts, in the order they run
// (deferred scripts run in document order): session.js listens for the
// events page.js dispatches, so it runs first, before page.js opens the
// stream; else a stream that is quick beside a slow download would
// dispatch events nobody hears yet.
var sessionScripts = []string{"session.js", "page.js"}
