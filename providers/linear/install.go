package linear

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/oauth"
	xoauth2 "golang.org/x/oauth2"
)

// Installer is the OAuth install flow: the app installed into one
// organization, acting as its own app user (actor=app).
func (p *Provider) Installer() oauth.Installer { return installer{p} }

type installer struct{ p *Provider }

// oauthConfig is the app's OAuth client against the token endpoint.
func (p *Provider) oauthConfig(redirectURI string) *xoauth2.Config {
	return &xoauth2.Config{
		ClientID: p.cfg.ClientID, ClientSecret: p.cfg.ClientSecret, RedirectURL: redirectURI, Scopes: p.cfg.Scopes,
		Endpoint: xoauth2.Endpoint{AuthURL: p.cfg.AuthorizeURL, TokenURL: p.cfg.APIURL + "/oauth/token", AuthStyle: xoauth2.AuthStyleInParams},
	}
}

// actorApp installs the app as its own user.
const actorApp = "app"

// AuthorizeURL is Linear's consent page, asking to install as the app.
func (i installer) AuthorizeURL(state, redirectURI string) string {
	q := url.Values{"client_id": {i.p.cfg.ClientID}, "redirect_uri": {redirectURI}, "response_type": {"code"},
		"scope": {strings.Join(i.p.cfg.Scopes, ",")}, "actor": {actorApp}, "state": {state}}
	sep := "?"
	if strings.Contains(i.p.cfg.AuthorizeURL, "?") {
		sep = "&"
	}
	return i.p.cfg.AuthorizeURL + sep + q.Encode()
}

// Complete exchanges the code at <API>/oauth/token, learns the
// organization and the app user (viewer), and stores the organization's
// installation with its tokens sealed.
func (i installer) Complete(ctx context.Context, code, redirectURI string) (*core.Installation, error) {
	p := i.p
	tok, err := p.oauthConfig(redirectURI).Exchange(p.oauthContext(ctx), code)
	if err != nil {
		return nil, fmt.Errorf("linear token exchange: %w", err)
	}
	ts := tokenSet(tok, oauth.TokenSet{})
	// The organization is learned from the token itself (viewer), before
	// an installation exists to act as.
	v, err := p.newAPIWithToken(ts.AccessToken).viewer(ctx)
	if err != nil {
		return nil, fmt.Errorf("linear viewer after install: %w", err)
	}
	if v.OrgID == "" || v.AppUserID == "" {
		return nil, errors.New("linear viewer after install named no organization or app user")
	}
	scope, _ := tok.Extra("scope").(string)
	in := &core.Installation{Provider: Name, ExternalID: v.OrgID, Name: v.OrgName, Scopes: splitScopes(scope),
		Metadata: map[string]string{"app_user_id": v.AppUserID, "app_user_name": v.AppUserName, "organization_id": v.OrgID, "url_key": v.URLKey}}
	if len(in.Scopes) == 0 {
		in.Scopes = p.cfg.Scopes
	}
	sealed, exp, err := p.tokens.Seal(in, ts)
	if err != nil {
		return nil, err
	}
	saved, err := p.cfg.Installations.SaveInstallation(ctx, in, sealed, exp)
	if err != nil {
		return nil, err
	}
	p.forgetTools(saved.ID)
	return saved, nil
}

// newAPIWithToken is a platform client with a bare token (before the
// installation exists).
func (p *Provider) newAPIWithToken(token string) platform {
	c := *p.cfg.HTTPClient
	c.Transport = bearer{token: token, base: p.cfg.HTTPClient.Transport}
	return &gql{p: p, c: newGraphQL(p.cfg.APIURL, &c)}
}

type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	base := b.base
	if base == nil {
		base = http.DefaultTransport
	}
	return base.RoundTrip(r)
}

// oauthContext makes x/oauth2 use the provider's HTTP client.
func (p *Provider) oauthContext(ctx context.Context) context.Context {
	return context.WithValue(ctx, xoauth2.HTTPClient, p.cfg.HTTPClient)
}

// tokenSet converts an oauth2 token; old fills what the answer omits.
func tokenSet(tok *xoauth2.Token, old oauth.TokenSet) oauth.TokenSet {
	ts := oauth.TokenSet{AccessToken: tok.AccessToken, RefreshToken: tok.RefreshToken, Expiry: tok.Expiry, Extra: old.Extra}
	if ts.RefreshToken == "" {
		ts.RefreshToken = old.RefreshToken
	}
	return ts
}

// refresh renews the access token with the refresh token; Linear rotates
// the refresh token, and the new one is what oauth.Tokens stores, sealed.
// Linear refuses a refresh token presented twice: oauth.Tokens runs
// refresh under the store's refresh lock with the tokens stored last, so
// a refresh token spent by another caller or replica is never presented.
func (p *Provider) refresh(ctx context.Context, in *core.Installation, old oauth.TokenSet) (oauth.TokenSet, error) {
	src := p.oauthConfig("").TokenSource(p.oauthContext(ctx), &xoauth2.Token{RefreshToken: old.RefreshToken, Expiry: time.Unix(1, 0)})
	tok, err := src.Token()
	if err != nil {
		return oauth.TokenSet{}, err
	}
	ts := tokenSet(tok, old)
	p.log.Info("linear token refreshed", "installation_id", in.ID, "expires_at", ts.Expiry)
	return ts, nil
}

// Revoke revokes the installation's token at Linear (POST /oauth/revoke).
func (p *Provider) Revoke(ctx context.Context, in *core.Installation) error {
	ts, err := p.tokens.Get(ctx, in)
	if errors.Is(err, oauth.ErrNoToken) {
		return nil
	}
	if err != nil {
		return err
	}
	form := url.Values{"token": {ts.AccessToken}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.cfg.APIURL+"/oauth/revoke", strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer "+ts.AccessToken)
	resp, err := p.cfg.HTTPClient.Do(req)
	if err != nil {
		return fmt.Errorf("linear revoke: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode >= 300 && resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusBadRequest {
		return fmt.Errorf("linear revoke: status %d", resp.StatusCode)
	}
	return nil
}

// forget drops an installation's tokens (the app was revoked).
func (p *Provider) forget(ctx context.Context, in *core.Installation) error {
	p.forgetTools(in.ID)
	return p.cfg.Installations.ForgetInstallationTokens(ctx, in.ID)
}

func splitScopes(s string) []string {
	var out []string
	for _, v := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}
