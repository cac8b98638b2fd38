package linear

import (
	"errors"
	"fmt"
	"time"

	"github.com/switchboardhq/switchboard/core/settings"
	"github.com/switchboardhq/switchboard/providers"
)

// Module is the Linear agent as the gateway's configuration sees it: the
// LINEAR_* settings and the provider built from them.
func Module() providers.Module {
	app := appSetup()
	return providers.Module{Platform: descriptor(), Options: options(), Load: load, App: &app}
}

func options() []settings.Option {
	return []settings.Option{
		{Env: "LINEAR_CLIENT_ID", Flag: "linear-client-id", Usage: "Linear OAuth app client id (enables Linear with the client secret and webhook secret)"},
		{Env: "LINEAR_CLIENT_SECRET", Flag: "linear-client-secret", Usage: "Linear OAuth app client secret"},
		{Env: "LINEAR_WEBHOOK_SECRET", Flag: "linear-webhook-secret", Usage: "Linear webhook signing secret (linear-signature)"},
		{Env: "LINEAR_API_URL", Flag: "linear-api-url", Default: DefaultAPIURL, Usage: "Linear API base (/graphql, /oauth/token under it)"},
		{Env: "LINEAR_AUTHORIZE_URL", Flag: "linear-authorize-url", Usage: "Linear OAuth consent page (default https://linear.app/oauth/authorize, or <LINEAR_API_URL>/oauth/authorize when LINEAR_API_URL is not the default)"},
		{Env: "LINEAR_REQUESTS_PER_HOUR", Flag: "linear-requests-per-hour", Default: "4000", Usage: "budget of agent activity calls per Linear organization and hour (Linear allows 5000)"},
		{Env: "LINEAR_TOKEN_REFRESH_SECONDS", Flag: "linear-token-refresh-seconds", Default: "300", Usage: "renew a Linear access token this long before it expires"},
	}
}

func load(s settings.Values, _ providers.LoadEnv) (providers.Build, error) {
	id, secret, hook := s["LINEAR_CLIENT_ID"], s["LINEAR_CLIENT_SECRET"], s["LINEAR_WEBHOOK_SECRET"]
	if id == "" && secret == "" && hook == "" {
		return nil, nil
	}
	switch {
	case id == "":
		return nil, errors.New("LINEAR_CLIENT_ID is required when LINEAR_CLIENT_SECRET or LINEAR_WEBHOOK_SECRET is set")
	case secret == "":
		return nil, errors.New("LINEAR_CLIENT_SECRET is required with LINEAR_CLIENT_ID")
	case hook == "":
		return nil, errors.New("LINEAR_WEBHOOK_SECRET is required with LINEAR_CLIENT_ID")
	}
	for _, v := range []string{"LINEAR_API_URL", "LINEAR_AUTHORIZE_URL"} {
		if s[v] == "" && v == "LINEAR_AUTHORIZE_URL" {
			continue
		}
		if _, err := s.URL(v); err != nil {
			return nil, err
		}
	}
	rate, err := s.Int("LINEAR_REQUESTS_PER_HOUR", 1)
	if err != nil {
		return nil, err
	}
	margin, err := s.Int("LINEAR_TOKEN_REFRESH_SECONDS", 1)
	if err != nil {
		return nil, err
	}
	cfg := Config{ClientID: id, ClientSecret: secret, WebhookSecret: hook, APIURL: s["LINEAR_API_URL"],
		AuthorizeURL: s["LINEAR_AUTHORIZE_URL"], RequestsPerHour: rate, RefreshMargin: time.Duration(margin) * time.Second}
	return func(d providers.Deps) (providers.Provider, error) {
		c := cfg
		c.Sessions, c.Installations, c.Sealer, c.Intake = d.Store, d.Store, d.Sealer, d.Intake
		c.Attachments = d.Attachments
		c.PublicURL, c.MaxBody, c.Logger = d.PublicURL, d.MaxBody, d.Logger.With("component", Name)
		p, err := New(c)
		if err != nil {
			return nil, fmt.Errorf("LINEAR_CLIENT_ID: %w", err)
		}
		return p, nil
	}, nil
}
