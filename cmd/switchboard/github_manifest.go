package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"strconv"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/settings"
	"github.com/switchboardhq/switchboard/oauth"
	"github.com/switchboardhq/switchboard/providers/github"
)

// githubAppFile keeps, sealed with the master key, the GitHub App the
// manifest flow created; it is used at start when no GITHUB_APP_*
// variable is set.
const githubAppFile = "github-app.sealed"

var githubAppAAD = []byte("switchboard github app")

// saveGitHubApp seals app into the data directory (0600, replaced whole).
func saveGitHubApp(dataDir string, sealer core.Sealer, app github.App) error {
	raw, err := json.Marshal(app)
	if err != nil {
		return err
	}
	sealed, err := sealer.Seal(raw, githubAppAAD)
	if err != nil {
		return fmt.Errorf("seal the github app: %w", err)
	}
	path := filepath.Join(dataDir, githubAppFile)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, sealed, 0o600); err != nil {
		return fmt.Errorf("save the github app: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("save the github app: %w", err)
	}
	return nil
}

// storedGitHubConfig is the GitHub configuration of a stored App, with
// the other GITHUB_* settings (API and web URLs, trigger label) from s;
// c unchanged when none is stored.
func storedGitHubConfig(c githubConfig, s settings.Values, dataDir string, sealer core.Sealer) (githubConfig, error) {
	path := filepath.Join(dataDir, githubAppFile)
	sealed, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return githubConfig{}, fmt.Errorf("SWITCHBOARD_DATA_DIR: %w", err)
	}
	raw, err := sealer.Open(sealed, githubAppAAD)
	if err != nil {
		return githubConfig{}, fmt.Errorf("%s does not open with SWITCHBOARD_MASTER_KEY: %w", path, err)
	}
	var app github.App
	if err := json.Unmarshal(raw, &app); err != nil {
		return githubConfig{}, fmt.Errorf("%s: %w", path, err)
	}
	with := maps.Clone(s)
	with["GITHUB_APP_ID"] = strconv.FormatInt(app.ID, 10)
	with["GITHUB_APP_PRIVATE_KEY"] = app.PrivateKey
	with["GITHUB_WEBHOOK_SECRET"] = app.WebhookSecret
	with["GITHUB_APP_SLUG"] = app.Slug
	stored, err := loadGitHubConfig(with)
	if err != nil {
		return c, fmt.Errorf("%s: %w", path, err)
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
		Save: func(_ context.Context, app github.App) error { return saveGitHubApp(cfg.dataDir, cfg.sealer, app) },
	}
	if cfg.github.enabled {
		m.Configured = cfg.github.cfg.Slug
	}
	m.Register(mux)
	return nil
}
