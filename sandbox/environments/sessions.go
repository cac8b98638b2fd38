package environments

import (
	"context"
	"fmt"

	"github.com/switchboardhq/switchboard/core"
)

// SessionStore is what Sessions reads: sessions, their agents'
// versions, environments.
type SessionStore interface {
	GetSession(ctx context.Context, id string) (*core.Session, error)
	GetAgentVersion(ctx context.Context, id string, version int) (*core.Agent, error)
	GetEnvironment(ctx context.Context, idOrName string) (*core.Environment, error)
}

// Sessions resolves the environment a session's sandbox is made of: the
// session's own, else its agent version's, else none. It is the sandbox
// backend's source of environments.
type Sessions struct{ Store SessionStore }

func (s Sessions) SessionEnvironment(ctx context.Context, sessionID string) (*core.Environment, error) {
	sess, err := s.Store.GetSession(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	name := sess.Environment
	if name == "" {
		a, err := s.Store.GetAgentVersion(ctx, sess.Agent.ID, sess.Agent.Version)
		if err != nil {
			return nil, err
		}
		name = a.Environment
	}
	if name == "" {
		return nil, nil
	}
	env, err := s.Store.GetEnvironment(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("environment %q, named by the session or its agent: %w", name, err)
	}
	return env, nil
}
