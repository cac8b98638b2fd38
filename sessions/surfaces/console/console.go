// Package console serves the admin console under /console/: server-rendered
// pages for the operator of a gateway (an overview of sessions and turns,
// the session list and each session, agents, installations, skills,
// memory, environments, vaults and webhooks), signed in with the admin
// token.
//
// Pages are html/template, the script and style sheet are embedded and
// served from the binary, and a strict Content-Security-Policy holds (no
// inline script or style, nothing from elsewhere). Every page works
// without JavaScript; the script only converts times to the browser's zone
// and keeps session statuses live over an SSE stream of the store's
// commits.
//
// A sign-in is a record in the store (core.ConsoleStore) named by the hash
// of the cookie's secret, so every replica sharing the store honours and
// revokes it alike. See docs/console.md.
//
// The console reads lists straight from the store, but every change it
// makes, and every read the store interface does not cover, is a call of
// the gateway's own /v1 API in process (web.InProcess) through the typed
// client, as the admin: the API's checks are the console's, and its
// refusals are shown next to the form field they name.
package console

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
	"github.com/switchboardhq/switchboard/sessions/surfaces/page"
)

// files holds the templates and the static assets.
//
//go:embed templates static
var files embed.FS

// Store is what the console reads and keeps.
type Store interface {
	core.ConsoleStore
	core.StatsStore
	// CommitStream feeds the live statuses of the sessions page.
	core.CommitStream
	ListSessions(ctx context.Context, f core.SessionFilter) (core.SessionList, error)
	CountByStatus(ctx context.Context) (map[core.Status]int, error)
	// ListAgents names the agents of the sessions and schedules pages.
	ListAgents(ctx context.Context, after string, limit int) ([]*core.Agent, bool, error)
}

// Config are the console's settings.
type Config struct {
	// AdminToken signs in; changing it signs every browser out.
	AdminToken string
	// PublicURL is the gateway's address as browsers reach it: an https
	// address makes the cookie Secure and __Host- prefixed, and its path
	// prefixes the cookie's.
	PublicURL string
	Logger    *slog.Logger
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// SessionLifetime is how long a sign-in lasts (12 hours when zero).
	SessionLifetime time.Duration
	// MaxUpload bounds an upload form's body, files included (a skill's
	// folder or zip; 16 MiB when zero).
	MaxUpload int64
	// Heartbeat is how often an idle event stream sends a comment, which
	// finds a client that left and ends a stream whose sign-in ended (15
	// seconds when zero).
	Heartbeat time.Duration
	// Platforms are the platforms the gateway serves; the installations
	// page links to the install flows they have.
	Platforms []Platform
	// Containers lists this replica's sandbox containers for the
	// overview; nil when sandboxes are off.
	Containers Containers
	// SandboxOff says why sandboxes are off, when they are and the
	// gateway knows: the overview names the cause and the fix.
	SandboxOff *SandboxOff
}

// SandboxOff is why sessions run without a sandbox, as the sandbox
// backend found it at start, and the one change that gives them one.
type SandboxOff struct{ Cause, Fix string }

// DefaultSessionLifetime is how long a sign-in lasts by default.
const DefaultSessionLifetime = 12 * time.Hour

// Handler serves the console.
type Handler struct {
	store     Store
	cfg       Config
	log       *slog.Logger
	keyCheck  string
	cookie    cookieSpec
	pages     map[string]*template.Template
	assets    web.Assets
	heartbeat time.Duration
	// api is the gateway's /v1 API, called in process as the admin; set
	// by Register.
	api *client.Client
}

