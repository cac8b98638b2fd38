package gitlab

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	gl "gitlab.com/gitlab-org/api/client-go"
	xoauth2 "golang.org/x/oauth2"
	"golang.org/x/sync/singleflight"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/oauth"
	"github.com/switchboardhq/switchboard/providers"
)

// modeOAuth marks an installation made through the OAuth application.
const modeOAuth = "oauth"

// DefaultScopes are what an install asks for: api (read and write issues,
// merge requests, notes, commit statuses and the repository; the tools and
// git push need it), read_user (who the installing user is: the app's
// username).
var DefaultScopes = []string{"api", "read_user"}

// ownState is the provider's OAuth tokens, its sessions' tool servers
// and what git reaches (oauthsource.go, tools.go, git.go).
type ownState struct {
	tokens *oauth.Tokens
	// renews shares a renewal after a 401 among this process's callers;
	// the store orders the replicas' (oauth.Tokens.Renew).
	renews singleflight.Group
	tools  providers.ToolCache[string]
}

// initOwn guards the default HTTP client by host (guardedTransport) and
// sets the OAuth tokens up: sealed in the installation store, renewed
// before they expire under the store's refresh lock, so that a rotating
// refresh token is spent once across replicas.
func (p *Provider) initOwn() {
	if p.cfg.HTTPClient.Transport == nil {
		c := *p.cfg.HTTPClient
		c.Transport = guardedTransport(p.host(), p.cfg.AllowedHosts)
		p.cfg.HTTPClient = &c
	}
	p.own.tokens = &oauth.Tokens{Store: p.cfg.Installations, Sealer: p.cfg.Sealer, Refresh: p.refresh, Now: p.cfg.Now}
}

