package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/providers"
	"github.com/switchboardhq/switchboard/core/settings"
	"github.com/switchboardhq/switchboard/providers/github"
)

// githubOptions are the GitHub App settings; serve's option list includes
// them.
var githubOptions = []settings.Option{
	{Env: "GITHUB_APP_ID", Flag: "github-app-id", Usage: "GitHub App id (enables GitHub with the private key, webhook secret and slug)"},
	{Env: "GITHUB_APP_PRIVATE_KEY", Flag: "github-app-private-key", Usage: "GitHub App private key (PEM)"},
	{Env: "GITHUB_APP_PRIVATE_KEY_FILE", Flag: "github-app-private-key-file", Usage: "file holding the GitHub App private key (PEM), instead of GITHUB_APP_PRIVATE_KEY"},
	{Env: "GITHUB_WEBHOOK_SECRET", Flag: "github-webhook-secret", Usage: "GitHub App webhook secret (X-Hub-Signature-256)"},
	{Env: "GITHUB_APP_SLUG", Flag: "github-app-slug", Usage: "GitHub App slug: @<slug> mentions trigger the agent"},
	{Env: "GITHUB_API_URL", Flag: "github-api-url", Default: github.DefaultAPIURL, Usage: "GitHub REST API base (GitHub Enterprise Server: https://<host>/api/v3/)"},
	{Env: "GITHUB_WEB_URL", Flag: "github-web-url", Default: github.DefaultWebURL, Usage: "GitHub web and git host"},
	{Env: "GITHUB_TRIGGER_LABEL", Flag: "github-trigger-label", Usage: "label that starts a session when added to an issue or PR (default: the app slug)"},
	{Env: "GITHUB_PERMISSION_CACHE_SECONDS", Flag: "github-permission-cache-seconds", Default: "60", Usage: "how long a commenter's write access, once checked, is trusted"},
}

// githubConfig is the validated GitHub settings; enabled is false when no
// GitHub App variable is set.
type githubConfig struct {
	enabled bool
	cfg     github.Config
}

func loadGitHubConfig(s settings.Values) (githubConfig, error) {
	var c githubConfig
	id, key, keyFile, secret, slug := s["GITHUB_APP_ID"], s["GITHUB_APP_PRIVATE_KEY"], s["GITHUB_APP_PRIVATE_KEY_FILE"], s["GITHUB_WEBHOOK_SECRET"], s["GITHUB_APP_SLUG"]
	// The hosts are kept without an App too: the manifest flow that
	// creates one talks to them.
	c.cfg.APIURL, c.cfg.WebURL = s["GITHUB_API_URL"], s["GITHUB_WEB_URL"]
	if id == "" && key == "" && keyFile == "" && secret == "" && slug == "" {
		return c, nil
	}
	appID, err := strconv.ParseInt(id, 10, 64)
	switch {
	case id == "":
		return c, errors.New("GITHUB_APP_ID is required when another GITHUB_APP_* or GITHUB_WEBHOOK_SECRET is set")
	case err != nil || appID <= 0:
		return c, fmt.Errorf("GITHUB_APP_ID=%q: want a positive number", id)
	case key != "" && keyFile != "":
		return c, errors.New("GITHUB_APP_PRIVATE_KEY and GITHUB_APP_PRIVATE_KEY_FILE are both set: want one")
	case key == "" && keyFile == "":
		return c, errors.New("GITHUB_APP_PRIVATE_KEY or GITHUB_APP_PRIVATE_KEY_FILE is required with GITHUB_APP_ID")
	case secret == "":
		return c, errors.New("GITHUB_WEBHOOK_SECRET is required with GITHUB_APP_ID")
	case slug == "":
		return c, errors.New("GITHUB_APP_SLUG is required with GITHUB_APP_ID")
	}
	pem, name := []byte(key), "GITHUB_APP_PRIVATE_KEY"
	if keyFile != "" {
		name = "GITHUB_APP_PRIVATE_KEY_FILE"
		if pem, err = os.ReadFile(keyFile); err != nil {
			return c, fmt.Errorf("GITHUB_APP_PRIVATE_KEY_FILE: %w", err)
		}
	}
	for _, v := range []string{"GITHUB_API_URL", "GITHUB_WEB_URL"} {
		if _, err := s.URL(v); err != nil {
			return c, err
		}
	}
	ttl, err := s.Int("GITHUB_PERMISSION_CACHE_SECONDS", 1)
	if err != nil {
		return c, err
	}
	c.enabled = true
	c.cfg = github.Config{AppID: appID, PrivateKey: pem, WebhookSecret: secret, Slug: slug,
		TriggerLabel: strings.TrimSpace(s["GITHUB_TRIGGER_LABEL"]), APIURL: s["GITHUB_API_URL"], WebURL: s["GITHUB_WEB_URL"],
		PermissionTTL: time.Duration(ttl) * time.Second}
	// The key is checked here so a wrong one is one line naming its
	// variable, not an error at the first event.
	if _, err := github.New(c.cfg); err != nil {
		return c, fmt.Errorf("%s: %w", name, err)
	}
	return c, nil
}

// newGitHub builds the GitHub provider from its settings and the
// gateway's stores.
func newGitHub(c githubConfig, sessions github.Sessions, installs github.Installations, cfg *serveConfig, router *providers.Router, log *slog.Logger) (*github.Provider, error) {
	gc := c.cfg
	gc.Sessions, gc.Installations, gc.Router = sessions, installs, router
	gc.MaxBody, gc.Logger = cfg.maxBody, log
	p, err := github.New(gc)
	if err != nil {
		return nil, fmt.Errorf("GITHUB_APP_ID: %w", err)
	}
	return p, nil
}
