package record

import (
	"fmt"

	"github.com/switchboardhq/switchboard/core"
)

// NewEnvironment is the environment CreateEnvironment stores for in at
// now: an id given when in has none, its prefix and the record checked.
func NewEnvironment(in *core.Environment, now core.Time) (*core.Environment, error) {
	e := *in
	if err := newID(&e.ID, core.PrefixEnvironment, "create environment", "an environment id"); err != nil {
		return nil, err
	}
	e.CreatedAt, e.UpdatedAt = now, now
	if err := e.Validate(); err != nil {
		return nil, err
	}
	return &e, nil
}

// UpdateEnvironment applies update to next, a copy of cur it may change
// freely, then puts back what the store owns (id, created_at), stamps
// updated_at and checks the result.
func UpdateEnvironment(cur, next *core.Environment, update func(*core.Environment) error, now core.Time) error {
	if err := update(next); err != nil {
		return fmt.Errorf("environment %s: %w", cur.ID, err)
	}
	next.ID, next.CreatedAt, next.UpdatedAt = cur.ID, cur.CreatedAt, now
	return next.Validate()
}