// oauthConfig is the OAuth application's client of the instance.
func (p *Provider) oauthConfig(redirectURI string) *xoauth2.Config {
	return &xoauth2.Config{
		ClientID: p.cfg.ClientID, ClientSecret: p.cfg.ClientSecret, RedirectURL: redirectURI, Scopes: DefaultScopes,
		Endpoint: xoauth2.Endpoint{AuthURL: p.cfg.URL + "/oauth/authorize", TokenURL: p.cfg.URL + "/oauth/token", AuthStyle: xoauth2.AuthStyleInParams},
	}
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

// refresh renews the access token with the refresh token. GitLab rotates
// the refresh token and revokes the one spent: oauth.Tokens runs refresh
// under the store's refresh lock with the tokens stored last, so a
// refresh token another caller or replica spent is never presented.
func (p *Provider) refresh(ctx context.Context, in *core.Installation, old oauth.TokenSet) (oauth.TokenSet, error) {
	src := p.oauthConfig("").TokenSource(p.oauthContext(ctx), &xoauth2.Token{RefreshToken: old.RefreshToken, Expiry: time.Unix(1, 0)})
	tok, err := src.Token()
	if err != nil {
		return oauth.TokenSet{}, fmt.Errorf("gitlab token refresh: %w", err)
	}
	ts := tokenSet(tok, old)
	p.log.Info("gitlab token refreshed", "installation_id", in.ID, "expires_at", ts.Expiry)
	return ts, nil
}

// installationAuth authenticates the REST calls of an installation made
// through the OAuth application: its access token, renewed with the
// rotating refresh token once across replicas.
func (p *Provider) installationAuth(_ context.Context, in *core.Installation) (gl.AuthSource, error) {
	if p.cfg.ClientID == "" {
		return nil, fmt.Errorf("installation %s: %w", in.ID, errNoOAuth)
	}
	return oauthAuth{p: p, in: in}, nil
}

// oauthAuth is an installation's bearer token for the REST client.
type oauthAuth struct {
	p  *Provider
	in *core.Installation
}

func (oauthAuth) Init(context.Context, *gl.Client) error { return nil }

func (a oauthAuth) Header(ctx context.Context) (string, string, error) {
	ts, err := a.p.own.tokens.Get(ctx, a.in)
	if err != nil {
		return "", "", err
	}
	return "Authorization", "Bearer " + ts.AccessToken, nil
}

// renewOnRefusal is a client interceptor of an OAuth installation: when
// GitLab refuses its access token (revoked or expired early: 401), the
// tokens are renewed once (unless another caller did already) and the
// request is sent again with the new one.
func (p *Provider) renewOnRefusal(in *core.Installation) gl.Interceptor {
	return func(next http.RoundTripper) http.RoundTripper {
		if next == nil {
			next = http.DefaultTransport
		}
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			resp, err := next.RoundTrip(req)
			refused, _ := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
			if err != nil || resp.StatusCode != http.StatusUnauthorized || refused == "" || (req.Body != nil && req.GetBody == nil) {
				return resp, err
			}
			ts, rerr := p.renew(req.Context(), in, refused)
			if rerr != nil || ts.AccessToken == refused {
				if rerr != nil {
					p.log.Warn("gitlab token refused and could not be renewed", "installation_id", in.ID, "err", rerr)
				}
				return resp, nil // the 401 stands
			}
			resp.Body.Close()
			retry := req.Clone(req.Context())
			if req.GetBody != nil {
				if retry.Body, err = req.GetBody(); err != nil {
					return nil, err
				}
			}
			retry.Header.Set("Authorization", "Bearer "+ts.AccessToken)
			return next.RoundTrip(retry)
		})
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// renew refreshes an installation's tokens now, unless another caller
// (in this process or another replica) already replaced the refused
// access token.
func (p *Provider) renew(ctx context.Context, in *core.Installation, refused string) (oauth.TokenSet, error) {
	v, err, _ := p.own.renews.Do(in.ID, func() (any, error) {
		return p.own.tokens.Renew(context.WithoutCancel(ctx), in, func(cur oauth.TokenSet) bool {
			return cur.AccessToken == refused
		})
	})
	return v.(oauth.TokenSet), err
}

// oauthInstallation is the OAuth installation of the instance at
// instanceURL: the gateway's instance (SWITCHBOARD_GITLAB_URL) has one,
// made by its install flow; any other instance has none.
func (p *Provider) oauthInstallation(ctx context.Context, instanceURL string) (*core.Installation, error) {
	if p.cfg.ClientID == "" {
		return nil, fmt.Errorf("instance %s: %w: %w", instanceURL, errNoOAuth, core.ErrNotFound)
	}
	host := p.host()
	if instanceURL != "" {
		u, err := url.Parse(instanceURL)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("instance %q: %w", instanceURL, core.ErrNotFound)
		}
		host = u.Host
	}
	if !strings.EqualFold(host, p.host()) {
		return nil, fmt.Errorf("instance %s is not %s, the gateway's: %w", host, p.host(), core.ErrNotFound)
	}
	in, err := p.cfg.Installations.FindInstallation(ctx, Name, oauthExternalID(host))
	if errors.Is(err, core.ErrNotFound) {
		return nil, fmt.Errorf("gitlab instance %s is not installed (open /oauth/gitlab/install): %w", host, core.ErrNotFound)
	}
	return in, err
}

// oauthExternalID names an instance's OAuth installation: its host.
func oauthExternalID(host string) string { return strings.ToLower(host) }

// startOAuth learns, at start, the app's username from the instance's
// OAuth installation when the settings leave it out: the user who
// installed the application (a gateway restarted after the install
// knows whom mentions name). Nothing installed yet: the install teaches
// it, and each webhook asks again until then (the install may have been
// another replica's).
func (p *Provider) startOAuth(ctx context.Context) error {
	if p.cfg.ClientID == "" || p.appUser() != "" {
		return nil
	}
	in, err := p.oauthInstallation(ctx, "")
	if errors.Is(err, core.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("gitlab: read the instance's installation: %w", err)
	}
	p.mu.Lock()
	if p.username == "" {
		p.username = in.Metadata["username"]
	}
	p.mu.Unlock()
	return nil
}
