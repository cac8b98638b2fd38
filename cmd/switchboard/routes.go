package main

import (
	"context"
	"crypto/subtle"
	"log/slog"
	"net/http"
	"strings"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
	"github.com/switchboardhq/switchboard/sessions/api"
	"github.com/switchboardhq/switchboard/sessions/live"
	"github.com/switchboardhq/switchboard/sessions/metrics"
	"github.com/switchboardhq/switchboard/sessions/runtime"
)

// sessionGetter finds a session to check its client token against.
type sessionGetter interface {
	GetSession(ctx context.Context, id string) (*core.Session, error)
}

// auth puts the request's principal in its context: the admin token, or
// a session's client token (header or ?token=, since EventSource cannot
// set headers). Anything else is a 401 that says nothing about what exists.
type auth struct {
	adminToken string
	sessions   sessionGetter
	log        *slog.Logger
}

func (a *auth) principal(r *http.Request) (core.Principal, bool) {
	tok := tokenFrom(r)
	if tok == "" {
		return core.Principal{}, false
	}
	if subtle.ConstantTimeCompare([]byte(tok), []byte(a.adminToken)) == 1 {
		return core.Principal{Admin: true}, true
	}
	id, ok := api.TokenSession(tok)
	if !ok {
		return core.Principal{}, false
	}
	s, err := a.sessions.GetSession(r.Context(), id)
	if err != nil || !api.CheckClientToken(s, tok) {
		return core.Principal{}, false
	}
	return core.Principal{SessionID: id}, true
}

func (a *auth) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := a.principal(r)
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="switchboard"`)
			web.WriteError(w, r, a.log, web.Errorf(http.StatusUnauthorized, "unauthorized", "missing or invalid token"))
			return
		}
		next.ServeHTTP(w, r.WithContext(core.WithPrincipal(r.Context(), p)))
	})
}

// tokenFrom reads a bearer token from the Authorization header or ?token=.
func tokenFrom(r *http.Request) string {
	if h := r.Header.Get("Authorization"); h != "" {
		t, _ := strings.CutPrefix(h, "Bearer ")
		return strings.TrimSpace(t)
	}
	return r.URL.Query().Get("token")
}

// routes mounts every package's handlers: the API behind authentication,
// health and metrics in the open.
func routes(cfg *serveConfig, store *live.Store, rt *runtime.Runtime, m *metrics.Metrics, log *slog.Logger) http.Handler {
	a := &auth{adminToken: cfg.adminToken, sessions: store, log: log}
	v1 := http.NewServeMux()
	(&api.Handler{Store: store, Runtime: rt, Hub: store.Hub, Logger: log, MaxBody: cfg.maxBody, Heartbeat: cfg.heartbeat, OnSSE: m.SSE}).Register(v1)
	v1.Handle("/", web.Wrap(log, func(w http.ResponseWriter, r *http.Request) error {
		return web.Errorf(http.StatusNotFound, "not_found", "no endpoint %s %s", r.Method, r.URL.Path)
	}))

	mux := http.NewServeMux()
	mux.Handle("/v1/", a.wrap(v1))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		web.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if _, err := store.CountByStatus(r.Context()); err != nil {
			web.WriteJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "store unavailable"})
			return
		}
		web.WriteJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	})
	mux.Handle("GET /metrics", m.Handler())
	return mux
}
