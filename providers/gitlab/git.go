package gitlab

import (
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/providers"
)

var _ providers.GitHost = (*Provider)(nil)

// gitCredentialPrefix starts the credential ids GitGrant makes:
// gitlab-git:<group/…/project>. Vault ids never look like it.
const gitCredentialPrefix = "gitlab-git:"

// GitGrant is what a GitLab session's sandbox may reach: the instance's
// host over HTTPS (or HTTP, as SWITCHBOARD_GITLAB_URL says), with a
// credential id GitHeader resolves. ok is false for other sessions.
func (p *Provider) GitGrant(s *core.Session) (hosts []string, credentialID string, ok bool) {
	if s.Origin == nil || s.Origin.Provider != Name {
		return nil, "", false
	}
	project, _, _, err := parseKey(s.Origin.Key)
	if err != nil {
		return nil, "", false
	}
	return []string{p.gitHostPort()}, gitCredentialPrefix + project, true
}

// IsGitCredential tells the credential ids GitGrant makes.
func (p *Provider) IsGitCredential(id string) bool { return strings.HasPrefix(id, gitCredentialPrefix) }

// GitHeader is the Authorization header git sends to the instance for a
// credential id GitGrant made: the installation's token (the project
// access token, or the OAuth access token renewed as it expires) as the
// basic credential GitLab takes for HTTPS git (user oauth2). Any other
// host fails with core.ErrForbidden.
func (p *Provider) GitHeader(ctx context.Context, id, hostport string) (name, value string, err error) {
	project, ok := strings.CutPrefix(id, gitCredentialPrefix)
	if !ok || project == "" {
		return "", "", fmt.Errorf("gitlab git credential %q: %w", id, core.ErrNotFound)
	}
	if !strings.EqualFold(hostport, p.gitHostPort()) {
		return "", "", fmt.Errorf("gitlab git credential is for %s, not %s: %w", p.gitHostPort(), hostport, core.ErrForbidden)
	}
	in, err := p.installationFor(ctx, "", project)
	if err != nil {
		return "", "", fmt.Errorf("gitlab git credential for %s: %w", project, err)
	}
	token := p.cfg.Token
	if in.Metadata["mode"] == modeOAuth {
		ts, err := p.own.tokens.Get(ctx, in)
		if err != nil {
			return "", "", fmt.Errorf("gitlab installation %s token: %w", in.ID, err)
		}
		token = ts.AccessToken
	}
	if token == "" {
		return "", "", fmt.Errorf("gitlab installation %s has no token: %w", in.ID, core.ErrNotFound)
	}
	return "Authorization", "Basic " + base64.StdEncoding.EncodeToString([]byte("oauth2:"+token)), nil
}

// gitHostPort is the instance's host as host:port.
func (p *Provider) gitHostPort() string {
	u, _ := url.Parse(p.cfg.URL) // checked by New
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = "443"
		if u.Scheme == "http" {
			port = "80"
		}
	}
	return net.JoinHostPort(strings.ToLower(host), port)
}
