package slack

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	slackapi "github.com/slack-go/slack"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/oauth"
)

// Installer is the OAuth v2 install flow.
func (p *Provider) Installer() oauth.Installer {
	if p.cfg.ClientID == "" {
		return nil // single-workspace mode: nothing to install
	}
	return installer{p}
}

type installer struct{ p *Provider }

// AuthorizeURL is Slack's consent page: oauth/v2/authorize beside the
// Web API base (https://slack.com/oauth/v2/authorize in production).
func (i installer) AuthorizeURL(state, redirectURI string) string {
	base, err := url.Parse(i.p.cfg.APIURL)
	if err != nil {
		base = &url.URL{Scheme: "https", Host: "slack.com", Path: "/api/"}
	}
	u := base.ResolveReference(&url.URL{Path: "../oauth/v2/authorize"})
	q := url.Values{"client_id": {i.p.cfg.ClientID}, "scope": {strings.Join(i.p.cfg.Scopes, ",")},
		"redirect_uri": {redirectURI}, "state": {state}}
	if len(i.p.cfg.UserScopes) > 0 {
		q.Set("user_scope", strings.Join(i.p.cfg.UserScopes, ","))
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// Complete exchanges the code (oauth.v2.access), learns the bot's ids and
// the workspace URL (auth.test), and stores the installation with its
// tokens sealed. A rotating token (token rotation on in the app) comes
// with a refresh token and an expiry, and is renewed before it expires.
func (i installer) Complete(ctx context.Context, code, redirectURI string) (*core.Installation, error) {
	p := i.p
	resp, err := slackapi.GetOAuthV2ResponseContext(ctx, p.cfg.HTTPClient, p.cfg.ClientID, p.cfg.ClientSecret, code, redirectURI, slackapi.OAuthOptionAPIURL(p.cfg.APIURL))
	if err != nil {
		return nil, fmt.Errorf("oauth.v2.access: %w", err)
	}
	if resp.AccessToken == "" || resp.TokenType != "bot" {
		return nil, fmt.Errorf("oauth.v2.access gave no bot token (token_type %q)", resp.TokenType)
	}
	ts := oauth.TokenSet{AccessToken: resp.AccessToken, RefreshToken: resp.RefreshToken}
	if resp.ExpiresIn > 0 {
		ts.Expiry = time.Now().Add(time.Duration(resp.ExpiresIn) * time.Second)
	}
	if resp.AuthedUser.AccessToken != "" {
		ts.Extra = map[string]string{"user_token": resp.AuthedUser.AccessToken, "user_scope": resp.AuthedUser.Scope}
	}
	in := &core.Installation{Provider: Name, ExternalID: resp.Team.ID, Name: resp.Team.Name,
		Scopes: splitScopes(resp.Scope),
		Metadata: map[string]string{"bot_user_id": resp.BotUserID, "app_id": resp.AppID, "team_id": resp.Team.ID,
			"token_rotation": fmt.Sprint(resp.RefreshToken != "")}}
	if resp.IsEnterpriseInstall {
		in.ExternalID, in.Name = resp.Enterprise.ID, resp.Enterprise.Name
	}
	if resp.Enterprise.ID != "" {
		in.Metadata["enterprise_id"] = resp.Enterprise.ID
	}
	if ts.Extra["user_scope"] != "" {
		in.Metadata["user_scopes"] = ts.Extra["user_scope"]
	}
	if at, err := p.newAPI(ts.AccessToken).authTest(ctx); err == nil {
		in.Metadata["bot_id"], in.Metadata["url"] = at.BotID, at.URL
	} else {
		p.log.Warn("auth.test after install failed; permalinks and the bot id check wait for the next install", "team_id", resp.Team.ID, "err", err)
	}
	return p.save(ctx, in, ts)
}

func (p *Provider) save(ctx context.Context, in *core.Installation, ts oauth.TokenSet) (*core.Installation, error) {
	sealed, exp, err := p.tokens.Seal(in, ts)
	if err != nil {
		return nil, err
	}
	return p.cfg.Installations.SaveInstallation(ctx, in, sealed, exp)
}

func splitScopes(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

func (a *api) authTest(ctx context.Context) (*slackapi.AuthTestResponse, error) {
	var resp *slackapi.AuthTestResponse
	err := a.do(ctx, "auth.test", func(ctx context.Context) error {
		var err error
		resp, err = a.c.AuthTestContext(ctx)
		return err
	})
	return resp, err
}

// refresh renews a rotating bot token (oauth.v2.access with
// grant_type=refresh_token).
func (p *Provider) refresh(ctx context.Context, _ *core.Installation, old oauth.TokenSet) (oauth.TokenSet, error) {
	resp, err := slackapi.RefreshOAuthV2TokenContext(ctx, p.cfg.HTTPClient, p.cfg.ClientID, p.cfg.ClientSecret, old.RefreshToken, slackapi.OAuthOptionAPIURL(p.cfg.APIURL))
	if err != nil {
		return oauth.TokenSet{}, err
	}
	ts := oauth.TokenSet{AccessToken: resp.AccessToken, RefreshToken: resp.RefreshToken, Extra: old.Extra}
	if resp.ExpiresIn > 0 {
		ts.Expiry = time.Now().Add(time.Duration(resp.ExpiresIn) * time.Second)
	}
	p.log.Info("slack token refreshed", "expires_in", resp.ExpiresIn)
	return ts, nil
}

// Revoke revokes the installation's tokens at Slack (auth.revoke).
func (p *Provider) Revoke(ctx context.Context, in *core.Installation) error {
	ts, err := p.tokens.Get(ctx, in)
	if errors.Is(err, oauth.ErrNoToken) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, tok := range []string{ts.AccessToken, ts.Extra["user_token"]} {
		if tok == "" {
			continue
		}
		a := p.newAPI(tok)
		if err := a.do(ctx, "auth.revoke", func(ctx context.Context) error {
			_, err := a.c.SendAuthRevokeContext(ctx, tok)
			return err
		}); err != nil && slackError(err) != "token_revoked" && slackError(err) != "invalid_auth" {
			return fmt.Errorf("auth.revoke: %w", err)
		}
	}
	return nil
}

// Start learns the team of SLACK_BOT_TOKEN (auth.test) in single-workspace
// mode and records its installation, so it can be bound and restricted
// like an installed one.
func (p *Provider) Start(ctx context.Context) error {
	if err := p.startBot(ctx); err != nil {
		return err
	}
	if p.cfg.AppToken != "" {
		p.socket.start(p.runSocket)
	}
	return nil
}

// startBot learns the team of SLACK_BOT_TOKEN and records its
// installation; nothing without one.
func (p *Provider) startBot(ctx context.Context) error {
	if p.cfg.BotToken == "" {
		return nil
	}
	at, err := p.newAPI(p.cfg.BotToken).authTest(ctx)
	if err != nil {
		return fmt.Errorf("SLACK_BOT_TOKEN: auth.test: %w", err)
	}
	if at.BotID == "" {
		return fmt.Errorf("SLACK_BOT_TOKEN: auth.test says it is not a bot token (user %s)", at.UserID)
	}
	in := &core.Installation{Provider: Name, ExternalID: at.TeamID, Name: at.Team,
		Metadata: map[string]string{"bot_user_id": at.UserID, "bot_id": at.BotID, "url": at.URL, "team_id": at.TeamID, "mode": "bot_token"}}
	if at.EnterpriseID != "" {
		in.Metadata["enterprise_id"] = at.EnterpriseID
	}
	if _, err := p.save(ctx, in, oauth.TokenSet{AccessToken: p.cfg.BotToken}); err != nil {
		return fmt.Errorf("record the slack installation: %w", err)
	}
	p.single = at.TeamID
	p.log.Info("slack single-workspace mode", "team_id", at.TeamID, "team", at.Team)
	return nil
}

// forget drops an installation's tokens (app_uninstalled, tokens_revoked).
func (p *Provider) forget(ctx context.Context, in *core.Installation) error {
	p.tools.Forget(func(k toolKey) bool { return k.installation == in.ID })
	return p.cfg.Installations.ForgetInstallationTokens(ctx, in.ID)
}

// VerifyBotToken checks a single-workspace bot token with auth.test, so a
// wrong token stops the gateway at start with a clear message.
func VerifyBotToken(ctx context.Context, apiURL, token string) error {
	c := slackapi.New(token, slackapi.OptionAPIURL(apiURL), slackapi.OptionHTTPClient(&http.Client{Timeout: 15 * time.Second}))
	at, err := c.AuthTestContext(ctx)
	if err != nil {
		return fmt.Errorf("auth.test: %w", err)
	}
	if at.BotID == "" {
		return fmt.Errorf("auth.test says user %s is not a bot", at.UserID)
	}
	return nil
}
