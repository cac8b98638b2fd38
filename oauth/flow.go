package oauth

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// Installer is the platform-specific part of an install flow.
type Installer interface {
	// AuthorizeURL is the platform's consent page for this install, which
	// sends the person back to redirectURI with a code and state.
	AuthorizeURL(state, redirectURI string) string
	// Complete exchanges the callback's code for tokens and records the
	// installation (tokens sealed).
	Complete(ctx context.Context, code, redirectURI string) (*core.Installation, error)
}

// CallbackInstaller is an Installer whose platform comes back to the
// callback with something other than an OAuth code: a GitHub App install
// returns an installation id and a setup action. Once the state is
// redeemed, Flow hands it the callback's query instead of requiring a
// code. An error wrapping core.ErrInvalid or core.ErrNotFound is the
// person's (400); any other is the platform's (502).
type CallbackInstaller interface {
	Installer
	CompleteCallback(ctx context.Context, query url.Values, redirectURI string) (*core.Installation, error)
}

// Flow serves GET /oauth/<provider>/install (a 302 to the platform with a
// fresh state) and GET /oauth/<provider>/callback (state redeemed, code
// exchanged, installation stored).
type Flow struct {
	Provider  string
	PublicURL string // the gateway's public base URL
	States    *States
	Installer Installer
	Logger    *slog.Logger
}

// RedirectURI is the callback URL the platform must have registered.
func (f *Flow) RedirectURI() string {
	return strings.TrimSuffix(f.PublicURL, "/") + "/oauth/" + f.Provider + "/callback"
}

// Register mounts the two endpoints. They are public: the signed,
// single-use state is what ties a callback to an install this gateway
// started.
func (f *Flow) Register(mux *http.ServeMux) {
	if f.Logger == nil {
		f.Logger = slog.New(slog.DiscardHandler)
	}
	mux.HandleFunc("GET /oauth/"+f.Provider+"/install", f.install)
	mux.HandleFunc("GET /oauth/"+f.Provider+"/callback", f.callback)
}

func (f *Flow) install(w http.ResponseWriter, r *http.Request) {
	state, err := f.States.Issue(f.Provider)
	if err != nil {
		f.Logger.Error("issue install state", "provider", f.Provider, "err", err)
		Page(w, http.StatusInternalServerError, "Install failed", "The gateway could not start the install. See its log.")
		return
	}
	http.Redirect(w, r, f.Installer.AuthorizeURL(state, f.RedirectURI()), http.StatusFound)
}

func (f *Flow) callback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if e := q.Get("error"); e != "" {
		Page(w, http.StatusBadRequest, "Install cancelled", "The platform answered: "+e+".")
		return
	}
	if err := f.States.Redeem(r.Context(), f.Provider, q.Get("state")); err != nil {
		status := http.StatusBadRequest
		if !errors.Is(err, ErrBadState) {
			status = http.StatusInternalServerError
			f.Logger.Error("redeem install state", "provider", f.Provider, "err", err)
		}
		Page(w, status, "Install failed", "This install link is invalid, expired or was already used. Start again from /oauth/"+f.Provider+"/install.")
		return
	}
	in, ok := f.complete(w, r, q)
	if !ok {
		return
	}
	f.Logger.Info("installed", "provider", f.Provider, "installation_id", in.ID, "external_id", in.ExternalID)
	name := in.Name
	if name == "" {
		name = in.ExternalID
	}
	Page(w, http.StatusOK, "Installed", fmt.Sprintf("switchboard is installed into %s (%s). You can close this page.", name, in.ID))
}

// complete finishes an install whose state was redeemed: the code
// exchanged, or the query handed to a CallbackInstaller. On failure it
// has written the error page.
func (f *Flow) complete(w http.ResponseWriter, r *http.Request, q url.Values) (*core.Installation, bool) {
	if ci, ok := f.Installer.(CallbackInstaller); ok {
		in, err := ci.CompleteCallback(r.Context(), q, f.RedirectURI())
		if err == nil {
			return in, true
		}
		f.Logger.Warn("install failed", "provider", f.Provider, "err", err)
		if errors.Is(err, core.ErrInvalid) || errors.Is(err, core.ErrNotFound) {
			Page(w, http.StatusBadRequest, "Install failed", fmt.Sprintf("The install could not be completed: %v", err))
		} else {
			Page(w, http.StatusBadGateway, "Install failed", fmt.Sprintf("Completing the install with %s failed: %v", f.Provider, err))
		}
		return nil, false
	}
	code := q.Get("code")
	if code == "" {
		Page(w, http.StatusBadRequest, "Install failed", "The callback carries no code.")
		return nil, false
	}
	in, err := f.Installer.Complete(r.Context(), code, f.RedirectURI())
	if err != nil {
		f.Logger.Warn("install failed", "provider", f.Provider, "err", err)
		Page(w, http.StatusBadGateway, "Install failed", fmt.Sprintf("Exchanging the code with %s failed: %v", f.Provider, err))
		return nil, false
	}
	return in, true
}

var pageTemplate = template.Must(template.New("page").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>{{.Title}} · switchboard</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 40em; margin: 4em auto">
<h1>{{.Title}}</h1><p>{{.Text}}</p></body></html>
`))

// Page writes a small HTML answer: install pages are opened in a browser.
func Page(w http.ResponseWriter, status int, title, text string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = pageTemplate.Execute(w, struct{ Title, Text string }{title, text})
}
