package github

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// Repository is the repository of the issue or pull request a session
// was called on, cloned into its sandbox before the first turn: the
// default branch for an issue, the base branch for a pull request, whose
// instructions are the repository's and not the head's (a fork's head
// cannot bring instructions of its own). nil for a session from
// elsewhere.
func (p *Provider) Repository(ctx context.Context, s *core.Session) (*core.Repository, error) {
	if s.Origin == nil || s.Origin.Provider != Name {
		return nil, nil
	}
	owner, repo, number, err := parseKey(s.Origin.Key)
	if err != nil {
		return nil, err
	}
	r := &core.Repository{FullName: owner + "/" + repo, CloneURL: p.cloneURL(owner, repo), Dir: repo}
	if !isPullURL(s.Origin.URL, number) {
		return r, nil
	}
	inst, err := sessionInstallation(s)
	if err != nil {
		return nil, err
	}
	pr, _, err := p.client(inst).PullRequests.Get(ctx, owner, repo, number)
	if err != nil {
		return nil, fmt.Errorf("github pull request %s/%s#%d: %w", owner, repo, number, err)
	}
	r.Branch = pr.GetBase().GetRef()
	return r, nil
}

// isPullURL tells a pull request's session from an issue's by the URL
// the session was started with (see store): both share the key's form.
func isPullURL(u string, number int) bool {
	return strings.HasSuffix(u, "/pull/"+strconv.Itoa(number))
}

// cloneURL is the HTTPS URL git clones owner/repo from.
func (p *Provider) cloneURL(owner, repo string) string {
	return p.cfg.WebURL + "/" + owner + "/" + repo + ".git"
}