// New checks cfg and prepares the console.
func New(store Store, cfg Config) (*Handler, error) {
	if cfg.AdminToken == "" {
		return nil, fmt.Errorf("console: no admin token: %w", core.ErrInvalid)
	}
	cookie, err := newCookieSpec(cfg.PublicURL)
	if err != nil {
		return nil, err
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.SessionLifetime <= 0 {
		cfg.SessionLifetime = DefaultSessionLifetime
	}
	if cfg.MaxUpload <= 0 {
		cfg.MaxUpload = 16 << 20
	}
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = 15 * time.Second
	}
	h := &Handler{store: store, cfg: cfg, log: cfg.Logger, keyCheck: keyCheck(cfg.AdminToken), cookie: cookie, pages: map[string]*template.Template{}, heartbeat: cfg.Heartbeat}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	// Each page is its own template file, rendered inside layout.html;
	// parts.html holds what several pages share.
	names, err := fs.Glob(files, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("console: templates: %w", err)
	}
	for _, file := range names {
		name := strings.TrimSuffix(path.Base(file), ".html")
		if name == "layout" || name == "parts" {
			continue
		}
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(files, "templates/layout.html", "templates/parts.html", file)
		if err != nil {
			return nil, fmt.Errorf("console: template %s: %w", name, err)
		}
		h.pages[name] = t
	}
	if h.assets, err = web.LoadAssets(files, "static"); err != nil {
		return nil, fmt.Errorf("console: %w", err)
	}
	// The session page renders its conversation with the session
	// page's own script, served from here too.
	shared, err := web.LoadAssets(page.Assets(), ".")
	if err != nil {
		return nil, fmt.Errorf("console: %w", err)
	}
	h.assets["page.js"] = shared["page.js"]
	return h, nil
}

// apiBase is the address the in-process API client names; no socket is
// behind it.
const apiBase = "http://gateway.in-process"

// Register mounts the console on mux: the sign-in page and the assets in
// the open, everything else behind a sign-in. api is the gateway's /v1
// handler with its authentication, which the console calls in process
// with the admin token.
func (h *Handler) Register(mux *http.ServeMux, api http.Handler) {
	h.api = client.New(apiBase, h.cfg.AdminToken, &http.Client{Transport: web.InProcess(api)})
	mux.HandleFunc("GET /console", func(w http.ResponseWriter, r *http.Request) {
		seeOther(w, "console/")
	})
	mux.HandleFunc("GET /console/assets/{name}", h.asset)
	mux.HandleFunc("GET /console/sign-in", h.signInPage)
	mux.HandleFunc("POST /console/sign-in", h.signIn)
	mux.HandleFunc("POST /console/sign-out", h.signedIn(h.signOut))
	mux.HandleFunc("GET /console/{$}", h.signedIn(h.overview))
	mux.HandleFunc("GET /console/sessions", h.signedIn(h.sessions))
	mux.HandleFunc("GET /console/events", h.signedIn(h.events))
	h.registerSession(mux)
	h.registerAgents(mux)
	h.registerInstallations(mux)
	h.registerSkills(mux)
	h.registerMemory(mux)
	h.registerEnvironments(mux)
	h.registerVaults(mux)
	h.registerWebhooks(mux)
	h.registerSchedules(mux)
	mux.HandleFunc("/console/", h.signedIn(func(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession) {
		h.message(w, r, s, http.StatusNotFound, "Not found", "There is no console page at this address.")
	}))
}

// funcs are the templates' helpers.
var funcs = template.FuncMap{
	// utc formats a time for <time datetime>; the script shows it in the
	// browser's zone.
	"utc":     utcAttr,
	"utcText": utcText,
	"usd":     usd,
	"budget":  core.FormatBudget,
	"limits":  ownBudgets,
}

