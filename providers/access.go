package providers

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/server"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/mcpbridge"
)

// GitHost is a platform whose sessions work on a repository it hosts
// (GitHub's provider): their sandboxes reach its git host through the
// egress proxy with a credential the platform resolves itself, narrowed to
// the repository, so that neither the vault nor the sandbox holds it.
type GitHost interface {
	Provider
	// GitGrant is the git access of a session that came from the
	// platform: hosts (host:port) and the credential id the proxy injects
	// there; ok is false for sessions from elsewhere.
	GitGrant(s *core.Session) (hosts []string, credentialID string, ok bool)
	// IsGitCredential tells the credential ids the host makes.
	IsGitCredential(id string) bool
	// GitHeader is the header the proxy injects toward hostport for a
	// credential id the host made.
	GitHeader(ctx context.Context, id, hostport string) (name, value string, err error)
}

// RepositoryHost is a code host whose repositories an agent may open to
// sessions from other platforms (core.RepositoryAccess).
type RepositoryHost interface {
	GitHost
	// CheckRepositories refuses (ErrInvalid, naming them) repositories
	// the installation does not hold, and an installation that cannot
	// serve them now.
	CheckRepositories(ctx context.Context, in *core.Installation, repos []string) error
	// GrantedToolServer is the MCP server of a session granted g; the
	// model's pull requests and issues opened with it are linked to the
	// session.
	GrantedToolServer(ctx context.Context, s *core.Session, g Grant) (*server.MCPServer, error)
	// GrantedGit is the git access of such a session's sandbox.
	GrantedGit(g Grant) (hosts []string, credentialID string)
}

// Grant is repository access a session holds through its agent: the
// code host's installation and the repositories (owner/name).
type Grant struct {
	Installation *core.Installation
	Repositories []string
}

// CheckRepositoryAccess refuses an agent's repository access that names
// no installation of a code host, or repositories it does not hold.
func (s *Set) CheckRepositoryAccess(ctx context.Context, ra *core.RepositoryAccess) error {
	if ra == nil {
		return nil
	}
	in, host, err := s.accessHost(ctx, ra)
	if err != nil {
		return err
	}
	if err := host.CheckRepositories(ctx, in, ra.Repositories); err != nil {
		return fmt.Errorf("repository_access: %w", err)
	}
	return nil
}

// accessHost is the installation an access names and its code host.
func (s *Set) accessHost(ctx context.Context, ra *core.RepositoryAccess) (*core.Installation, RepositoryHost, error) {
	in, err := s.store.GetInstallation(ctx, ra.Installation)
	if errors.Is(err, core.ErrNotFound) {
		return nil, nil, fmt.Errorf("repository_access.installation: no installation %q: %w", ra.Installation, core.ErrInvalid)
	}
	if err != nil {
		return nil, nil, err
	}
	host, ok := s.origin(in.Provider).(RepositoryHost)
	if !ok {
		return nil, nil, fmt.Errorf("repository_access.installation: %s is a %s installation, not one of a code host (%s): %w", in.ID, in.Provider, strings.Join(s.codeHosts(), ", "), core.ErrInvalid)
	}
	return in, host, nil
}

// codeHosts are the names of the providers that host repositories.
func (s *Set) codeHosts() []string {
	var out []string
	for _, p := range s.list {
		if _, ok := p.(RepositoryHost); ok {
			out = append(out, p.Name())
		}
	}
	return out
}

// RepositoryGrant is the repository access the session holds through
// its agent (a; nil reads the session's agent version), or nil. A
// session from the code host itself keeps its own repository; one from
// another platform holds the access only when its installation and the
// code host's are in one tenant group (never across customers); one
// made over the API belongs to no installation and holds it.
func (s *Set) RepositoryGrant(ctx context.Context, sess *core.Session, a *core.Agent) (*Grant, RepositoryHost, error) {
	if a == nil {
		var err error
		if a, err = s.store.GetAgentVersion(ctx, sess.Agent.ID, sess.Agent.Version); err != nil {
			return nil, nil, err
		}
	}
	ra := a.RepositoryAccess
	if ra == nil {
		return nil, nil, nil
	}
	in, host, err := s.accessHost(ctx, ra)
	if err != nil {
		return nil, nil, err
	}
	if sess.Origin != nil {
		if sess.Origin.Provider == in.Provider {
			return nil, nil, nil
		}
		from, err := s.InstallationOfKey(ctx, sess.Origin.Key)
		if err != nil {
			return nil, nil, fmt.Errorf("session %s's own installation: %w", sess.ID, err)
		}
		if !AllowsLink(from, in) {
			return nil, nil, fmt.Errorf("agent %s's repository access names %s installation %s, which is not in a tenant group with %s installation %s: %w",
				a.Name, in.Provider, InstallationLabel(in), from.Provider, InstallationLabel(from), core.ErrForbidden)
		}
	}
	if err := host.CheckRepositories(ctx, in, ra.Repositories); err != nil {
		return nil, nil, err
	}
	return &Grant{Installation: in, Repositories: ra.Repositories}, host, nil
}

// grantedServer is the code host's MCP server for a session that holds
// repository access, or nil; a grant refused is logged, not fatal: the
// session runs without those tools.
func (s *Set) grantedServer(ctx context.Context, sess *core.Session, a *core.Agent) ([]mcpbridge.Server, error) {
	g, host, err := s.RepositoryGrant(ctx, sess, a)
	if err != nil {
		if errors.Is(err, core.ErrInvalid) || errors.Is(err, core.ErrForbidden) {
			s.log.Warn("repository access not granted", "session_id", sess.ID, "err", err)
			return nil, nil
		}
		return nil, err
	}
	if g == nil {
		return nil, nil
	}
	srv, err := host.GrantedToolServer(ctx, sess, *g)
	if err != nil || srv == nil {
		return nil, err
	}
	return []mcpbridge.Server{mcpbridge.InProcess{Name: host.Name(), Server: srv}}, nil
}

// GitGrant is what the session's sandbox may reach on a git host: its
// origin's repository, or the repositories its agent's access grants.
// It makes the Set a sandbox.GitGranter.
func (s *Set) GitGrant(ctx context.Context, sess *core.Session) (hosts []string, credentialID string, ok bool) {
	if sess.Origin != nil {
		if h, isHost := s.origin(sess.Origin.Provider).(GitHost); isHost {
			if hosts, cred, ok := h.GitGrant(sess); ok {
				return hosts, cred, true
			}
		}
	}
	g, host, err := s.RepositoryGrant(ctx, sess, nil)
	if err != nil {
		s.log.Warn("repository access not granted to the sandbox", "session_id", sess.ID, "err", err)
		return nil, "", false
	}
	if g == nil {
		return nil, "", false
	}
	hosts, cred := host.GrantedGit(*g)
	return hosts, cred, true
}

// IsGitCredential tells the credential ids a git host made.
func (s *Set) IsGitCredential(id string) bool { return s.gitHostOf(id) != nil }

// GitHeader asks the git host that made credential id for its header.
func (s *Set) GitHeader(ctx context.Context, id, hostport string) (string, string, error) {
	h := s.gitHostOf(id)
	if h == nil {
		return "", "", fmt.Errorf("credential %s: no git host made it: %w", id, core.ErrNotFound)
	}
	return h.GitHeader(ctx, id, hostport)
}

func (s *Set) gitHostOf(id string) GitHost {
	for _, p := range s.list {
		if h, ok := p.(GitHost); ok && h.IsGitCredential(id) {
			return h
		}
	}
	return nil
}
