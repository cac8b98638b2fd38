package bolt

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
	"go.etcd.io/bbolt"
)

// versionKey keys a version record (of an agent, of a skill) under its
// record's id, so one record's versions follow each other in order.
func versionKey(id string, version int) []byte {
	return binary.BigEndian.AppendUint32([]byte(id), uint32(version))
}

func decodeAgent(v []byte) (*core.Agent, error) { return record.Decode[core.Agent]("agent", v) }

// putAgent writes a as the latest version and as its immutable version
// record, and returns it as decoded from the stored bytes so that the
// caller sees exactly what a later read will.
func putAgent(tx *bbolt.Tx, a *core.Agent) (*core.Agent, error) {
	v, err := record.Encode("agent", a.ID, a)
	if err != nil {
		return nil, err
	}
	if err := bkt(tx, bucketAgents).Put([]byte(a.ID), v); err != nil {
		return nil, err
	}
	if err := bkt(tx, bucketAgentVersions).Put(versionKey(a.ID, a.Version), v); err != nil {
		return nil, err
	}
	return decodeAgent(v)
}

// CreateAgent saves version 1 of a new agent.
func (s *Store) CreateAgent(ctx context.Context, in *core.Agent) (*core.Agent, error) {
	a, err := record.NewAgent(in, s.clock())
	if err != nil {
		return nil, err
	}
	out, err := writeOne(ctx, s, "", func(tx *bbolt.Tx) (*core.Agent, error) {
		if bkt(tx, bucketAgents).Get([]byte(a.ID)) != nil {
			return nil, fmt.Errorf("agent %s already exists: %w", a.ID, core.ErrConflict)
		}
		if err := claimName(bkt(tx, bucketAgentNames), "agent", a.Name, a.ID); err != nil {
			return nil, err
		}
		if err := resolveAgent(tx, a); err != nil {
			return nil, err
		}
		return putAgent(tx, a)
	})
	if err != nil {
		return nil, record.Refused("create agent", err)
	}
	return out, nil
}

// UpdateAgent saves update applied to the latest version as the next one.
// update runs inside the write transaction so no other version can slip in
// between the read and the write.
func (s *Store) UpdateAgent(ctx context.Context, idOrName string, expectVersion int, update func(*core.Agent) error) (*core.Agent, error) {
	return writeOne(ctx, s, "update agent "+idOrName, func(tx *bbolt.Tx) (*core.Agent, error) {
		cur, err := getAgent(tx, idOrName)
		if err != nil {
			return nil, err
		}
		next, err := decodeAgent(bkt(tx, bucketAgents).Get([]byte(cur.ID))) // a copy update may change freely
		if err != nil {
			return nil, err
		}
		if err := record.NextAgent(cur, next, expectVersion, update, s.clock()); err != nil {
			return nil, err
		}
		if err := resolveAgent(tx, next); err != nil {
			return nil, err
		}
		if err := moveName(bkt(tx, bucketAgentNames), "agent", cur.ID, cur.Name, next.Name); err != nil {
			return nil, err
		}
		return putAgent(tx, next)
	})
}

// resolveAgent pins the skills and resolves the memory stores a names,
// in the transaction that saves it.
func resolveAgent(tx *bbolt.Tx, a *core.Agent) error {
	return record.ResolveAgent(a, func(idOrName string, version int) (*core.Skill, error) {
		return getSkill(tx, idOrName, version)
	}, func(idOrName string) (*core.MemoryStore, error) { return memoryStores.get(tx, idOrName) })
}

// getAgent resolves an id first and a name second; ids carry a prefix no
// sane name would, so the order only matters for pathological names.
func getAgent(tx *bbolt.Tx, idOrName string) (*core.Agent, error) {
	agents := bkt(tx, bucketAgents)
	v := agents.Get([]byte(idOrName))
	if v == nil {
		if id := bkt(tx, bucketAgentNames).Get([]byte(idOrName)); id != nil {
			v = agents.Get(id)
		}
	}
	if v == nil {
		return nil, fmt.Errorf("agent %q: %w", idOrName, core.ErrNotFound)
	}
	return decodeAgent(v)
}

// GetAgent returns the latest version of the agent with this id or name.
func (s *Store) GetAgent(ctx context.Context, idOrName string) (*core.Agent, error) {
	return viewOne(ctx, s, "get agent", func(tx *bbolt.Tx) (*core.Agent, error) { return getAgent(tx, idOrName) })
}

// GetAgentVersion returns one immutable version of an agent.
func (s *Store) GetAgentVersion(ctx context.Context, id string, version int) (*core.Agent, error) {
	return viewOne(ctx, s, "get agent version", func(tx *bbolt.Tx) (*core.Agent, error) {
		var v []byte
		if version > 0 {
			v = bkt(tx, bucketAgentVersions).Get(versionKey(id, version))
		}
		if v == nil {
			return nil, fmt.Errorf("agent %s version %d: %w", id, version, core.ErrNotFound)
		}
		return decodeAgent(v)
	})
}

// ListAgents pages through the latest versions in id order.
func (s *Store) ListAgents(ctx context.Context, after string, limit int) ([]*core.Agent, bool, error) {
	list, more, err := listPage(ctx, s, bucketAgents, after, limit, decodeAgent)
	if err != nil {
		return nil, false, fmt.Errorf("list agents: %w", err)
	}
	return list, more, nil
}
