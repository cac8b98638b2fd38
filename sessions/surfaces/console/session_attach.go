package console

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

// sessionAttachToken makes an attach token for the person named and
// shows the page with its secret, once: no redirect, so a reload does not
// show it again (the browser asks before posting the form again).
func (h *Handler) sessionAttachToken(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	id := r.PathValue("id")
	t, err := h.api.CreateAttachToken(r.Context(), id, client.AttachTokenParams{Person: strings.TrimSpace(r.PostForm.Get("person"))})
	if err != nil {
		h.sessionRefused(w, r, s, err, "")
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	h.showSessionWith(w, r, s, http.StatusOK, "", "", t)
}

// sessionRevokeAttachToken revokes one of the session's attach tokens.
func (h *Handler) sessionRevokeAttachToken(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
	id := r.PathValue("id")
	if _, err := h.api.RevokeAttachToken(r.Context(), id, r.PostForm.Get("token")); err != nil {
		h.sessionRefused(w, r, s, err, "")
		return
	}
	done(w, r, "sessions/"+url.PathEscape(id))
}

// gatewayURL is the gateway's address for a command line: the public
// one, else the one the browser reached.
func (h *Handler) gatewayURL(r *http.Request) string {
	if h.cfg.PublicURL != "" {
		return strings.TrimRight(h.cfg.PublicURL, "/")
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}
