package core

import (
	"fmt"
	"regexp"
	"strings"
)

// Repository is a git repository a session works on, which the gateway
// clones into the session's sandbox before its first turn (through the
// egress proxy, as the model's own clones go) so that the repository's
// instructions and skills reach the model.
type Repository struct {
	// FullName is owner/name, as people call it.
	FullName string
	// CloneURL is the HTTPS URL git clones from.
	CloneURL string
	// Branch is the branch whose instructions count: the default branch
	// for an issue, the base branch for a pull request (a fork's head
	// cannot bring its own instructions). Empty: the default branch.
	Branch string
	// Dir is the folder in the workspace (SandboxWorkspace/<name>).
	Dir string
}

// RepositoryAccess names repositories of one code host installation (a
// GitHub App installation) that sessions from elsewhere (Slack, Linear,
// the API) may work on: they are offered the host's tools for those
// repositories, their sandboxes reach them with git, and what the model
// opens there (a pull request, an issue) is linked to the session. A
// session that came from the code host keeps its own repository.
type RepositoryAccess struct {
	// Installation is the installation's id (GET /v1/installations).
	Installation string `json:"installation"`
	// Repositories are owner/name, all of the installation's account.
	Repositories []string `json:"repositories"`
}

// MaxAccessRepositories bounds RepositoryAccess.Repositories.
const MaxAccessRepositories = 20

var repositoryNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9._-]{1,100}$`)

// Validate checks the shape of the access (nil is none); whether the
// installation exists and holds the repositories is the provider's to say.
func (r *RepositoryAccess) Validate() error {
	if r == nil {
		return nil
	}
	if !strings.HasPrefix(r.Installation, PrefixInstallation+"_") {
		return fmt.Errorf("repository_access.installation %q: want an installation id (%s_…, from GET /v1/installations): %w", r.Installation, PrefixInstallation, ErrInvalid)
	}
	if n := len(r.Repositories); n == 0 || n > MaxAccessRepositories {
		return fmt.Errorf("repository_access.repositories: want 1 to %d of owner/name, have %d: %w", MaxAccessRepositories, n, ErrInvalid)
	}
	seen := map[string]bool{}
	for i, name := range r.Repositories {
		if !repositoryNamePattern.MatchString(name) {
			return fmt.Errorf("repository_access.repositories[%d] %q: want owner/name: %w", i, name, ErrInvalid)
		}
		if seen[strings.ToLower(name)] {
			return fmt.Errorf("repository_access.repositories[%d] %q is listed twice: %w", i, name, ErrInvalid)
		}
		seen[strings.ToLower(name)] = true
	}
	return nil
}
