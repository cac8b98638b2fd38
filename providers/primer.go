package providers

import (
	"context"

	"github.com/switchboardhq/switchboard/core"
)

// Primer gives a session what its model should know before the first
// turn (its skills, its repository's instructions): events logged once,
// with the platform's context, before the first turn. Instructions are
// user.message events of kind core.MessageKindInstructions, which extend
// the system prompt.
type Primer interface {
	Prime(ctx context.Context, s *core.Session, a *core.Agent) ([]core.Event, error)
}

// SessionTools offers tools that depend on the session and its agent
// (the memory tool over the agent's stores), built at each cycle.
type SessionTools interface {
	Tools(ctx context.Context, s *core.Session, a *core.Agent) ([]core.Tool, error)
}

// RepositorySource names the repository a session of the provider works
// on (a GitHub issue's or pull request's), or nil when it has none.
type RepositorySource interface {
	Provider
	Repository(ctx context.Context, s *core.Session) (*core.Repository, error)
}
