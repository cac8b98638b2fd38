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
// session's client token (header or ?token=, since EventSource cannot set
// headers). Anything else is a 401 that says nothing about what exists.
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

// TokenFrom reads a bearer token from the Authorization header or ?token=.
func TokenFrom(r *http.Request) string {
	if h := r.Header.Get("Authorization"); h != "" {
		t, _ := strings.CutPrefix(h, "Bearer ")
		return strings.TrimSpace(t)
	}
	return r.URL.Query().Get("token")
}
