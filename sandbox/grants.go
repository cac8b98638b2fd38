package sandbox

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sandbox/egress"
)

// GitGranter grants sessions' sandboxes repositories on git hosts (the
// gateway's providers, whose GitHub one hosts them): their sandboxes reach
// the git host through the egress proxy with a credential the platform
// resolves itself, narrowed to the session's repositories, so that
// neither the vault nor the sandbox ever holds it.
type GitGranter interface {
	// GitGrant is what the session's sandbox may reach because of where
	// the session came from, or the repositories its agent was granted:
	// hosts (host:port) and the credential id the proxy injects there. ok
	// is false for a session granted nothing.
	GitGrant(ctx context.Context, s *core.Session) (hosts []string, credentialID string, ok bool)
	// IsGitCredential tells the credential ids GitGrant makes; no vault id
	// looks like one.
	IsGitCredential(id string) bool
	// GitHeader is the header the proxy injects toward hostport for a
	// credential id GitGrant made.
	GitHeader(ctx context.Context, id, hostport string) (name, value string, err error)
}

// sessionGetter reads the session whose origin decides its grants, and
// the agent whose model key it may be granted.
type sessionGetter interface {
	GetSession(ctx context.Context, id string) (*core.Session, error)
	GetAgentVersion(ctx context.Context, id string, version int) (*core.Agent, error)
	GetCredential(ctx context.Context, id string) (*core.Credential, []byte, error)
}

// grantSource is the proxy's grant source and its credential source
// at once: the ids a granter made resolve at that granter, every other id
// in the vault.
type grantSource struct {
	sessions sessionGetter
	granters []GitGranter
	vault    core.CredentialSource
	// models grants ACP agents their model keys (the gateway runs them).
	models bool
	log    *slog.Logger
}

var (
	_ core.CredentialSource = (*grantSource)(nil)
	_ GrantSource           = (*grantSource)(nil)
)

// SessionGrant is the repository access of the session's origin, and
// its ACP agent's model vendor with the agent's key (metered).
func (g *grantSource) SessionGrant(ctx context.Context, sessionID string) (egress.Policy, error) {
	if len(g.granters) == 0 && !g.models {
		return egress.Policy{}, nil
	}
	s, err := g.sessions.GetSession(ctx, sessionID)
	if err != nil {
		return egress.Policy{}, err
	}
	var p egress.Policy
	for _, gr := range g.granters {
		if hosts, cred, ok := gr.GitGrant(ctx, s); ok {
			p.Hosts = append(p.Hosts, hosts...)
			p.Credentials = append(p.Credentials, cred)
		}
	}
	if !g.models {
		return p, nil
	}
	a, err := g.sessions.GetAgentVersion(ctx, s.Agent.ID, s.Agent.Version)
	if err != nil {
		return egress.Policy{}, err
	}
	if id := a.Runtime.ModelCredential; a.Runtime.Kind == core.RuntimeACP && id != "" {
		c, _, err := g.sessions.GetCredential(ctx, id)
		if err != nil {
			// The agent's model calls go out without its key, and fail
			// there, saying so; its session still reaches the rest.
			g.log.Warn("an ACP agent's model credential is unusable", "session_id", sessionID, "agent_id", a.ID, "credential_id", id, "err", err)
			return p, nil
		}
		p.Hosts = append(p.Hosts, c.Hosts...)
		p.Credentials = append(p.Credentials, id)
		p.Metered = append(p.Metered, c.Hosts...)
	}
	return p, nil
}

func (g *grantSource) Header(ctx context.Context, id, host string) (string, string, error) {
	if gr := g.granterOf(id); gr != nil {
		return gr.GitHeader(ctx, id, host)
	}
	return g.vault.Header(ctx, id, host)
}

// Token refuses a granted id: it is injected by the proxy, never handed
// to a stdio server or anything else that would hold it.
func (g *grantSource) Token(ctx context.Context, id string) (string, error) {
	if g.granterOf(id) != nil {
		return "", fmt.Errorf("credential %s is injected by the egress proxy only: %w", id, core.ErrForbidden)
	}
	return g.vault.Token(ctx, id)
}

func (g *grantSource) Refresh(ctx context.Context, id string) error {
	if g.granterOf(id) != nil {
		// A granter renews its own tokens before they expire (GitHub's
		// installation tokens through ghinstallation).
		return nil
	}
	return g.vault.Refresh(ctx, id)
}

// granterOf is the granter that made credential id, nil for a vault id.
func (g *grantSource) granterOf(id string) GitGranter {
	for _, gr := range g.granters {
		if gr.IsGitCredential(id) {
			return gr
		}
	}
	return nil
}
