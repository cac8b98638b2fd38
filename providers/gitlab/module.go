package gitlab

import (
	"errors"
	"fmt"
	"strings"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/switchboardhq/switchboard/core/settings"
	"github.com/switchboardhq/switchboard/providers"
)

// Module is GitLab as the gateway's configuration sees it: the
// SWITCHBOARD_GITLAB_* settings and the provider built from them.
func Module() providers.Module {
	return providers.Module{Platform: descriptor(), Options: options(), Load: load}
}

func options() []settings.Option {
	return []settings.Option{
		{Env: "SWITCHBOARD_GITLAB_URL", Flag: "gitlab-url", Default: DefaultURL, Usage: "GitLab instance (gitlab.com or a self-managed one); the REST API is <url>/api/v4"},
		{Env: "SWITCHBOARD_GITLAB_WEBHOOK_SECRET", Flag: "gitlab-webhook-secret", Usage: "secret token of the GitLab webhooks (X-Gitlab-Token); enables GitLab with a token or an OAuth application"},
		{Env: "SWITCHBOARD_GITLAB_SIGNING_TOKEN", Flag: "gitlab-signing-token", Usage: "signing token of the GitLab webhooks (webhook-signature, Standard Webhooks); when set, unsigned deliveries are refused"},
		{Env: "SWITCHBOARD_GITLAB_TOKEN", Flag: "gitlab-token", Usage: "project access token of one project (single-project mode, without the OAuth install)"},
		{Env: "SWITCHBOARD_GITLAB_PROJECT", Flag: "gitlab-project", Usage: "the project of the single-project token (group/sub/project)"},
		{Env: "SWITCHBOARD_GITLAB_CLIENT_ID", Flag: "gitlab-client-id", Usage: "GitLab OAuth application id (install per instance)"},
		{Env: "SWITCHBOARD_GITLAB_CLIENT_SECRET", Flag: "gitlab-client-secret", Usage: "GitLab OAuth application secret"},
		{Env: "SWITCHBOARD_GITLAB_ALLOWED_HOSTS", Flag: "gitlab-allowed-hosts", Usage: "self-managed GitLab hosts on a private network the gateway may reach (comma-separated host names)"},
		{Env: "SWITCHBOARD_GITLAB_USERNAME", Flag: "gitlab-username", Usage: "the app's GitLab username: @<username> mentions trigger the agent (default: the token's user)"},
		{Env: "SWITCHBOARD_GITLAB_TRIGGER_LABEL", Flag: "gitlab-trigger-label", Usage: "label that starts a session when added to an issue or merge request (default: the username)"},
		{Env: "SWITCHBOARD_GITLAB_MEMBER_CACHE_SECONDS", Flag: "gitlab-member-cache-seconds", Default: "60", Usage: "how long a commenter's access level, once read, is trusted"},
	}
}

func load(s settings.Values, _ providers.LoadEnv) (providers.Build, error) {
	secret, token, project, id, clientSecret := s["SWITCHBOARD_GITLAB_WEBHOOK_SECRET"], s["SWITCHBOARD_GITLAB_TOKEN"],
		s["SWITCHBOARD_GITLAB_PROJECT"], s["SWITCHBOARD_GITLAB_CLIENT_ID"], s["SWITCHBOARD_GITLAB_CLIENT_SECRET"]
	if secret == "" && token == "" && project == "" && id == "" && clientSecret == "" {
		return nil, nil
	}
	switch {
	case secret == "":
		return nil, errors.New("SWITCHBOARD_GITLAB_WEBHOOK_SECRET is required when another SWITCHBOARD_GITLAB_* is set")
	case token == "" && id == "":
		return nil, errors.New("SWITCHBOARD_GITLAB_TOKEN (one project) or SWITCHBOARD_GITLAB_CLIENT_ID (OAuth) is required with SWITCHBOARD_GITLAB_WEBHOOK_SECRET")
	case token != "" && project == "":
		return nil, errors.New("SWITCHBOARD_GITLAB_PROJECT is required with SWITCHBOARD_GITLAB_TOKEN")
	case id != "" && clientSecret == "":
		return nil, errors.New("SWITCHBOARD_GITLAB_CLIENT_SECRET is required with SWITCHBOARD_GITLAB_CLIENT_ID")
	}
	if _, err := s.URL("SWITCHBOARD_GITLAB_URL"); err != nil {
		return nil, err
	}
	ttl, err := s.Int("SWITCHBOARD_GITLAB_MEMBER_CACHE_SECONDS", 1)
	if err != nil {
		return nil, err
	}
	cfg := Config{URL: s["SWITCHBOARD_GITLAB_URL"], WebhookSecret: secret, SigningToken: s["SWITCHBOARD_GITLAB_SIGNING_TOKEN"], Token: token, Project: strings.Trim(project, "/"),
		ClientID: id, ClientSecret: clientSecret, AllowedHosts: s.List("SWITCHBOARD_GITLAB_ALLOWED_HOSTS"),
		Username:     strings.TrimPrefix(strings.TrimSpace(s["SWITCHBOARD_GITLAB_USERNAME"]), "@"),
		TriggerLabel: strings.TrimSpace(s["SWITCHBOARD_GITLAB_TRIGGER_LABEL"]), MemberTTL: time.Duration(ttl) * time.Second}
	if cfg.SigningToken != "" {
		if _, err := standardwebhooks.NewWebhook(cfg.SigningToken); err != nil {
			return nil, fmt.Errorf("SWITCHBOARD_GITLAB_SIGNING_TOKEN: %w", err)
		}
	}
	return func(d providers.Deps) (providers.Provider, error) {
		c := cfg
		c.Sessions, c.Installations, c.Intake, c.Sealer, c.States = d.Store, d.Store, d.Intake, d.Sealer, d.States
		c.PublicURL, c.MaxBody = d.PublicURL, d.MaxBody
		c.Logger = d.Logger.With("component", Name)
		p, err := New(c)
		if err != nil {
			return nil, fmt.Errorf("SWITCHBOARD_GITLAB_WEBHOOK_SECRET: %w", err)
		}
		return p, nil
	}, nil
}
