package record

import (
	"fmt"

	"github.com/switchboardhq/switchboard/core"
)

// NewAgent is version 1 of the agent CreateAgent stores for in at now: an
// id given when in has none, the record checked.
func NewAgent(in *core.Agent, now core.Time) (*core.Agent, error) {
	a := *in
	if a.ID == "" {
		a.ID = core.NewID(core.PrefixAgent)
	}
	a.Version = 1
	a.CreatedAt, a.UpdatedAt = now, now
	if err := a.Validate(); err != nil {
		return nil, err
	}
	return &a, nil
}

// NextAgent makes next, a copy of cur (the latest version) that update
// may change freely, cur's next version at now: update applied, then what
// the store owns (identity and history) put back whatever update did, and
// the result checked. expectVersion, when not 0, must be cur's version.
func NextAgent(cur, next *core.Agent, expectVersion int, update func(*core.Agent) error, now core.Time) error {
	if expectVersion != 0 && expectVersion != cur.Version {
		return fmt.Errorf("agent %s is at version %d, not %d: %w", cur.ID, cur.Version, expectVersion, core.ErrConflict)
	}
	if err := update(next); err != nil {
		return fmt.Errorf("agent %s: %w", cur.ID, err)
	}
	next.ID, next.Version, next.CreatedAt, next.UpdatedAt = cur.ID, cur.Version+1, cur.CreatedAt, now
	return next.ValidateUpdate(cur.Name)
}

// ResolveAgent pins the skill versions and resolves the memory stores
// agent a names, through the store's reads in the transaction that saves
// it (ResolveSkills, ResolveMemoryStores).
func ResolveAgent(a *core.Agent, skill func(idOrName string, version int) (*core.Skill, error), memoryStore func(idOrName string) (*core.MemoryStore, error)) error {
	var err error
	if a.Skills, err = ResolveSkills(a.Skills, skill); err != nil {
		return err
	}
	a.MemoryStores, err = ResolveMemoryStores(a.MemoryStores, memoryStore)
	return err
}
