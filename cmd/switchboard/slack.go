package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/providers"
	"github.com/switchboardhq/switchboard/providers/slack"
)

// slackOptions are the Slack settings; serve's option list includes them.
var slackOptions = []option{
	{"SLACK_SIGNING_SECRET", "slack-signing-secret", "", "Slack app signing secret (enables Slack with a bot token or a client id and secret)"},
	{"SLACK_CLIENT_ID", "slack-client-id", "", "Slack app client id, for the OAuth install at /oauth/slack/install"},
	{"SLACK_CLIENT_SECRET", "slack-client-secret", "", "Slack app client secret"},
	{"SLACK_BOT_TOKEN", "slack-bot-token", "", "single-workspace mode: the bot token (xoxb-…) of one workspace, no install"},
	{"SLACK_API_URL", "slack-api-url", slack.DefaultAPIURL, "Slack Web API base"},
	{"SLACK_USER_SCOPES", "slack-user-scopes", "", "user scopes asked for at install, comma-separated (search:read enables the search tool)"},
	{"SLACK_ALLOW_BOTS", "slack-allow-bots", "false", "let other bots' messages trigger the agent (never its own)"},
	{"SLACK_HISTORY_MESSAGES", "slack-history-messages", "15", "earlier messages of the thread the first turn sees"},
	{"SLACK_PROGRESS_MS", "slack-progress-ms", "2000", "least time between two progress updates of a running turn, in milliseconds"},
	{"SLACK_TOKEN_REFRESH_SECONDS", "slack-token-refresh-seconds", "300", "renew a rotating Slack token this long before it expires"},
}

// slackConfig is the validated Slack settings; enabled is false when no
// Slack variable is set.
type slackConfig struct {
	enabled bool
	cfg     slack.Config
	margin  time.Duration
}

func loadSlackConfig(s settings) (slackConfig, error) {
	var c slackConfig
	secret, id, csecret, bot := s["SLACK_SIGNING_SECRET"], s["SLACK_CLIENT_ID"], s["SLACK_CLIENT_SECRET"], s["SLACK_BOT_TOKEN"]
	if secret == "" && id == "" && csecret == "" && bot == "" {
		return c, nil
	}
	switch {
	case secret == "":
		return c, errors.New("SLACK_SIGNING_SECRET is required when SLACK_BOT_TOKEN or SLACK_CLIENT_ID is set")
	case id != "" && csecret == "":
		return c, errors.New("SLACK_CLIENT_SECRET is required with SLACK_CLIENT_ID")
	case id == "" && csecret != "":
		return c, errors.New("SLACK_CLIENT_ID is required with SLACK_CLIENT_SECRET")
	case bot == "" && id == "":
		return c, errors.New("SLACK_SIGNING_SECRET is set but neither SLACK_BOT_TOKEN nor SLACK_CLIENT_ID and SLACK_CLIENT_SECRET are")
	case bot != "" && !strings.HasPrefix(bot, "xoxb-"):
		return c, errors.New("SLACK_BOT_TOKEN: want a bot token (xoxb-…)")
	}
	api := s["SLACK_API_URL"]
	if u, err := url.Parse(api); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return c, fmt.Errorf("SLACK_API_URL=%q: want an http(s) URL", api)
	}
	allow, err := strconv.ParseBool(s["SLACK_ALLOW_BOTS"])
	if err != nil {
		return c, fmt.Errorf("SLACK_ALLOW_BOTS=%q: want true or false", s["SLACK_ALLOW_BOTS"])
	}
	history, err := s.int("SLACK_HISTORY_MESSAGES", 1)
	if err != nil {
		return c, err
	}
	progress, err := s.int("SLACK_PROGRESS_MS", 0)
	if err != nil {
		return c, err
	}
	margin, err := s.int("SLACK_TOKEN_REFRESH_SECONDS", 1)
	if err != nil {
		return c, err
	}
	var userScopes []string
	for _, sc := range strings.Split(s["SLACK_USER_SCOPES"], ",") {
		if sc = strings.TrimSpace(sc); sc != "" {
			userScopes = append(userScopes, sc)
		}
	}
	c.enabled = true
	c.margin = time.Duration(margin) * time.Second
	c.cfg = slack.Config{
		SigningSecret: secret, ClientID: id, ClientSecret: csecret, BotToken: bot, APIURL: api,
		UserScopes: userScopes, AllowBots: allow, HistoryLimit: history,
		StatusEvery: max(time.Duration(progress)*time.Millisecond, time.Millisecond),
	}
	return c, nil
}

// newSlack builds the Slack provider from its settings and the gateway's
// stores.
func newSlack(c slackConfig, sessions slack.Sessions, installs slack.Installations, cfg *serveConfig, router *providers.Router, log *slog.Logger) (*slack.Provider, error) {
	sc := c.cfg
	sc.Sessions, sc.Installations, sc.Sealer, sc.Router = sessions, installs, cfg.sealer, router
	sc.MaxBody, sc.Logger = cfg.maxBody, log
	sc.RefreshMargin = c.margin
	p, err := slack.New(sc)
	if err != nil {
		return nil, fmt.Errorf("SLACK_SIGNING_SECRET: %w", err)
	}
	return p, nil
}

// checkSlackToken verifies SLACK_BOT_TOKEN before anything starts, so a
// wrong token is one line naming it.
func checkSlackToken(c slackConfig) error {
	if !c.enabled || c.cfg.BotToken == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := slack.VerifyBotToken(ctx, c.cfg.APIURL, c.cfg.BotToken); err != nil {
		return fmt.Errorf("SLACK_BOT_TOKEN: %w", err)
	}
	return nil
}
