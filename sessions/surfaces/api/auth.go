package api

import (
	"context"
	"crypto/subtle"
	"log/slog"
	"net/http"
	"strings"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
)

// SessionGetter finds a session to check its client token against.
type SessionGetter interface {
	GetSession(ctx context.Context, id string) (*core.Session, error)
}

// Auth puts the request's principal in its context: the admin token, or a
// session's client token. Anything else is a 401 that says nothing about
// what exists. A token is read from the Authorization header, and from
// ?token= only where a browser cannot send the header (BrowserRoute):
// an address ends up in proxy and access logs, so elsewhere a token in it
// is not accepted.
type Auth struct {
	AdminToken string
	Sessions   SessionGetter
	Logger     *slog.Logger
}

// Principal authenticates r.
func (a *Auth) Principal(r *http.Request) (core.Principal, bool) {
	tok := TokenFrom(r)
	if tok == "" {
		return core.Principal{}, false
	}
	if subtle.ConstantTimeCompare([]byte(tok), []byte(a.AdminToken)) == 1 {
		return core.Principal{Admin: true}, true
	}
	id, ok := TokenSession(tok)
	if !ok {
		return core.Principal{}, false
	}
	s, err := a.Sessions.GetSession(r.Context(), id)
	if err != nil || !CheckClientToken(s, tok) {
		return core.Principal{}, false
	}
	return core.Principal{SessionID: id}, true
}

// Wrap refuses unauthenticated requests and passes the rest on with their
// principal.
func (a *Auth) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := a.Principal(r)
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="switchboard"`)
			web.WriteError(w, r, a.Logger, web.Errorf(http.StatusUnauthorized, "unauthorized", "missing or invalid token"))
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
