package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
)

var _ core.EnvironmentStore = (*Store)(nil)

// environmentByIDOrName selects an environment by id first and by name
// second (a name may not look like an id, so the two never collide); the
// caller appends a locking clause when it writes.
const environmentByIDOrName = "SELECT body FROM environments WHERE id = $1 OR name = $1 ORDER BY id = $1 DESC LIMIT 1"

// envNameTaken is the error of a name the unique constraint refused.
func envNameTaken(name string) error {
	return fmt.Errorf("environment name %q is taken: %w", name, core.ErrConflict)
}

// CreateEnvironment saves a new environment under a unique name.
func (s *Store) CreateEnvironment(ctx context.Context, in *core.Environment) (*core.Environment, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	e, err := record.NewEnvironment(in, s.clock())
	if err != nil {
		return nil, err
	}
	raw, err := record.Encode("environment", e.ID, e)
	if err != nil {
		return nil, fmt.Errorf("create environment: %w", err)
	}
	err = s.do(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "INSERT INTO environments (id, name, body) VALUES ($1, $2, $3)", e.ID, e.Name, raw)
		switch {
		case isUnique(err, "environments_name_key"):
			return envNameTaken(e.Name)
		case isUnique(err):
			return fmt.Errorf("environment %s already exists: %w", e.ID, core.ErrConflict)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("create environment: %w", err)
	}
	s.log.Debug("environment created", "environment_id", e.ID)
	return record.Decode[core.Environment]("environment", raw)
}

// GetEnvironment returns the environment with this id or name.
func (s *Store) GetEnvironment(ctx context.Context, idOrName string) (*core.Environment, error) {
	return readOne[core.Environment](ctx, s, "get environment", "environment", idOrName, environmentByIDOrName, idOrName)
}

// ListEnvironments pages through environments in id order (creation
// order, to the millisecond).
func (s *Store) ListEnvironments(ctx context.Context, after string, limit int) ([]*core.Environment, bool, error) {
	return bodyPage[core.Environment](ctx, s, "environments",
		"SELECT body FROM environments WHERE id > $1 ORDER BY id LIMIT $2", after, limit)
}

// UpdateEnvironment applies update to the locked row, so no other write
// slips in between the read and the write.
func (s *Store) UpdateEnvironment(ctx context.Context, idOrName string, update func(*core.Environment) error) (*core.Environment, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	var raw []byte
	err := s.do(ctx, func(tx pgx.Tx) error {
		cur, err := getBody[core.Environment](ctx, tx, "environment", idOrName, environmentByIDOrName+" FOR UPDATE", idOrName)
		if err != nil {
			return err
		}
		// A copy update may change freely, maps and lists included.
		next, err := getBody[core.Environment](ctx, tx, "environment", cur.ID, "SELECT body FROM environments WHERE id = $1", cur.ID)
		if err != nil {
			return err
		}
		if err := record.UpdateEnvironment(cur, next, update, s.clock()); err != nil {
			return err
		}
		if raw, err = record.Encode("environment", cur.ID, next); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "UPDATE environments SET name = $2, body = $3 WHERE id = $1", cur.ID, next.Name, raw)
		if isUnique(err, "environments_name_key") {
			return envNameTaken(next.Name)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("update environment %s: %w", idOrName, err)
	}
	return record.Decode[core.Environment]("environment", raw)
}

// DeleteEnvironment deletes the environment and frees its name. Sessions
// that name it fail their next sandbox start with a tool error saying so.
func (s *Store) DeleteEnvironment(ctx context.Context, idOrName string) error {
	return s.deleteOne(ctx, "delete environment", fmt.Errorf("environment %q: %w", idOrName, core.ErrNotFound),
		`DELETE FROM environments WHERE id = (
			SELECT id FROM environments WHERE id = $1 OR name = $1 ORDER BY id = $1 DESC LIMIT 1 FOR UPDATE)`, idOrName)
}
