package sandbox

import (
	"context"

	"github.com/switchboardhq/switchboard/core"
)

// GitGranter is a platform whose sessions work on a repository it hosts
// (GitHub's provider is one): their sandboxes reach its git host through
// the egress proxy with a credential the platform resolves itself,
// narrowed to the session's repository, so that neither the vault nor
// the sandbox ever holds it.
type GitGranter interface {
	// GitGrant is what the session's sandbox may reach because of where
	// the session came from: hosts (host:port) and the credential id the
	// proxy injects there. ok is false for sessions from elsewhere.
	GitGrant(s *core.Session) (hosts []string, credentialID string, ok bool)
	// IsGitCredential tells the credential ids GitGrant makes; no vault id
	// looks like one.
	IsGitCredential(id string) bool
	// GitHeader is the header the proxy injects toward hostport for a
	// credential id GitGrant made.
	GitHeader(ctx context.Context, id, hostport string) (name, value string, err error)
}
