package sessions

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/switchboardhq/switchboard/core"
	bolt "go.etcd.io/bbolt"
)

var _ core.EnvironmentStore = (*Store)(nil)

// Environment bucket names; doc.go describes what each holds.
const (
	bucketEnvironments     = "environments"
	bucketEnvironmentNames = "environment_names"
)

func decodeEnvironment(v []byte) (*core.Environment, error) {
	var e core.Environment
	if err := json.Unmarshal(v, &e); err != nil {
		return nil, fmt.Errorf("decode environment: %w", err)
	}
	return &e, nil
}

// putEnvironment writes e and returns it as decoded from the stored bytes,
// so that the caller sees exactly what a later read will.
func putEnvironment(tx *bolt.Tx, e *core.Environment) (*core.Environment, error) {
	v, err := core.EncodeJSON(e)
	if err != nil {
		return nil, fmt.Errorf("encode environment %s: %w", e.ID, err)
	}
	if err := bkt(tx, bucketEnvironments).Put([]byte(e.ID), v); err != nil {
		return nil, err
	}
	return decodeEnvironment(v)
}

// getEnvironment resolves an id first and a name second (names may not
// look like ids, so the two never collide).
func getEnvironment(tx *bolt.Tx, idOrName string) (*core.Environment, error) {
	envs := bkt(tx, bucketEnvironments)
	v := envs.Get([]byte(idOrName))
	if v == nil {
		if id := bkt(tx, bucketEnvironmentNames).Get([]byte(idOrName)); id != nil {
			v = envs.Get(id)
		}
	}
	if v == nil {
		return nil, fmt.Errorf("environment %q: %w", idOrName, core.ErrNotFound)
	}
	return decodeEnvironment(v)
}

// CreateEnvironment saves a new environment under a unique name.
func (s *Store) CreateEnvironment(ctx context.Context, in *core.Environment) (*core.Environment, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	e := *in
	if e.ID == "" {
		e.ID = core.NewID(core.PrefixEnvironment)
	}
	if !core.HasPrefix(e.ID, core.PrefixEnvironment) {
		return nil, fmt.Errorf("create environment: id %q is not an environment id: %w", e.ID, core.ErrInvalid)
	}
	e.CreatedAt = s.clock()
	e.UpdatedAt = e.CreatedAt
	if err := e.Validate(); err != nil {
		return nil, err
	}
	var out *core.Environment
	err := s.db.Update(func(tx *bolt.Tx) error {
		if bkt(tx, bucketEnvironments).Get([]byte(e.ID)) != nil {
			return fmt.Errorf("environment %s already exists: %w", e.ID, core.ErrConflict)
		}
		names := bkt(tx, bucketEnvironmentNames)
		if names.Get([]byte(e.Name)) != nil {
			return fmt.Errorf("environment name %q is taken: %w", e.Name, core.ErrConflict)
		}
		if err := names.Put([]byte(e.Name), []byte(e.ID)); err != nil {
			return err
		}
		var err error
		out, err = putEnvironment(tx, &e)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("create environment: %w", err)
	}
	s.log.Debug("environment created", "environment_id", out.ID)
	return out, nil
}

// GetEnvironment returns the environment with this id or name.
func (s *Store) GetEnvironment(ctx context.Context, idOrName string) (*core.Environment, error) {
	return viewOne(ctx, s, "get environment", func(tx *bolt.Tx) (*core.Environment, error) { return getEnvironment(tx, idOrName) })
}

// ListEnvironments pages through environments in id order (creation
// order, to the millisecond).
func (s *Store) ListEnvironments(ctx context.Context, after string, limit int) ([]*core.Environment, bool, error) {
	list, more, err := listPage(ctx, s, bucketEnvironments, after, limit, decodeEnvironment)
	if err != nil {
		return nil, false, fmt.Errorf("list environments: %w", err)
	}
	return list, more, nil
}

// UpdateEnvironment applies update inside the write transaction, so no
// other write slips in between the read and the write.
func (s *Store) UpdateEnvironment(ctx context.Context, idOrName string, update func(*core.Environment) error) (*core.Environment, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	var out *core.Environment
	err := s.db.Update(func(tx *bolt.Tx) error {
		cur, err := getEnvironment(tx, idOrName)
		if err != nil {
			return err
		}
		next, err := getEnvironment(tx, cur.ID) // a copy update may change freely
		if err != nil {
			return err
		}
		if err := update(next); err != nil {
			return fmt.Errorf("environment %s: %w", cur.ID, err)
		}
		next.ID, next.CreatedAt, next.UpdatedAt = cur.ID, cur.CreatedAt, s.clock()
		if err := next.Validate(); err != nil {
			return err
		}
		if next.Name != cur.Name {
			names := bkt(tx, bucketEnvironmentNames)
			if owner := names.Get([]byte(next.Name)); owner != nil && !bytes.Equal(owner, []byte(cur.ID)) {
				return fmt.Errorf("environment name %q is taken: %w", next.Name, core.ErrConflict)
			}
			if err := names.Delete([]byte(cur.Name)); err != nil {
				return err
			}
			if err := names.Put([]byte(next.Name), []byte(cur.ID)); err != nil {
				return err
			}
		}
		out, err = putEnvironment(tx, next)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("update environment %s: %w", idOrName, err)
	}
	return out, nil
}

// DeleteEnvironment deletes the environment and frees its name. Sessions
// that name it fail their next sandbox start with a tool error saying so.
func (s *Store) DeleteEnvironment(ctx context.Context, idOrName string) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		e, err := getEnvironment(tx, idOrName)
		if err != nil {
			return err
		}
		if err := bkt(tx, bucketEnvironmentNames).Delete([]byte(e.Name)); err != nil {
			return err
		}
		return bkt(tx, bucketEnvironments).Delete([]byte(e.ID))
	})
	if err != nil {
		return fmt.Errorf("delete environment: %w", err)
	}
	return nil
}
