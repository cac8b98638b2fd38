package main

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"path/filepath"
	"strconv"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/settings"
	"github.com/switchboardhq/switchboard/oauth"
	"github.com/switchboardhq/switchboard/providers/github"
)

// storedGitHubConfig is the GitHub configuration of a stored App, with
// the other GITHUB_* settings (API and web URLs, trigger label) from s;
// c unchanged when none is stored.
func storedGitHubConfig(c githubConfig, s settings.Values, dataDir string, sealer core.Sealer) (githubConfig, error) {
	app, found, err := github.LoadApp(dataDir, sealer)
	if err != nil || !found {
		return c, err
	}
	with := maps.Clone(s)
	with["GITHUB_APP_ID"] = strconv.FormatInt(app.ID, 10)
	with["GITHUB_APP_PRIVATE_KEY"] = app.PrivateKey
	with["GITHUB_WEBHOOK_SECRET"] = app.WebhookSecret
	with["GITHUB_APP_SLUG"] = app.Slug
	stored, err := loadGitHubConfig(with)
	if err != nil {
		return c, fmt.Errorf("%s: %w", filepath.Join(dataDir, github.AppFile), err)
	}
	return stored, nil
}

// registerGitHubManifest mounts the manifest flow that creates the App.
func registerGitHubManifest(mux *http.ServeMux, cfg *serveConfig, once core.OnceStore, log *slog.Logger) error {
	states, err := oauth.NewStates(cfg.masterKey, once)
	if err != nil {
		return err
	}
	m := &github.Manifest{
		PublicURL: cfg.publicURL, WebURL: cfg.github.cfg.WebURL, APIURL: cfg.github.cfg.APIURL,
		States: states, AdminToken: cfg.adminToken, Logger: log,
		Save: func(_ context.Context, app github.App) error { return github.SaveApp(cfg.dataDir, cfg.sealer, app) },
	}
	if cfg.github.enabled {
		m.Configured = cfg.github.cfg.Slug
	}
	m.Register(mux)
	return nil
}
