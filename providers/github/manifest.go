package github

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	gh "github.com/google/go-github/v62/github"
	"github.com/switchboardhq/switchboard/oauth"
)

// App is what the manifest flow learns of the GitHub App it created: the
// settings GITHUB_APP_* would otherwise give.
type App struct {
	ID            int64  `json:"id"`
	Slug          string `json:"slug"`
	PrivateKey    string `json:"private_key"` // PEM
	WebhookSecret string `json:"webhook_secret"`
	ClientID      string `json:"client_id,omitempty"`
	ClientSecret  string `json:"client_secret,omitempty"`
	HTMLURL       string `json:"html_url,omitempty"`
}

// manifestState is the state provider of manifest flows, apart from
// installs so one cannot be redeemed as the other.
const manifestState = "github-manifest"

// Manifest creates the GitHub App from a manifest (GitHub's "register
// an App from a manifest" flow), so that an admin need not copy its id,
// key and webhook secret by hand:
//
//	GET  /oauth/github/manifest           a form: admin token, optional organization
//	POST /oauth/github/manifest           the admin token checked; a form that posts the
//	                                      manifest to GitHub with a signed, single-use state
//	GET  /oauth/github/manifest/callback  the code converted into the App's settings, saved
//
// The admin token is asked for because whoever completes the flow decides
// which App the gateway acts as.
type Manifest struct {
	PublicURL string // the gateway's public base
	WebURL    string // default DefaultWebURL
	APIURL    string // default DefaultAPIURL
	States    *oauth.States
	// AdminToken is what the form must be given.
	AdminToken string
	// Configured is the App's slug when one is already in use; the flow
	// then refuses to make another.
	Configured string
	// Save stores the App's settings (sealed); they take effect at the
	// next start.
	Save      func(ctx context.Context, app App) error
	Transport http.RoundTripper // default http.DefaultTransport
	Logger    *slog.Logger

	mu      sync.Mutex
	created string // the slug of an App this process created
}

// Register mounts the flow's three endpoints.
func (m *Manifest) Register(mux *http.ServeMux) {
	if m.Logger == nil {
		m.Logger = slog.New(slog.DiscardHandler)
	}
	if m.WebURL == "" {
		m.WebURL = DefaultWebURL
	}
	if m.APIURL == "" {
		m.APIURL = DefaultAPIURL
	}
	mux.HandleFunc("GET /oauth/github/manifest", m.form)
	mux.HandleFunc("POST /oauth/github/manifest", m.start)
	mux.HandleFunc("GET /oauth/github/manifest/callback", m.callback)
}

func (m *Manifest) base() string { return strings.TrimSuffix(m.PublicURL, "/") }

// refuseConfigured answers 409 once the gateway has an App: a second one
// would replace it.
func (m *Manifest) refuseConfigured(w http.ResponseWriter) bool {
	m.mu.Lock()
	created := m.created
	m.mu.Unlock()
	switch {
	case m.Configured != "":
		oauth.Page(w, http.StatusConflict, "GitHub App already configured",
			"This gateway already acts as the GitHub App "+m.Configured+". Install it from /oauth/github/install.")
	case created != "":
		oauth.Page(w, http.StatusConflict, "GitHub App already created",
			"The GitHub App "+created+" was created; restart switchboard to act as it.")
	default:
		return false
	}
	return true
}

