package api

import (
	"context"
	"net/http"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
)

// AttachTokenView is an attach token as the API shows it: never its
// hash; Token, its secret, only in the answer that created it.
type AttachTokenView struct {
	ID         string     `json:"id"`
	SessionID  string     `json:"session_id"`
	Person     string     `json:"person"`
	PersonID   string     `json:"person_id,omitempty"`
	IssuedBy   string     `json:"issued_by"`
	CreatedAt  core.Time  `json:"created_at"`
	RevokedAt  *core.Time `json:"revoked_at"`
	RevokedBy  string     `json:"revoked_by,omitempty"`
	LastUsedAt *core.Time `json:"last_used_at"`
	Token      string     `json:"token,omitempty"`
}

// ViewAttachToken is t as the API shows it.
func ViewAttachToken(t *core.AttachToken) AttachTokenView {
	return AttachTokenView{ID: t.ID, SessionID: t.SessionID, Person: t.Person, PersonID: t.PersonID, IssuedBy: t.IssuedBy,
		CreatedAt: t.CreatedAt, RevokedAt: t.RevokedAt, RevokedBy: t.RevokedBy, LastUsedAt: t.LastUsedAt}
}

// AttachCommand is the command line that opens a session in an editor
// with token, for a person to paste into their editor's settings.
func AttachCommand(baseURL, token string) string {
	return "SWITCHBOARD_TOKEN=" + token + " switchboard acp --url " + baseURL
}

// Issuer makes attach tokens: for the API's create, and for a person who
// asks in the thread (providers).
type Issuer struct {
	Store core.AttachTokenStore
}

// IssueAttachToken makes a token of session sessionID for person
// (personID their identity, if known), issued by by, and returns its
// secret, which is not kept.
func (i Issuer) IssueAttachToken(ctx context.Context, sessionID, person, personID, by string) (string, *core.AttachToken, error) {
	secret, id, hash := NewAttachToken(sessionID)
	t, err := i.Store.CreateAttachToken(ctx, core.AttachToken{ID: id, SessionID: sessionID, Person: person, PersonID: personID, IssuedBy: by, Hash: hash})
	if err != nil {
		return "", nil, err
	}
	return secret, t, nil
}

type attachTokenBody struct {
	Person   string `json:"person"`
	PersonID string `json:"person_id,omitempty"`
}

// createAttachToken makes an attach token of the session for a person.
func (h *Handler) createAttachToken(w http.ResponseWriter, r *http.Request) error {
	raw, err := web.ReadBody(w, r, h.MaxBody)
	if err != nil {
		return err
	}
	var b attachTokenBody
	if err := web.Decode(raw, &b); err != nil {
		return err
	}
	if err := core.CheckPerson(b.Person); err != nil {
		return err
	}
	if b.PersonID != "" {
		if err := core.CheckText("field \"person_id\"", b.PersonID); err != nil {
			return err
		}
	}
	s, err := h.session(r)
	if err != nil {
		return err
	}
	secret, t, err := Issuer{Store: h.AttachTokens}.IssueAttachToken(background(r), s.ID, b.Person, b.PersonID, core.IssuedByAdmin)
	if err != nil {
		return err
	}
	v := ViewAttachToken(t)
	v.Token = secret
	web.WriteJSON(w, http.StatusCreated, v)
	return nil
}

// listAttachTokens lists the session's tokens, revoked ones included.
func (h *Handler) listAttachTokens(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	list, err := h.AttachTokens.ListAttachTokens(r.Context(), id)
	if err != nil {
		return web.NotFound(err, "session", id)
	}
	out := make([]AttachTokenView, 0, len(list))
	for _, t := range list {
		out = append(out, ViewAttachToken(t))
	}
	web.WriteJSON(w, http.StatusOK, web.Page[AttachTokenView]{Data: out})
	return nil
}

// revokeAttachToken revokes one of the session's tokens: requests with
// it are refused from now on, and the streams it opened end.
func (h *Handler) revokeAttachToken(w http.ResponseWriter, r *http.Request) error {
	id, tid := r.PathValue("id"), r.PathValue("token")
	t, err := h.AttachTokens.RevokeAttachToken(background(r), id, tid, core.IssuedByAdmin)
	if err != nil {
		return web.NotFound(err, "attach token", tid)
	}
	web.WriteJSON(w, http.StatusOK, ViewAttachToken(t))
	return nil
}