// utcAttr formats a time for <time datetime>; the script shows it in the
// browser's zone.
func utcAttr(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// utcText is a time as a page shows it until its script does.
func utcText(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

// ownBudgets shows the budgets a session's own limits set.
func ownBudgets(l *core.Limits) string {
	if t := l.BudgetsText(); t != "" {
		return t
	}
	return "no budget of its own"
}

// usd shows an estimated cost in dollars: to the cent from $100, else
// to a hundredth of a cent, which a single turn is often under.
func usd(v any) string {
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case *float64:
		if x == nil {
			return ""
		}
		f = *x
	}
	if f >= 100 {
		return fmt.Sprintf("$%.2f", f)
	}
	return fmt.Sprintf("$%.4f", f)
}

// layout is what every page's frame shows.
type layout struct {
	Title string
	// Nav names the current page, one of navItems' names.
	Nav string
	// CSRF is the sign-in's form token; empty (signed out) hides the
	// navigation.
	CSRF string
	// Scripts name a page's own scripts among the assets, in the order
	// they run (console.js is on every page, first).
	Scripts []string
	Page    any
	// Root is the console's address relative to the page's ("" or
	// "../"), set by render unless the page is outside /console/ (the
	// docs): links in the frame start with it, so they hold on pages
	// below /console/ and behind a path prefix.
	Root string
	// Items are the navigation's entries, set by render.
	Items []navItem
}

// navItem is one entry of the navigation.
type navItem struct{ Name, Label, Href string }

// navItems are the console's sections, in the navigation's order.
var navItems = []navItem{
	{"overview", "Overview", "./"},
	{"sessions", "Sessions", "sessions"},
	{"agents", "Agents", "agents"},
	{"installations", "Installations", "installations"},
	{"skills", "Skills", "skills"},
	{"memory", "Memory", "memory"},
	{"environments", "Environments", "environments"},
	{"vaults", "Vaults", "vaults"},
	{"webhooks", "Webhooks", "webhooks"},
	{"schedules", "Schedules", "schedules"},
}

// render writes page name with data, rendered fully first so a template
// error is a clean 500 rather than half a page.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, name string, l layout) {
	if l.Root == "" {
		l.Root = relative(r, "")
	}
	l.Items = navItems
	var buf bytes.Buffer
	if err := h.pages[name].Execute(&buf, l); err != nil {
		h.log.Error("console: render", "page", name, "err", err)
		plainError(w)
		return
	}
	hdr := w.Header()
	securityHeaders(hdr)
	hdr.Set("Content-Type", "text/html; charset=utf-8")
	hdr.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// messagePage is a page that only says something. Root leads back to the
// overview from the page's address.
type messagePage struct{ Heading, Text, Root string }

// message answers with a page that says what happened; s is nil when
// nobody is signed in.
func (h *Handler) message(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession, status int, heading, text string) {
	l := layout{Title: heading, Page: messagePage{heading, text, relative(r, "")}}
	if s != nil {
		l.CSRF = s.CSRF
	}
	h.render(w, r, status, "message", l)
}

// failed answers a store failure: logged, and a page that says so.
func (h *Handler) failed(w http.ResponseWriter, r *http.Request, s *core.ConsoleSession, what string, err error) {
	if errors.Is(err, context.Canceled) {
		return
	}
	h.log.Error("console: "+what, "path", r.URL.Path, "err", err)
	h.message(w, r, s, http.StatusInternalServerError, "Something went wrong", "The gateway could not "+what+"; its log says why. Try again.")
}

func (h *Handler) asset(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w.Header())
	if !h.assets.Serve(w, r, r.PathValue("name")) {
		http.NotFound(w, r)
	}
}

// csp confines every console response to its own origin: nothing inline,
// nothing from elsewhere, forms posted only here, no framing.
var csp = strings.Join([]string{
	"default-src 'none'",
	"script-src 'self'",
	"style-src 'self'",
	"img-src 'self' data:",
	"connect-src 'self'",
	"form-action 'self'",
	"base-uri 'none'",
	"frame-ancestors 'none'",
}, "; ")

func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
}

// seeOther redirects to loc, relative to the request's address: the
// console's pages are all one level under /console/, so relative
// addresses hold behind a proxy that serves the gateway under a prefix
// (http.Redirect would make them absolute).
func seeOther(w http.ResponseWriter, loc string) {
	securityHeaders(w.Header())
	w.Header().Set("Location", loc)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusSeeOther)
}

func plainError(w http.ResponseWriter) {
	securityHeaders(w.Header())
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusInternalServerError)
	_, _ = w.Write([]byte("internal error\n"))
}

// publicPath is the path prefix of publicURL ("" at the root).
func publicPath(publicURL string) (path string, https bool, err error) {
	if publicURL == "" {
		return "", false, nil
	}
	u, err := url.Parse(publicURL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", false, fmt.Errorf("console: public URL %q: want http(s)://host[/path]: %w", publicURL, core.ErrInvalid)
	}
	return strings.TrimSuffix(u.Path, "/"), u.Scheme == "https", nil
}
