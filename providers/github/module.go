package github

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core/settings"
	"github.com/switchboardhq/switchboard/providers"
)

// Module is the GitHub App as the gateway's configuration sees it: the
// GITHUB_* settings, or else the App the manifest flow stored in the data
// directory, and the provider built from them. Without an App the module
// still serves the manifest flow that creates one.
func Module() providers.Module {
	return providers.Module{Platform: descriptor(), Options: options(), Load: load}
}

func options() []settings.Option {
	return []settings.Option{
		{Env: "GITHUB_APP_ID", Flag: "github-app-id", Usage: "GitHub App id (enables GitHub with the private key, webhook secret and slug)"},
		{Env: "GITHUB_APP_PRIVATE_KEY", Flag: "github-app-private-key", Usage: "GitHub App private key (PEM)"},
		{Env: "GITHUB_APP_PRIVATE_KEY_FILE", Flag: "github-app-private-key-file", Usage: "file holding the GitHub App private key (PEM), instead of GITHUB_APP_PRIVATE_KEY"},
		{Env: "GITHUB_WEBHOOK_SECRET", Flag: "github-webhook-secret", Usage: "GitHub App webhook secret (X-Hub-Signature-256)"},
		{Env: "GITHUB_APP_SLUG", Flag: "github-app-slug", Usage: "GitHub App slug: @<slug> mentions trigger the agent"},
		{Env: "GITHUB_API_URL", Flag: "github-api-url", Default: DefaultAPIURL, Usage: "GitHub REST API base (GitHub Enterprise Server: https://<host>/api/v3/)"},
		{Env: "GITHUB_WEB_URL", Flag: "github-web-url", Default: DefaultWebURL, Usage: "GitHub web and git host"},
		{Env: "GITHUB_TRIGGER_LABEL", Flag: "github-trigger-label", Usage: "label that starts a session when added to an issue or PR (default: the app slug)"},
		{Env: "GITHUB_HISTORY_COMMENTS", Flag: "github-history-comments", Default: "20", Usage: "earlier comments of an issue or PR the first turn sees, newest kept (0: none)"},
		{Env: "GITHUB_PERMISSION_CACHE_SECONDS", Flag: "github-permission-cache-seconds", Default: "60", Usage: "how long a commenter's write access, once checked, is trusted"},
	}
}

func load(s settings.Values, env providers.LoadEnv) (providers.Build, error) {
	cfg, on, err := loadConfig(s)
	if err != nil {
		return nil, err
	}
	if !on {
		if cfg, on, err = storedConfig(cfg, s, env); err != nil {
			return nil, err
		}
	}
	return func(d providers.Deps) (providers.Provider, error) {
		m := &Manifest{PublicURL: d.PublicURL, WebURL: cfg.WebURL, APIURL: cfg.APIURL, States: d.States, AdminToken: d.AdminToken,
			Logger: d.Logger.With("component", Name),
			Save:   func(_ context.Context, app App) error { return SaveApp(d.DataDir, d.Sealer, app) }}
		if !on {
			return manifestOnly{m}, nil
		}
		m.Configured = cfg.Slug
		c := cfg
		c.Sessions, c.Installations, c.Intake, c.Attachments = d.Store, d.Store, d.Intake, d.Attachments
		c.MaxBody, c.Logger = d.MaxBody, d.Logger.With("component", Name)
		p, err := New(c)
		if err != nil {
			return nil, fmt.Errorf("GITHUB_APP_ID: %w", err)
		}
		p.manifest = m
		return p, nil
	}, nil
}

