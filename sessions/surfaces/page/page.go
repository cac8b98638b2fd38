// Package page serves the read-only session page, GET /sessions/{id}: the
// session's conversation, kept live in the browser with EventSource over
// the /v1 events stream, and a message box that steers it. Platforms link
// to it (Linear's external URL, GitHub check runs).
//
// The page is plain HTML from html/template plus one script and one style
// sheet served from embed, so a strict Content-Security-Policy (nothing
// inline, nothing from elsewhere) holds. The server renders only the
// session's header; the conversation comes from the stream, which sends
// the history first, so there is one code path for history and live
// events.
//
// Auth is the API's: the admin token or the session's client token. A
// browser must put it in the address (?token=), because EventSource cannot
// send an Authorization header; the page's script reads it from there and
// the HTML never contains it. A page opened with a header token still
// renders, with a note that live updates need ?token=.
package page

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
)

// files holds the page template and the static assets.
//
//go:embed templates static
var files embed.FS

// AssetsPrefix is where the static assets are served; the page refers to
// them relative to its own address, so a deployment under a path prefix
// still finds them.
const AssetsPrefix = "/sessions/assets/"

// Assets are the page's static files (page.js, page.css, the icon). The
// console serves page.js on its own session page, so one script renders
// a conversation wherever it is shown; that page names its stream and
// turns the message box off with data attributes (see page.js).
func Assets() fs.FS {
	sub, err := fs.Sub(files, "static")
	if err != nil {
		panic("page: " + err.Error()) // "static" is compiled in
	}
	return sub
}

// Store is what the page needs of the session store.
type Store interface {
	GetSession(ctx context.Context, id string) (*core.Session, error)
	GetAgentVersion(ctx context.Context, id string, version int) (*core.Agent, error)
}

// Authenticator finds a request's principal from the admin token or a
// session's client token; api.Auth is one. The page uses the API's
// authentication but answers a refusal itself, in plain text: a browser
// would show the API's JSON error as noise.
type Authenticator interface {
	Principal(r *http.Request) (core.Principal, bool)
}

// Handler serves the session page and its assets.
type Handler struct {
	Store  Store
	Auth   Authenticator
	Logger *slog.Logger

	tmpl   *template.Template
	assets web.Assets
}

// Register mounts GET /sessions/{id}, authenticated by Auth, and the
// static assets in the open (they hold no data).
func (h *Handler) Register(mux *http.ServeMux) {
	if h.Logger == nil {
		h.Logger = slog.New(slog.DiscardHandler)
	}
	// The template and assets are compiled in: failing here is a build
	// mistake the package's tests catch, not a runtime condition.
	h.tmpl = template.Must(template.ParseFS(files, "templates/page.html"))
	assets, err := web.LoadAssets(files, "static")
	if err != nil {
		panic("page: " + err.Error())
	}
	h.assets = assets
	mux.HandleFunc("GET /sessions/{id}", h.page)
	mux.HandleFunc("GET "+AssetsPrefix+"{name}", h.asset)
}

// pageData is what the template shows; the token is deliberately absent.
type pageData struct {
	ID         string
	Status     core.Status
	StopReason core.Reason
	Agent      core.AgentRef
	// AgentName is the agent's name, "" when it is gone.
	AgentName string
	Provider  string
	OriginURL string
	// CreatedAt is RFC 3339 for the machine, Created as people read it,
	// in UTC as everywhere on the page.
	CreatedAt, Created string
	// NeedsToken: the request authenticated by header, so the script has no
	// token to open the stream with.
	NeedsToken bool
}

func (h *Handler) page(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	p, ok := h.Auth.Principal(r)
	if !ok {
		unauthorized(w)
		return
	}
	// Another session's token gets the same answer as a missing session,
	// so a token does not reveal which sessions exist.
	if !p.MaySee(id) {
		notFound(w)
		return
	}
	s, err := h.Store.GetSession(r.Context(), id)
	if errors.Is(err, core.ErrNotFound) {
		notFound(w)
		return
	}
	if err != nil {
		h.Logger.Error("session page", "session", id, "err", err)
		plain(w, http.StatusInternalServerError, "internal error")
		return
	}
	d := pageData{
		ID: s.ID, Status: s.Status, StopReason: s.StopReason, Agent: s.Agent,
		CreatedAt:  s.CreatedAt.UTC().Format(time.RFC3339),
		Created:    s.CreatedAt.UTC().Format("2006-01-02 15:04 UTC"),
		NeedsToken: r.URL.Query().Get("token") == "",
	}
	if s.Origin != nil {
		d.Provider, d.OriginURL = s.Origin.Provider, s.Origin.URL
	}
	if a, err := h.Store.GetAgentVersion(r.Context(), s.Agent.ID, s.Agent.Version); err == nil {
		d.AgentName = a.Name
	}
	// Render fully before writing, so a template error is a clean 500
	// rather than half a page.
	var buf bytes.Buffer
	if err := h.tmpl.Execute(&buf, d); err != nil {
		h.Logger.Error("session page: render", "session", id, "err", err)
		plain(w, http.StatusInternalServerError, "internal error")
		return
	}
	securityHeaders(w.Header())
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	// The address holds a token: keep the page out of shared caches.
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf.Bytes())
}

func (h *Handler) asset(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w.Header())
	if !h.assets.Serve(w, r, r.PathValue("name")) {
		notFound(w)
	}
}

// securityHeaders confines the page to its own origin: scripts, styles and
// connections only from self, nothing inline, no framing; and, since the
// address carries a token, no Referer to the links it contains.
func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", strings.Join([]string{
		"default-src 'none'",
		"script-src 'self'",
		"style-src 'self'",
		"connect-src 'self'",
		"img-src 'self'",
		"base-uri 'none'",
		"form-action 'none'",
		"frame-ancestors 'none'",
	}, "; "))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
}

// unauthorized answers a page request that has no valid token.
func unauthorized(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="switchboard"`)
	plain(w, http.StatusUnauthorized, "401 unauthorized: open this page with ?token=<the session's client token or the admin token>")
}

func notFound(w http.ResponseWriter) {
	plain(w, http.StatusNotFound, "404 not found: no such session")
}

func plain(w http.ResponseWriter, status int, msg string) {
	securityHeaders(w.Header())
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(msg + "\n"))
}
