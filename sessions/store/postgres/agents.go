package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
)

var _ core.Store = (*Store)(nil)

func decodeAgent(v []byte) (*core.Agent, error) { return record.Decode[core.Agent]("agent", v) }

// putAgent writes a as the latest version (inserted when insert is set)
// and as its immutable version record, and returns it as decoded from the
// stored bytes so that the caller sees exactly what a later read will.
func putAgent(ctx context.Context, tx pgx.Tx, a *core.Agent, insert bool) (*core.Agent, error) {
	v, err := record.Encode("agent", a.ID, a)
	if err != nil {
		return nil, err
	}
	latest := `UPDATE agents SET name = $2, version = $3, body = $4 WHERE id = $1`
	if insert {
		latest = `INSERT INTO agents (id, name, version, body) VALUES ($1, $2, $3, $4)`
	}
	b := &pgx.Batch{}
	b.Queue(latest, a.ID, a.Name, a.Version, v)
	b.Queue(`INSERT INTO agent_versions (agent_id, version, body) VALUES ($1, $2, $3)`, a.ID, a.Version, v)
	err = tx.SendBatch(ctx, b).Close()
	switch {
	case isUnique(err, "agents_pkey"):
		return nil, fmt.Errorf("agent %s already exists: %w", a.ID, core.ErrConflict)
	case isUnique(err, "agents_name_key"):
		return nil, fmt.Errorf("agent name %q is taken: %w", a.Name, core.ErrConflict)
	case err != nil:
		return nil, err
	}
	return decodeAgent(v)
}

// CreateAgent saves version 1 of a new agent.
func (s *Store) CreateAgent(ctx context.Context, in *core.Agent) (*core.Agent, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	a, err := record.NewAgent(in, s.clock())
	if err != nil {
		return nil, err
	}
	var out *core.Agent
	err = s.do(ctx, func(tx pgx.Tx) error {
		rec := *a // resolved anew if the transaction runs again
		if err := resolveAgent(ctx, tx, &rec); err != nil {
			return err
		}
		var err error
		out, err = putAgent(ctx, tx, &rec, true)
		return err
	})
	if err != nil {
		return nil, record.Refused("create agent", err)
	}
	return out, nil
}

// UpdateAgent saves update applied to the latest version as the next one.
// The agent's row stays locked from the read to the write, so no other
// version can slip in between.
func (s *Store) UpdateAgent(ctx context.Context, idOrName string, expectVersion int, update func(*core.Agent) error) (*core.Agent, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	var out *core.Agent
	err := s.do(ctx, func(tx pgx.Tx) error {
		cur, err := getAgent(ctx, tx, idOrName, true)
		if err != nil {
			return err
		}
		next := *cur
		if err := record.NextAgent(cur, &next, expectVersion, update, s.clock()); err != nil {
			return err
		}
		if err := resolveAgent(ctx, tx, &next); err != nil {
			return err
		}
		out, err = putAgent(ctx, tx, &next, false)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("update agent %s: %w", idOrName, err)
	}
	return out, nil
}

// resolveAgent pins the skills and resolves the memory stores a names,
// in the transaction that saves it: their rows stay locked FOR SHARE
// until the agent is saved, so neither can be deleted meanwhile.
func resolveAgent(ctx context.Context, tx pgx.Tx, a *core.Agent) error {
	return record.ResolveAgent(a, skillsIn(ctx, tx), func(idOrName string) (*core.MemoryStore, error) {
		return getMemoryStore(ctx, tx, idOrName, "FOR SHARE")
	})
}

// getAgent resolves an id first and a name second; ids carry a prefix no
// sane name would, so the order only matters for pathological names.
// lock takes the row's lock for an update.
func getAgent(ctx context.Context, q querier, idOrName string, lock bool) (*core.Agent, error) {
	sql := `SELECT body FROM agents WHERE id = $1 OR name = $1 ORDER BY id = $1 DESC LIMIT 1`
	if lock {
		sql += ` FOR UPDATE`
	}
	var v []byte
	err := q.QueryRow(ctx, sql, idOrName).Scan(&v)
	if noRow(err) {
		return nil, fmt.Errorf("agent %q: %w", idOrName, core.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return decodeAgent(v)
}

// GetAgent returns the latest version of the agent with this id or name.
func (s *Store) GetAgent(ctx context.Context, idOrName string) (*core.Agent, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	a, err := getAgent(ctx, s.poolFor(ctx), idOrName, false)
	if err != nil {
		return nil, fmt.Errorf("get agent: %w", err)
	}
	return a, nil
}

// GetAgentVersion returns one immutable version of an agent.
func (s *Store) GetAgentVersion(ctx context.Context, id string, version int) (*core.Agent, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	var v []byte
	err := s.poolFor(ctx).QueryRow(ctx, `SELECT body FROM agent_versions WHERE agent_id = $1 AND version = $2`, id, version).Scan(&v)
	if noRow(err) {
		err = fmt.Errorf("agent %s version %d: %w", id, version, core.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get agent version: %w", err)
	}
	return decodeAgent(v)
}

// ListAgents pages through the latest versions in id order.
func (s *Store) ListAgents(ctx context.Context, after string, limit int) ([]*core.Agent, bool, error) {
	list, more, err := listPage(ctx, s, `SELECT body FROM agents WHERE id > $1 ORDER BY id LIMIT $2`, []any{after}, limit, decodeAgent)
	if err != nil {
		return nil, false, fmt.Errorf("list agents: %w", err)
	}
	return list, more, nil
}
