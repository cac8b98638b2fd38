package main

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/switchboardhq/switchboard/providers"
	"github.com/switchboardhq/switchboard/core/settings"
	"github.com/switchboardhq/switchboard/providers/linear"
)

// linearOptions are the Linear settings; serve's option list includes
// them.
var linearOptions = []settings.Option{
	{Env: "LINEAR_CLIENT_ID", Flag: "linear-client-id", Usage: "Linear OAuth app client id (enables Linear with the client secret and webhook secret)"},
	{Env: "LINEAR_CLIENT_SECRET", Flag: "linear-client-secret", Usage: "Linear OAuth app client secret"},
	{Env: "LINEAR_WEBHOOK_SECRET", Flag: "linear-webhook-secret", Usage: "Linear webhook signing secret (linear-signature)"},
	{Env: "LINEAR_API_URL", Flag: "linear-api-url", Default: linear.DefaultAPIURL, Usage: "Linear API base (/graphql, /oauth/token under it)"},
	{Env: "LINEAR_AUTHORIZE_URL", Flag: "linear-authorize-url", Usage: "Linear OAuth consent page (default https://linear.app/oauth/authorize, or <LINEAR_API_URL>/oauth/authorize when LINEAR_API_URL is not the default)"},
	{Env: "LINEAR_REQUESTS_PER_HOUR", Flag: "linear-requests-per-hour", Default: "4000", Usage: "budget of agent activity calls per Linear organization and hour (Linear allows 5000)"},
	{Env: "LINEAR_TOKEN_REFRESH_SECONDS", Flag: "linear-token-refresh-seconds", Default: "300", Usage: "renew a Linear access token this long before it expires"},
}

// linearConfig is the validated Linear settings; enabled is false when no
// Linear app variable is set.
type linearConfig struct {
	enabled bool
	cfg     linear.Config
}

func loadLinearConfig(s settings.Values) (linearConfig, error) {
	var c linearConfig
	id, secret, hook := s["LINEAR_CLIENT_ID"], s["LINEAR_CLIENT_SECRET"], s["LINEAR_WEBHOOK_SECRET"]
	if id == "" && secret == "" && hook == "" {
		return c, nil
	}
	switch {
	case id == "":
		return c, errors.New("LINEAR_CLIENT_ID is required when LINEAR_CLIENT_SECRET or LINEAR_WEBHOOK_SECRET is set")
	case secret == "":
		return c, errors.New("LINEAR_CLIENT_SECRET is required with LINEAR_CLIENT_ID")
	case hook == "":
		return c, errors.New("LINEAR_WEBHOOK_SECRET is required with LINEAR_CLIENT_ID")
	}
	for _, v := range []string{"LINEAR_API_URL", "LINEAR_AUTHORIZE_URL"} {
		if s[v] == "" && v == "LINEAR_AUTHORIZE_URL" {
			continue
		}
		if _, err := s.URL(v); err != nil {
			return c, err
		}
	}
	rate, err := s.Int("LINEAR_REQUESTS_PER_HOUR", 1)
	if err != nil {
		return c, err
	}
	margin, err := s.Int("LINEAR_TOKEN_REFRESH_SECONDS", 1)
	if err != nil {
		return c, err
	}
	c.enabled = true
	c.cfg = linear.Config{ClientID: id, ClientSecret: secret, WebhookSecret: hook, APIURL: s["LINEAR_API_URL"],
		AuthorizeURL: s["LINEAR_AUTHORIZE_URL"], RequestsPerHour: rate, RefreshMargin: time.Duration(margin) * time.Second}
	return c, nil
}

// newLinear builds the Linear provider from its settings and the
// gateway's stores.
func newLinear(c linearConfig, sessions linear.Sessions, installs linear.Installations, cfg *serveConfig, router *providers.Router, log *slog.Logger) (*linear.Provider, error) {
	lc := c.cfg
	lc.Sessions, lc.Installations, lc.Sealer, lc.Router = sessions, installs, cfg.sealer, router
	lc.PublicURL, lc.MaxBody, lc.Logger = cfg.publicURL, cfg.maxBody, log
	p, err := linear.New(lc)
	if err != nil {
		return nil, fmt.Errorf("LINEAR_CLIENT_ID: %w", err)
	}
	return p, nil
}
