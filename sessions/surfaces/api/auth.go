package api

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
)

// SessionGetter finds a session to check its client token against.
type SessionGetter interface {
	GetSession(ctx context.Context, id string) (*core.Session, error)
}

// AttachTokens finds an attach token to check a request's against, and
// records its use.
type AttachTokens interface {
	GetAttachToken(ctx context.Context, id string) (*core.AttachToken, error)
	TouchAttachToken(ctx context.Context, id string, at core.Time) error
}

// touchEvery is how often a token in use has its last use recorded: not
// a write per request.
const touchEvery = time.Minute

// Auth puts the request's principal in its context: the admin token, or a
// session's client token. Anything else is a 401 that says nothing about
// what exists. A token is read from the Authorization header, and from
// ?token= only where a browser cannot send the header (BrowserRoute):
// an address ends up in proxy and access logs, so elsewhere a token in it
// is not accepted.
type Auth struct {
	AdminToken string
	Sessions   SessionGetter
	// AttachTokens, when set, lets a session's attach tokens in.
	AttachTokens AttachTokens
	Logger       *slog.Logger
}

// Principal authenticates r.
func (a *Auth) Principal(r *http.Request) (core.Principal, bool) {
	p, err := a.authenticate(r)
	return p, err == nil
}

// authenticate returns r's principal, or why it has none.
func (a *Auth) authenticate(r *http.Request) (core.Principal, error) {
	invalid := errors.New("missing or invalid token")
	tok := TokenFrom(r)
	if tok == "" {
		return core.Principal{}, invalid
	}
	if subtle.ConstantTimeCompare([]byte(tok), []byte(a.AdminToken)) == 1 {
		return core.Principal{Admin: true}, nil
	}
	if sessionID, id, ok := ParseAttachToken(tok); ok {
		if a.AttachTokens == nil {
			return core.Principal{}, invalid
		}
		t, err := a.AttachTokens.GetAttachToken(r.Context(), id)
		switch {
		case err != nil || t.SessionID != sessionID || !CheckAttachToken(t, tok):
			return core.Principal{}, invalid
		case t.Revoked():
			// Said: the person should ask for another token rather than
			// check what they typed.
			return core.Principal{}, fmt.Errorf("attach token %s was revoked; ask for a new one", id)
		}
		if now := core.Now(); t.LastUsedAt == nil || now.Sub(t.LastUsedAt.Time) >= touchEvery {
			if err := a.AttachTokens.TouchAttachToken(context.WithoutCancel(r.Context()), id, now); err != nil && a.Logger != nil {
				a.Logger.Warn("recording an attach token's use failed", "attach_token", id, "err", err)
			}
		}
		return core.Principal{SessionID: sessionID, AttachToken: id, Person: t.Person}, nil
	}
	id, ok := TokenSession(tok)
	if !ok {
		return core.Principal{}, invalid
	}
	s, err := a.Sessions.GetSession(r.Context(), id)
	if err != nil || !CheckClientToken(s, tok) {
		return core.Principal{}, invalid
	}
	return core.Principal{SessionID: id}, nil
}

// Wrap refuses unauthenticated requests and passes the rest on with their
// principal.
func (a *Auth) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := a.authenticate(r)
		if err != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="switchboard"`)
			web.WriteError(w, r, a.Logger, web.Errorf(http.StatusUnauthorized, "unauthorized", "%s", err.Error()))
			return
		}
		next.ServeHTTP(w, r.WithContext(core.WithPrincipal(r.Context(), p)))
	})
}

// TokenFrom reads a bearer token from the Authorization header, or from
// ?token= on a BrowserRoute.
func TokenFrom(r *http.Request) string {
	if h := r.Header.Get("Authorization"); h != "" {
		t, _ := strings.CutPrefix(h, "Bearer ")
		return strings.TrimSpace(t)
	}
	if !BrowserRoute(r) {
		return ""
	}
	return r.URL.Query().Get("token")
}

// BrowserRoute reports whether r is one a browser opens by address, which
// cannot carry an Authorization header: the session page
// (GET /sessions/{id}) and its EventSource stream
// (GET /v1/sessions/{id}/events asking for text/event-stream).
func BrowserRoute(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	if id, ok := strings.CutPrefix(r.URL.Path, "/sessions/"); ok {
		return id != "" && !strings.Contains(id, "/")
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/v1/sessions/")
	if !ok {
		return false
	}
	id, tail, _ := strings.Cut(rest, "/")
	return id != "" && tail == "events" && strings.Contains(r.Header.Get("Accept"), "text/event-stream")
}
