package github

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/server"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/providers"
)

// The provider is the code host whose repositories an agent may open to
// sessions from Slack, Linear or the API.
var _ providers.RepositoryHost = (*Provider)(nil)

// CheckRepositories refuses repositories that are not of the account the
// installation is on, or not among those it was given access to, and an
// installation that is suspended or removed.
func (p *Provider) CheckRepositories(_ context.Context, in *core.Installation, repos []string) error {
	if in.Provider != Name {
		return fmt.Errorf("installation %s is not GitHub's: %w", in.ID, core.ErrInvalid)
	}
	if st := installStatus(in); st != statusActive {
		return fmt.Errorf("GitHub installation %s is %s: %w", providers.InstallationLabel(in), st, core.ErrInvalid)
	}
	var selected []string
	if in.Metadata[metaSelection] == "selected" {
		selected = strings.Split(strings.ToLower(in.Metadata[metaRepos]), ",")
	}
	for _, r := range repos {
		owner, _, _ := strings.Cut(r, "/")
		if !strings.EqualFold(owner, in.Name) {
			return fmt.Errorf("%s is not a repository of %s, the account GitHub installation %s is on: %w", r, in.Name, in.ID, core.ErrInvalid)
		}
		if selected != nil && !slices.Contains(selected, strings.ToLower(r)) {
			return fmt.Errorf("GitHub installation %s was not given access to %s (it has %s): %w", providers.InstallationLabel(in), r, in.Metadata[metaRepos], core.ErrInvalid)
		}
	}
	return nil
}

// GrantedToolServer is the MCP server of a session from elsewhere that
// holds access to g's repositories: the same tools as a GitHub session's,
// with the repository an argument among them, and no issue or pull
// request of its own.
func (p *Provider) GrantedToolServer(_ context.Context, s *core.Session, g providers.Grant) (*server.MCPServer, error) {
	inst, err := strconv.ParseInt(g.Installation.ExternalID, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("GitHub installation %s: external id %q: %w", g.Installation.ID, g.Installation.ExternalID, core.ErrInvalid)
	}
	return p.tools.Get(s.ID, inst, func() *server.MCPServer {
		return (&toolScope{p: p, installation: inst, repos: slices.Clone(g.Repositories), session: s.ID}).server()
	}), nil
}

// GrantedGit is the git host, with a credential narrowed to g's
// repositories.
func (p *Provider) GrantedGit(g providers.Grant) (hosts []string, credentialID string) {
	owner, _, _ := strings.Cut(g.Repositories[0], "/")
	names := make([]string, 0, len(g.Repositories))
	for _, r := range g.Repositories {
		_, name, _ := strings.Cut(r, "/")
		names = append(names, name)
	}
	slices.Sort(names)
	return []string{p.gitHostPort()}, gitCredentialPrefix + g.Installation.ExternalID + ":" + owner + "/" + strings.Join(names, ",")
}