// loadConfig validates the GitHub App settings; on is false when no App
// variable is set (the hosts are kept: the manifest flow talks to them).
func loadConfig(s settings.Values) (_ Config, on bool, _ error) {
	var c Config
	id, key, keyFile, secret, slug := s["GITHUB_APP_ID"], s["GITHUB_APP_PRIVATE_KEY"], s["GITHUB_APP_PRIVATE_KEY_FILE"], s["GITHUB_WEBHOOK_SECRET"], s["GITHUB_APP_SLUG"]
	// The hosts are kept without an App too: the manifest flow that
	// creates one talks to them.
	c.APIURL, c.WebURL = s["GITHUB_API_URL"], s["GITHUB_WEB_URL"]
	if id == "" && key == "" && keyFile == "" && secret == "" && slug == "" {
		return c, false, nil
	}
	appID, err := strconv.ParseInt(id, 10, 64)
	switch {
	case id == "":
		return c, false, errors.New("GITHUB_APP_ID is required when another GITHUB_APP_* or GITHUB_WEBHOOK_SECRET is set")
	case err != nil || appID <= 0:
		return c, false, fmt.Errorf("GITHUB_APP_ID=%q: want a positive number", id)
	case key != "" && keyFile != "":
		return c, false, errors.New("GITHUB_APP_PRIVATE_KEY and GITHUB_APP_PRIVATE_KEY_FILE are both set: want one")
	case key == "" && keyFile == "":
		return c, false, errors.New("GITHUB_APP_PRIVATE_KEY or GITHUB_APP_PRIVATE_KEY_FILE is required with GITHUB_APP_ID")
	case secret == "":
		return c, false, errors.New("GITHUB_WEBHOOK_SECRET is required with GITHUB_APP_ID")
	case slug == "":
		return c, false, errors.New("GITHUB_APP_SLUG is required with GITHUB_APP_ID")
	}
	pem, name := []byte(key), "GITHUB_APP_PRIVATE_KEY"
	if keyFile != "" {
		name = "GITHUB_APP_PRIVATE_KEY_FILE"
		if pem, err = os.ReadFile(keyFile); err != nil {
			return c, false, fmt.Errorf("GITHUB_APP_PRIVATE_KEY_FILE: %w", err)
		}
	}
	for _, v := range []string{"GITHUB_API_URL", "GITHUB_WEB_URL"} {
		if _, err := s.URL(v); err != nil {
			return c, false, err
		}
	}
	ttl, err := s.Int("GITHUB_PERMISSION_CACHE_SECONDS", 1)
	if err != nil {
		return c, false, err
	}
	history, err := s.Int("GITHUB_HISTORY_COMMENTS", 0)
	if err != nil {
		return c, false, err
	}
	if history == 0 {
		history = -1 // none; the Config's zero is the default
	}
	c = Config{AppID: appID, PrivateKey: pem, WebhookSecret: secret, Slug: slug,
		TriggerLabel: strings.TrimSpace(s["GITHUB_TRIGGER_LABEL"]), APIURL: s["GITHUB_API_URL"], WebURL: s["GITHUB_WEB_URL"],
		PermissionTTL: time.Duration(ttl) * time.Second, HistoryLimit: history}
	// The key is checked here so a wrong one is one line naming its
	// variable, not an error at the first event.
	if _, err := New(c); err != nil {
		return c, false, fmt.Errorf("%s: %w", name, err)
	}
	return c, true, nil
}

// storedConfig is the configuration of the App the manifest flow stored,
// with the other GITHUB_* settings (hosts, trigger label) from s; c and
// off when none is stored.
func storedConfig(c Config, s settings.Values, env providers.LoadEnv) (Config, bool, error) {
	app, found, err := LoadApp(env.DataDir, env.Sealer)
	if err != nil || !found {
		return c, false, err
	}
	with := maps.Clone(s)
	with["GITHUB_APP_ID"] = strconv.FormatInt(app.ID, 10)
	with["GITHUB_APP_PRIVATE_KEY"] = app.PrivateKey
	with["GITHUB_WEBHOOK_SECRET"] = app.WebhookSecret
	with["GITHUB_APP_SLUG"] = app.Slug
	stored, on, err := loadConfig(with)
	if err != nil {
		return c, false, fmt.Errorf("%s: %w", filepath.Join(env.DataDir, AppFile), err)
	}
	return stored, on, nil
}

// manifestOnly is the module without an App: it serves the manifest flow
// that creates one (it takes effect at the next start).
type manifestOnly struct{ m *Manifest }

var _ providers.WebhookIntake = manifestOnly{}

func (manifestOnly) Name() string { return Name }

// RegisterWebhooks mounts the manifest flow.
func (o manifestOnly) RegisterWebhooks(mux *http.ServeMux) { o.m.Register(mux) }