func (m *Manifest) form(w http.ResponseWriter, _ *http.Request) {
	if m.refuseConfigured(w) {
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = formTemplate.Execute(w, nil)
}

// orgName is what GitHub allows in an organization's login.
var orgName = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$`)

func (m *Manifest) start(w http.ResponseWriter, r *http.Request) {
	if m.refuseConfigured(w) {
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	if err := r.ParseForm(); err != nil {
		oauth.Page(w, http.StatusBadRequest, "Bad form", "The form could not be read.")
		return
	}
	if subtle.ConstantTimeCompare([]byte(r.PostForm.Get("admin_token")), []byte(m.AdminToken)) != 1 {
		oauth.Page(w, http.StatusUnauthorized, "Wrong admin token", "The admin token is not this gateway's.")
		return
	}
	org, name := strings.TrimSpace(r.PostForm.Get("organization")), strings.TrimSpace(r.PostForm.Get("name"))
	if org != "" && !orgName.MatchString(org) {
		oauth.Page(w, http.StatusBadRequest, "Bad organization", "Give the organization's login, e.g. acme.")
		return
	}
	if name == "" {
		name = "switchboard"
	}
	state, err := m.States.Issue(manifestState)
	if err != nil {
		m.Logger.Error("issue manifest state", "err", err)
		oauth.Page(w, http.StatusInternalServerError, "Failed", "The gateway could not start the flow. See its log.")
		return
	}
	target := m.WebURL + "/settings/apps/new"
	if org != "" {
		target = m.WebURL + "/organizations/" + url.PathEscape(org) + "/settings/apps/new"
	}
	manifest, _ := json.Marshal(m.manifest(name))
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = postTemplate.Execute(w, struct{ Action, Manifest string }{target + "?" + url.Values{"state": {state}}.Encode(), string(manifest)})
}

// manifest is the App this gateway needs: the events its intake reads and
// the permissions its sink and tools use.
func (m *Manifest) manifest(name string) map[string]any {
	base := m.base()
	return map[string]any{
		"name":            name,
		"url":             base,
		"hook_attributes": map[string]any{"url": base + "/webhooks/github", "active": true},
		"redirect_url":    base + "/oauth/github/manifest/callback",
		"setup_url":       base + "/oauth/github/callback",
		"setup_on_update": true,
		"public":          false,
		"default_permissions": map[string]string{
			"issues": "write", "pull_requests": "write", "contents": "write",
			"checks": "write", "actions": "read", "metadata": "read",
		},
		"default_events": []string{"issue_comment", "issues", "pull_request", "pull_request_review",
			"pull_request_review_comment", "check_run"},
	}
}

func (m *Manifest) callback(w http.ResponseWriter, r *http.Request) {
	if m.refuseConfigured(w) {
		return
	}
	q := r.URL.Query()
	if err := m.States.Redeem(r.Context(), manifestState, q.Get("state")); err != nil {
		status := http.StatusBadRequest
		if !errors.Is(err, oauth.ErrBadState) {
			status = http.StatusInternalServerError
			m.Logger.Error("redeem manifest state", "err", err)
		}
		oauth.Page(w, status, "App not created", "This link is invalid, expired or was already used. Start again from /oauth/github/manifest.")
		return
	}
	code := q.Get("code")
	if code == "" {
		oauth.Page(w, http.StatusBadRequest, "App not created", "The callback carries no code.")
		return
	}
	app, err := m.convert(r.Context(), code)
	if err == nil {
		err = m.Save(r.Context(), *app)
	}
	if err == nil {
		m.mu.Lock()
		m.created = app.Slug
		m.mu.Unlock()
	}
	if err != nil {
		m.Logger.Warn("github app manifest failed", "err", err)
		oauth.Page(w, http.StatusBadGateway, "App not created", fmt.Sprintf("Creating the App failed: %v", err))
		return
	}
	m.Logger.Info("github app created from manifest", "app_id", app.ID, "slug", app.Slug)
	oauth.Page(w, http.StatusOK, "GitHub App created",
		fmt.Sprintf("The GitHub App %s (id %d) is created and its settings are stored, sealed. Restart switchboard to act as it, then install it from /oauth/github/install.", app.Slug, app.ID))
}

// convert exchanges the manifest code for the App's settings (POST
// /app-manifests/{code}/conversions, which needs no authentication).
func (m *Manifest) convert(ctx context.Context, code string) (*App, error) {
	rt := m.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	c := gh.NewClient(&http.Client{Transport: rt, Timeout: 30 * time.Second})
	base := m.APIURL
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	u, err := url.Parse(base)
	if err != nil {
		return nil, fmt.Errorf("api url: %w", err)
	}
	c.BaseURL = u
	cfg, _, err := c.Apps.CompleteAppManifest(ctx, code)
	if err != nil {
		return nil, fmt.Errorf("convert the manifest code: %w", err)
	}
	app := &App{ID: cfg.GetID(), Slug: cfg.GetSlug(), PrivateKey: cfg.GetPEM(), WebhookSecret: cfg.GetWebhookSecret(),
		ClientID: cfg.GetClientID(), ClientSecret: cfg.GetClientSecret(), HTMLURL: cfg.GetHTMLURL()}
	switch {
	case app.ID <= 0 || app.Slug == "":
		return nil, errors.New("github answered no app id or slug")
	case app.WebhookSecret == "":
		return nil, errors.New("github answered no webhook secret")
	}
	if err := checkKey([]byte(app.PrivateKey)); err != nil {
		return nil, err
	}
	return app, nil
}

var formTemplate = template.Must(template.New("form").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>Create the GitHub App · switchboard</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 40em; margin: 4em auto">
<h1>Create the GitHub App</h1>
<p>GitHub will create an App for this gateway, with its webhook, permissions and events set.</p>
<form method="post" action="/oauth/github/manifest">
<p><label>Admin token <input type="password" name="admin_token" required></label></p>
<p><label>Organization (empty: your own account) <input name="organization"></label></p>
<p><label>App name <input name="name" value="switchboard"></label></p>
<p><button type="submit">Continue on GitHub</button></p>
</form></body></html>
`))

var postTemplate = template.Must(template.New("post").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>Create the GitHub App · switchboard</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 40em; margin: 4em auto">
<form id="manifest" method="post" action="{{.Action}}">
<input type="hidden" name="manifest" value="{{.Manifest}}">
<p><button type="submit">Create the App on GitHub</button></p>
</form>
<script>document.getElementById("manifest").submit()</script>
</body></html>
`))
