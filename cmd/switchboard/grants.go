package main

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sandbox"
	"github.com/switchboardhq/switchboard/sandbox/egress"
)

// platformGrants lets a platform session's sandbox reach its repository
// through the egress proxy: the git host with a token narrowed to the
// session's repository, injected by the proxy, never given to the sandbox.
// It is also the proxy's credential source: the ids a granter made
// resolve at that granter, every other id in the vault. The providers are
// built after the sandbox backend, so they are bound late.
type platformGrants struct {
	sessions interface {
		GetSession(ctx context.Context, id string) (*core.Session, error)
	}
	vault    core.CredentialSource
	granters atomic.Pointer[[]sandbox.GitGranter]
}

var _ core.CredentialSource = (*platformGrants)(nil)

// bind attaches the providers that grant access.
func (g *platformGrants) bind(gw *gateway) {
	var list []sandbox.GitGranter
	for _, p := range gw.list {
		if p, ok := p.(sandbox.GitGranter); ok {
			list = append(list, p)
		}
	}
	g.granters.Store(&list)
}

func (g *platformGrants) list() []sandbox.GitGranter {
	if l := g.granters.Load(); l != nil {
		return *l
	}
	return nil
}

// SessionGrant is the repository access of the session's origin.
func (g *platformGrants) SessionGrant(ctx context.Context, sessionID string) (egress.Policy, error) {
	list := g.list()
	if len(list) == 0 {
		return egress.Policy{}, nil
	}
	s, err := g.sessions.GetSession(ctx, sessionID)
	if err != nil {
		return egress.Policy{}, err
	}
	var p egress.Policy
	for _, gr := range list {
		if hosts, cred, ok := gr.GitGrant(s); ok {
			p.Hosts = append(p.Hosts, hosts...)
			p.Credentials = append(p.Credentials, cred)
		}
	}
	return p, nil
}

func (g *platformGrants) Header(ctx context.Context, id, host string) (string, string, error) {
	if gr := g.granterOf(id); gr != nil {
		return gr.GitHeader(ctx, id, host)
	}
	return g.vault.Header(ctx, id, host)
}

func (g *platformGrants) Token(ctx context.Context, id string) (string, error) {
	if g.granterOf(id) != nil {
		return "", fmt.Errorf("credential %s is injected by the egress proxy only: %w", id, core.ErrForbidden)
	}
	return g.vault.Token(ctx, id)
}

func (g *platformGrants) Refresh(ctx context.Context, id string) error {
	if g.granterOf(id) != nil {
		// ghinstallation renews installation tokens before they expire.
		return nil
	}
	return g.vault.Refresh(ctx, id)
}

// granterOf is the granter that made credential id, nil for a vault id.
func (g *platformGrants) granterOf(id string) sandbox.GitGranter {
	for _, gr := range g.list() {
		if gr.IsGitCredential(id) {
			return gr
		}
	}
	return nil
}
