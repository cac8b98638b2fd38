package environments

import (
	"context"
	"errors"
	"fmt"

	"github.com/switchboardhq/switchboard/core"
)

// Checked wraps the API's store so that a session or agent naming an
// environment that does not exist is refused with core.ErrInvalid (a 400)
// before anything is stored, rather than failing at its first sandbox.
// When st can create a session with its webhook destinations, so can the
// result.
func Checked(st core.Store, envs core.EnvironmentStore) core.Store {
	c := checked{Store: st, envs: envs}
	if sc, ok := st.(sessionCreator); ok {
		return checkedCreator{checked: c, creator: sc}
	}
	return c
}

type checked struct {
	core.Store
	envs core.EnvironmentStore
}

func (s checked) check(ctx context.Context, name string) error {
	if name == "" {
		return nil
	}
	if _, err := s.envs.GetEnvironment(ctx, name); err != nil {
		if errors.Is(err, core.ErrNotFound) {
			return fmt.Errorf("field \"environment\": no environment %q: %w", name, core.ErrInvalid)
		}
		return err
	}
	return nil
}

func (s checked) CreateSession(ctx context.Context, req core.NewSession) (*core.CreateResult, error) {
	if err := s.check(ctx, req.Session.Environment); err != nil {
		return nil, err
	}
	return s.Store.CreateSession(ctx, req)
}

func (s checked) CreateAgent(ctx context.Context, a *core.Agent) (*core.Agent, error) {
	if err := s.check(ctx, a.Environment); err != nil {
		return nil, err
	}
	return s.Store.CreateAgent(ctx, a)
}

// UpdateAgent runs update on a copy first: the environment is looked up
// outside the store's write transaction.
func (s checked) UpdateAgent(ctx context.Context, id string, expect int, update func(*core.Agent) error) (*core.Agent, error) {
	if cur, err := s.Store.GetAgent(ctx, id); err == nil {
		next := *cur
		if err := update(&next); err == nil && next.Environment != cur.Environment {
			if err := s.check(ctx, next.Environment); err != nil {
				return nil, err
			}
		}
	}
	return s.Store.UpdateAgent(ctx, id, expect, update)
}

// sessionCreator is the optional create-with-destinations capability the
// sessions API looks for.
type sessionCreator interface {
	core.Store
	core.SessionDestinationCreator
}

// checkedCreator keeps that capability visible through the check.
type checkedCreator struct {
	checked
	creator core.SessionDestinationCreator
}

func (s checkedCreator) PrepareDestinations(ctx context.Context, sessionID string, specs []core.DestinationSpec) ([]core.NewDestination, []core.CreatedDestination, error) {
	return s.creator.PrepareDestinations(ctx, sessionID, specs)
}

func (s checkedCreator) CreateSessionAndDestinations(ctx context.Context, req core.NewSession, dests []core.NewDestination) (*core.CreateResult, error) {
	if err := s.check(ctx, req.Session.Environment); err != nil {
		return nil, err
	}
	return s.creator.CreateSessionAndDestinations(ctx, req, dests)
}
