package slack

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core/settings"
	"github.com/switchboardhq/switchboard/providers"
)

// Module is Slack as the gateway's configuration sees it: the SLACK_*
// settings, checked at start, and the provider built from them.
func Module() providers.Module {
	app := appSetup()
	return providers.Module{Platform: descriptor(), Options: options(), Load: load, App: &app}
}

func options() []settings.Option {
	return []settings.Option{
		{Env: "SLACK_SIGNING_SECRET", Flag: "slack-signing-secret", Usage: "Slack app signing secret (enables Slack with a bot token or a client id and secret)"},
		{Env: "SLACK_CLIENT_ID", Flag: "slack-client-id", Usage: "Slack app client id, for the OAuth install at /oauth/slack/install"},
		{Env: "SLACK_CLIENT_SECRET", Flag: "slack-client-secret", Usage: "Slack app client secret"},
		{Env: "SLACK_APP_TOKEN", Flag: "slack-app-token", Usage: "Socket Mode: an app-level token (xapp-…, scope connections:write); events and buttons then come over a WebSocket the gateway opens, with no public URL, and SLACK_SIGNING_SECRET is optional"},
		{Env: "SLACK_BOT_TOKEN", Flag: "slack-bot-token", Usage: "single-workspace mode: the bot token (xoxb-…) of one workspace, no install"},
		{Env: "SLACK_API_URL", Flag: "slack-api-url", Default: DefaultAPIURL, Usage: "Slack Web API base"},
		{Env: "SLACK_USER_SCOPES", Flag: "slack-user-scopes", Usage: "user scopes asked for at install, comma-separated (search:read enables the search tool)"},
		{Env: "SLACK_ALLOW_BOTS", Flag: "slack-allow-bots", Default: "false", Usage: "let other bots' messages trigger the agent (never its own)"},
		{Env: "SLACK_HISTORY_MESSAGES", Flag: "slack-history-messages", Default: "15", Usage: "earlier messages of the thread the first turn sees"},
		{Env: "SLACK_PROGRESS_MS", Flag: "slack-progress-ms", Default: "2000", Usage: "least time between two progress updates of a running turn, in milliseconds"},
		{Env: "SLACK_AGENT", Flag: "slack-agent", Default: "false", Usage: "the app is configured as a Slack agent (agent_view in its manifest, the assistant:write scope, the agent_session_stopped event): answers stream into the thread with a task timeline or plan, and Slack's agent session shows each turn with its own stop"},
		{Env: "SLACK_STREAM_MS", Flag: "slack-stream-ms", Default: "1000", Usage: "least time between two appends to a streamed answer, in milliseconds (with SLACK_AGENT)"},
		{Env: "SLACK_TOKEN_REFRESH_SECONDS", Flag: "slack-token-refresh-seconds", Default: "300", Usage: "renew a rotating Slack token this long before it expires"},
	}
}

// load validates the settings; a bot token is checked with auth.test
// here, before anything starts, so a wrong one is one line naming it.
func load(s settings.Values, _ providers.LoadEnv) (providers.Build, error) {
	secret, id, csecret, bot, app := s["SLACK_SIGNING_SECRET"], s["SLACK_CLIENT_ID"], s["SLACK_CLIENT_SECRET"], s["SLACK_BOT_TOKEN"], s["SLACK_APP_TOKEN"]
	if secret == "" && id == "" && csecret == "" && bot == "" && app == "" {
		return nil, nil
	}
	switch {
	case app != "" && !strings.HasPrefix(app, "xapp-"):
		return nil, errors.New("SLACK_APP_TOKEN: want an app-level token (xapp-…)")
	case app != "" && bot == "" && id == "":
		return nil, errors.New("SLACK_APP_TOKEN is set but neither SLACK_BOT_TOKEN nor SLACK_CLIENT_ID and SLACK_CLIENT_SECRET are: the gateway needs a bot token to answer")
	case secret == "" && app == "":
		return nil, errors.New("SLACK_SIGNING_SECRET is required when SLACK_BOT_TOKEN or SLACK_CLIENT_ID is set (or SLACK_APP_TOKEN, for Socket Mode)")
	case id != "" && csecret == "":
		return nil, errors.New("SLACK_CLIENT_SECRET is required with SLACK_CLIENT_ID")
	case id == "" && csecret != "":
		return nil, errors.New("SLACK_CLIENT_ID is required with SLACK_CLIENT_SECRET")
	case bot == "" && id == "":
		return nil, errors.New("SLACK_SIGNING_SECRET is set but neither SLACK_BOT_TOKEN nor SLACK_CLIENT_ID and SLACK_CLIENT_SECRET are")
	case bot != "" && !strings.HasPrefix(bot, "xoxb-"):
		return nil, errors.New("SLACK_BOT_TOKEN: want a bot token (xoxb-…)")
	}
	api, err := s.URL("SLACK_API_URL")
	if err != nil {
		return nil, err
	}
	// The Web API client joins method names to the base as is.
	api = strings.TrimRight(api, "/") + "/"
	allow, err := s.Bool("SLACK_ALLOW_BOTS")
	if err != nil {
		return nil, err
	}
	history, err := s.Int("SLACK_HISTORY_MESSAGES", 1)
	if err != nil {
		return nil, err
	}
	progress, err := s.Int("SLACK_PROGRESS_MS", 0)
	if err != nil {
		return nil, err
	}
	margin, err := s.Int("SLACK_TOKEN_REFRESH_SECONDS", 1)
	if err != nil {
		return nil, err
	}
	agent, err := s.Bool("SLACK_AGENT")
	if err != nil {
		return nil, err
	}
	streamMS, err := s.Int("SLACK_STREAM_MS", 0)
	if err != nil {
		return nil, err
	}
	userScopes := splitScopes(s["SLACK_USER_SCOPES"])
	cfg := Config{
		SigningSecret: secret, ClientID: id, ClientSecret: csecret, BotToken: bot, AppToken: app, APIURL: api,
		UserScopes: userScopes, AllowBots: allow, HistoryLimit: history,
		StatusEvery:   max(time.Duration(progress)*time.Millisecond, time.Millisecond),
		RefreshMargin: time.Duration(margin) * time.Second,
		Agent:         agent, StreamEvery: time.Duration(streamMS) * time.Millisecond,
	}
	if bot != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := VerifyBotToken(ctx, api, bot); err != nil {
			return nil, fmt.Errorf("SLACK_BOT_TOKEN: %w", err)
		}
	}
	return func(d providers.Deps) (providers.Provider, error) {
		c := cfg
		c.Sessions, c.Installations, c.Sealer, c.Intake = d.Store, d.Store, d.Sealer, d.Intake
		c.Attachments = d.Attachments
		c.MaxBody, c.Logger = d.MaxBody, d.Logger.With("component", Name)
		p, err := New(c)
		if err != nil {
			return nil, fmt.Errorf("SLACK_SIGNING_SECRET: %w", err)
		}
		return p, nil
	}, nil
}
