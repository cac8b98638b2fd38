package bolt

import (
	"context"
	"fmt"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
	"go.etcd.io/bbolt"
)

var _ core.EnvironmentStore = (*Store)(nil)

// Environment bucket names; doc.go describes what each holds.
const (
	bucketEnvironments     = "environments"
	bucketEnvironmentNames = "environment_names"
)

var environments = named[core.Environment]{
	kind: "environment", records: bucketEnvironments, names: bucketEnvironmentNames,
	id: func(e *core.Environment) string { return e.ID }, name: func(e *core.Environment) string { return e.Name },
}

// CreateEnvironment saves a new environment under a unique name.
func (s *Store) CreateEnvironment(ctx context.Context, in *core.Environment) (*core.Environment, error) {
	e, err := record.NewEnvironment(in, s.clock())
	if err != nil {
		return nil, err
	}
	out, err := writeOne(ctx, s, "create environment", func(tx *bbolt.Tx) (*core.Environment, error) { return environments.create(tx, e) })
	if err == nil {
		s.log.Debug("environment created", "environment_id", out.ID)
	}
	return out, err
}

// GetEnvironment returns the environment with this id or name.
func (s *Store) GetEnvironment(ctx context.Context, idOrName string) (*core.Environment, error) {
	return viewOne(ctx, s, "get environment", func(tx *bbolt.Tx) (*core.Environment, error) { return environments.get(tx, idOrName) })
}

// ListEnvironments pages through environments in id order (creation
// order, to the millisecond).
func (s *Store) ListEnvironments(ctx context.Context, after string, limit int) ([]*core.Environment, bool, error) {
	list, more, err := listPage(ctx, s, bucketEnvironments, after, limit, environments.decode)
	if err != nil {
		return nil, false, fmt.Errorf("list environments: %w", err)
	}
	return list, more, nil
}

// UpdateEnvironment applies update inside the write transaction, so no
// other write slips in between the read and the write.
func (s *Store) UpdateEnvironment(ctx context.Context, idOrName string, update func(*core.Environment) error) (*core.Environment, error) {
	return writeOne(ctx, s, "update environment "+idOrName, func(tx *bbolt.Tx) (*core.Environment, error) {
		cur, err := environments.get(tx, idOrName)
		if err != nil {
			return nil, err
		}
		next, err := environments.get(tx, cur.ID) // a copy update may change freely
		if err != nil {
			return nil, err
		}
		if err := record.UpdateEnvironment(cur, next, update, s.clock()); err != nil {
			return nil, err
		}
		return environments.update(tx, cur, next)
	})
}

// DeleteEnvironment deletes the environment and frees its name. Sessions
// that name it fail their next sandbox start with a tool error saying so.
func (s *Store) DeleteEnvironment(ctx context.Context, idOrName string) error {
	return s.updateTx(ctx, "delete environment", func(tx *bbolt.Tx) error {
		e, err := environments.get(tx, idOrName)
		if err != nil {
			return err
		}
		return environments.delete(tx, e)
	})
}
