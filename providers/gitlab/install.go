package gitlab

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	gl "gitlab.com/gitlab-org/api/client-go"
	xoauth2 "golang.org/x/oauth2"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/oauth"
	"github.com/switchboardhq/switchboard/providers"
)

var (
	_ providers.InstallFlow  = (*Provider)(nil)
	_ providers.Revoker      = (*Provider)(nil)
	_ providers.KeyInstaller = (*Provider)(nil)
)

// Installer is the OAuth install flow of the instance, or nil in
// single-project mode (the project's token needs none).
func (p *Provider) Installer() oauth.Installer {
	if p.cfg.ClientID == "" || p.cfg.Token != "" {
		return nil
	}
	return installer{p}
}

// installer authorizes the OAuth application with PKCE: the verifier is
// derived from the signed, single-use state and the application's secret,
// so the gateway keeps nothing between the two legs and a code stolen on
// the way back is useless without the secret.
type installer struct{ p *Provider }

var _ oauth.CallbackInstaller = installer{}

// verifier is the PKCE code verifier of an install's state (43 characters
// of base64url, as RFC 7636 wants).
func (i installer) verifier(state string) string {
	m := hmac.New(sha256.New, []byte(i.p.cfg.ClientSecret))
	m.Write([]byte("gitlab pkce\x00" + state))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// AuthorizeURL is the instance's consent page (/oauth/authorize).
func (i installer) AuthorizeURL(state, redirectURI string) string {
	return i.p.oauthConfig(redirectURI).AuthCodeURL(state, xoauth2.S256ChallengeOption(i.verifier(state)))
}

// Complete is never reached: the flow hands the callback's query to
// CompleteCallback, which needs the state for the verifier.
func (i installer) Complete(context.Context, string, string) (*core.Installation, error) {
	return nil, fmt.Errorf("gitlab install: the callback's state is required: %w", core.ErrInvalid)
}

// CompleteCallback exchanges the code at /oauth/token, learns who
// authorized (GET /user: the app's user) and stores the instance's
// installation with its tokens sealed. Installing again renews them, by
// the same user only: the install link is public, and whoever consents
// becomes the user the gateway acts as (checkInstaller).
func (i installer) CompleteCallback(ctx context.Context, q url.Values, redirectURI string) (*core.Installation, error) {
	p := i.p
	code, state := q.Get("code"), q.Get("state")
	if code == "" {
		return nil, fmt.Errorf("the callback carries no code: %w", core.ErrInvalid)
	}
	tok, err := p.oauthConfig(redirectURI).Exchange(p.oauthContext(ctx), code, xoauth2.VerifierOption(i.verifier(state)))
	if err != nil {
		return nil, fmt.Errorf("gitlab token exchange: %w", err)
	}
	ts := tokenSet(tok, oauth.TokenSet{})
	c, err := gl.NewAuthSourceClient(gl.OAuthTokenSource{TokenSource: xoauth2.StaticTokenSource(tok)}, gl.WithBaseURL(p.cfg.URL+"/api/v4"), gl.WithHTTPClient(p.cfg.HTTPClient), gl.WithoutRetries())
	if err != nil {
		return nil, fmt.Errorf("gitlab client: %w", err)
	}
	u, _, err := c.Users.CurrentUser(gl.WithContext(ctx))
	if err != nil {
		return nil, fmt.Errorf("gitlab user after install: %w", err)
	}
	host := p.host()
	if err := p.checkInstaller(ctx, host, u); err != nil {
		return nil, err
	}
	in := &core.Installation{Provider: Name, ExternalID: oauthExternalID(host), Name: host, Scopes: DefaultScopes,
		Metadata: map[string]string{"mode": modeOAuth, "url": p.cfg.URL, "user_id": strconv.FormatInt(u.ID, 10), "username": u.Username}}
	sealed, exp, err := p.own.tokens.Seal(in, ts)
	if err != nil {
		return nil, err
	}
	saved, err := p.cfg.Installations.SaveInstallation(ctx, in, sealed, exp)
	if err != nil {
		return nil, err
	}
	p.own.tools.Forget(func(k string) bool { return k == saved.ID })
	p.mu.Lock()
	if p.username == "" {
		p.username = u.Username
	}
	p.mu.Unlock()
	return saved, nil
}

// checkInstaller refuses an install by a user other than the app's: the
// one the settings name (SWITCHBOARD_GITLAB_USERNAME), or else the one
// who installed first. Anyone can open the install link; without this,
// anyone who can log in to the instance would replace the app's tokens
// with their own.
func (p *Provider) checkInstaller(ctx context.Context, host string, u *gl.User) error {
	if want := p.cfg.Username; want != "" && !strings.EqualFold(want, u.Username) {
		return fmt.Errorf("GitLab user %s authorized, but the gateway acts as %s (SWITCHBOARD_GITLAB_USERNAME): log in to %s as %s and install again: %w",
			u.Username, want, host, want, core.ErrInvalid)
	}
	old, err := p.cfg.Installations.FindInstallation(ctx, Name, oauthExternalID(host))
	if errors.Is(err, core.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("gitlab install: read the instance's installation: %w", err)
	}
	if id := strconv.FormatInt(u.ID, 10); old.Metadata["user_id"] != "" && old.Metadata["user_id"] != id {
		return fmt.Errorf("%s is already installed by GitLab user %s; GitLab user %s may not replace it (uninstall it first, or log in as %s): %w",
			host, old.Metadata["username"], u.Username, old.Metadata["username"], core.ErrInvalid)
	}
	return nil
}
