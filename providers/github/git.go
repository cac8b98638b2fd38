package github

import (
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/bradleyfalzon/ghinstallation/v2"
	gh "github.com/google/go-github/v62/github"
	"github.com/switchboardhq/switchboard/core"
)

// gitCredentialPrefix starts the credential ids GitGrant and GrantedGit
// make: github-git:<installation>:<owner>/<repo>[,<repo>…]. Vault ids
// never look like it.
const gitCredentialPrefix = "github-git:"

// gitTokens are installation tokens narrowed to a session's repositories
// and to their contents, for the sandbox's git traffic: a session's
// sandbox can push to its own repository, not to every repository the
// App is installed on, and can do nothing else with the token.
type gitTokens struct {
	mu sync.Mutex
	m  map[string]*ghinstallation.Transport // installation:owner/repo
}

// GitGrant is what a GitHub session's sandbox may reach because of where
// the session came from: the git host (GITHUB_WEB_URL) over HTTPS, with a
// credential id GitHeader resolves. ok is false for other sessions.
func (p *Provider) GitGrant(s *core.Session) (hosts []string, credentialID string, ok bool) {
	inst, err := sessionInstallation(s)
	if err != nil {
		return nil, "", false
	}
	owner, repo, _, err := parseKey(s.Origin.Key)
	if err != nil {
		return nil, "", false
	}
	return []string{p.gitHostPort()}, gitCredentialPrefix + strconv.FormatInt(inst, 10) + ":" + owner + "/" + repo, true
}

// IsGitCredential tells the credential ids GitGrant makes.
func (p *Provider) IsGitCredential(id string) bool { return strings.HasPrefix(id, gitCredentialPrefix) }

// GitHeader is the Authorization header git sends to the git host for a
// credential id GitGrant made: the installation's token, narrowed to the
// repository, as the x-access-token basic credential GitHub takes for
// HTTPS git. Any other host fails with core.ErrForbidden.
func (p *Provider) GitHeader(ctx context.Context, id, hostport string) (name, value string, err error) {
	rest, ok := strings.CutPrefix(id, gitCredentialPrefix)
	instStr, fullRepo, ok2 := strings.Cut(rest, ":")
	inst, perr := strconv.ParseInt(instStr, 10, 64)
	owner, list, ok3 := strings.Cut(fullRepo, "/")
	repos := strings.Split(list, ",")
	if !ok || !ok2 || !ok3 || perr != nil || owner == "" || slices.Contains(repos, "") {
		return "", "", fmt.Errorf("github git credential %q: %w", id, core.ErrNotFound)
	}
	if !strings.EqualFold(hostport, p.gitHostPort()) {
		return "", "", fmt.Errorf("github git credential is for %s, not %s: %w", p.gitHostPort(), hostport, core.ErrForbidden)
	}
	tok, err := p.repoTransport(inst, owner, repos).Token(ctx)
	if err != nil {
		return "", "", fmt.Errorf("github installation %d token for %s: %w", inst, fullRepo, err)
	}
	return "Authorization", "Basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:"+tok)), nil
}

// gitHostPort is the git host as host:port.
func (p *Provider) gitHostPort() string {
	u, _ := url.Parse(p.cfg.WebURL) // checked by config
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = "443"
		if u.Scheme == "http" {
			port = "80"
		}
	}
	return net.JoinHostPort(strings.ToLower(host), port)
}

// repoTransport renews (through ghinstallation) a token of the
// installation that reaches only owner's repos.
func (p *Provider) repoTransport(inst int64, owner string, repos []string) *ghinstallation.Transport {
	k := strconv.FormatInt(inst, 10) + ":" + strings.ToLower(owner+"/"+strings.Join(repos, ","))
	p.git.mu.Lock()
	defer p.git.mu.Unlock()
	if t, ok := p.git.m[k]; ok {
		return t
	}
	t := ghinstallation.NewFromAppsTransport(p.apps, inst)
	// Git needs contents (and metadata) only: the token the proxy injects
	// cannot comment, review or touch issues, whatever else the App may.
	t.InstallationTokenOptions = &gh.InstallationTokenOptions{Repositories: repos,
		Permissions: &gh.InstallationPermissions{Contents: gh.String("write"), Metadata: gh.String("read")}}
	if p.git.m == nil {
		p.git.m = map[string]*ghinstallation.Transport{}
	}
	p.git.m[k] = t
	return t
}

// forgetGit drops an installation's repository tokens (it was removed or
// suspended).
func (p *Provider) forgetGit(inst int64) {
	prefix := strconv.FormatInt(inst, 10) + ":"
	p.git.mu.Lock()
	defer p.git.mu.Unlock()
	for k := range p.git.m {
		if strings.HasPrefix(k, prefix) {
			delete(p.git.m, k)
		}
	}
}

// cloneHint tells the model where the repository is and that git needs
// no credentials for it in the sandbox.
func (p *Provider) cloneHint(r ref) string {
	return fmt.Sprintf("The repository is %s: with a sandbox, clone and push it with git over HTTPS (the gateway authenticates; no token is needed or available), then open pull requests with the create_pull_request tool.", p.cloneURL(r.Owner, r.Repo))
}
