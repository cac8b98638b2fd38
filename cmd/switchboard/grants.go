package main

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/providers"
	"github.com/switchboardhq/switchboard/providers/github"
	"github.com/switchboardhq/switchboard/sandbox/egress"
)

// platformGrants lets a platform session's sandbox reach its repository
// through the egress proxy: the GitHub host with an installation token
// narrowed to the session's repository, injected by the proxy, never given
// to the sandbox. It is also the proxy's credential source: the ids it
// grants resolve at the provider, every other id in the vault. The
// providers are built after the sandbox backend, so they are bound late.
type platformGrants struct {
	sessions interface {
		GetSession(ctx context.Context, id string) (*core.Session, error)
	}
	vault  core.CredentialSource
	github atomic.Pointer[github.Provider]
}

var _ core.CredentialSource = (*platformGrants)(nil)

// bind attaches the providers that grant access.
func (g *platformGrants) bind(gw *providers.Set) {
	for _, p := range gw.List() {
		if p, ok := p.(*github.Provider); ok {
			g.github.Store(p)
		}
	}
}

// SessionGrant is the repository access of the session's origin.
func (g *platformGrants) SessionGrant(ctx context.Context, sessionID string) (egress.Policy, error) {
	p := g.github.Load()
	if p == nil {
		return egress.Policy{}, nil
	}
	s, err := g.sessions.GetSession(ctx, sessionID)
	if err != nil {
		return egress.Policy{}, err
	}
	hosts, cred, ok := p.GitGrant(s)
	if !ok {
		return egress.Policy{}, nil
	}
	return egress.Policy{Hosts: hosts, Credentials: []string{cred}}, nil
}

func (g *platformGrants) Header(ctx context.Context, id, host string) (string, string, error) {
	if github.IsGitCredential(id) {
		p := g.github.Load()
		if p == nil {
			return "", "", fmt.Errorf("credential %s: github is not configured: %w", id, core.ErrNotFound)
		}
		return p.GitHeader(ctx, id, host)
	}
	return g.vault.Header(ctx, id, host)
}

func (g *platformGrants) Token(ctx context.Context, id string) (string, error) {
	if github.IsGitCredential(id) {
		return "", fmt.Errorf("credential %s is injected by the egress proxy only: %w", id, core.ErrForbidden)
	}
	return g.vault.Token(ctx, id)
}

func (g *platformGrants) Refresh(ctx context.Context, id string) error {
	if github.IsGitCredential(id) {
		// ghinstallation renews installation tokens before they expire.
		return nil
	}
	return g.vault.Refresh(ctx, id)
}
