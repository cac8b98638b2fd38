package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
)

var _ core.SkillStore = (*Store)(nil)

// skillByIDOrName selects a skill's latest version by id first and by
// name second (a name never looks like an id); the caller appends a
// locking clause when it writes.
const skillByIDOrName = `SELECT body FROM skills WHERE id = $1 OR name = $1 ORDER BY id = $1 DESC LIMIT 1`

// Locking clauses of skillByIDOrName: a write of the skill takes its row
// for update; an agent version that pins the skill shares it, so that
// DeleteSkill, which takes it for update, sees the agent (see
// 008_skills.sql).
const (
	lockSkill  = ` FOR UPDATE`
	shareSkill = ` FOR SHARE`
)

// getSkill reads a version of the skill with this id or name, 0 the
// latest; lock is "" or a locking clause for the skill's row.
func getSkill(ctx context.Context, q querier, idOrName string, version int, lock string) (*core.Skill, error) {
	latest, err := getBody[core.Skill](ctx, q, "skill", idOrName, skillByIDOrName+lock, idOrName)
	if err != nil || version == 0 || version == latest.Version {
		return latest, err
	}
	if version < 0 || version > latest.Version {
		return nil, fmt.Errorf("skill %s version %d: %w", latest.ID, version, core.ErrNotFound)
	}
	return getBody[core.Skill](ctx, q, "skill version", fmt.Sprintf("%s@%d", latest.ID, version),
		`SELECT body FROM skill_versions WHERE skill_id = $1 AND version = $2`, latest.ID, version)
}

// skillsIn reads skills in tx for an agent version that pins them, for
// record.ResolveSkills.
func skillsIn(ctx context.Context, tx pgx.Tx) func(string, int) (*core.Skill, error) {
	return func(idOrName string, version int) (*core.Skill, error) {
		return getSkill(ctx, tx, idOrName, version, shareSkill)
	}
}

// skillNameTaken is the error of a name the unique constraint refused.
func skillNameTaken(name string) error {
	return fmt.Errorf("skill name %q is taken: %w", name, core.ErrConflict)
}

// putSkill writes sk as the latest version (inserted when insert is set),
// as its immutable version record, and the contents of its files from
// files that the skill does not have yet, and returns it as decoded from
// the stored bytes.
func putSkill(ctx context.Context, tx pgx.Tx, sk *core.Skill, files map[string][]byte, insert bool) (*core.Skill, error) {
	v, err := record.Encode("skill", sk.ID, sk)
	if err != nil {
		return nil, err
	}
	latest := `UPDATE skills SET name = $2, version = $3, body = $4 WHERE id = $1`
	if insert {
		latest = `INSERT INTO skills (id, name, version, body) VALUES ($1, $2, $3, $4)`
	}
	b := &pgx.Batch{}
	b.Queue(latest, sk.ID, sk.Name, sk.Version, v)
	b.Queue(`INSERT INTO skill_versions (skill_id, version, body) VALUES ($1, $2, $3)`, sk.ID, sk.Version, v)
	for _, f := range sk.Files {
		b.Queue(`INSERT INTO skill_contents (skill_id, sha256, content) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
			sk.ID, f.SHA256, nonNil(files[f.Path]))
	}
	err = tx.SendBatch(ctx, b).Close()
	switch {
	case isUnique(err, "skills_name_key"):
		return nil, skillNameTaken(sk.Name)
	case err != nil:
		return nil, err
	}
	return record.Decode[core.Skill]("skill", v)
}

// CreateSkill saves version 1 of a new skill under a unique name.
func (s *Store) CreateSkill(ctx context.Context, up core.SkillUpload) (*core.Skill, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	sk, err := record.NewSkill(up, s.clock())
	if err != nil {
		return nil, fmt.Errorf("create skill: %w", err)
	}
	var out *core.Skill
	err = s.do(ctx, func(tx pgx.Tx) error {
		var err error
		out, err = putSkill(ctx, tx, sk, up.Files, true)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("create skill: %w", err)
	}
	s.log.Debug("skill created", "skill_id", out.ID, "files", len(out.Files))
	return out, nil
}

// UpdateSkill saves up as the next version of the skill. The skill's row
// stays locked from the read to the write, so no other version can slip
// in between.
func (s *Store) UpdateSkill(ctx context.Context, idOrName string, up core.SkillUpload) (*core.Skill, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	next, err := record.NewSkillVersion(up, s.clock())
	if err != nil {
		return nil, fmt.Errorf("update skill %s: %w", idOrName, err)
	}
	var out *core.Skill
	err = s.do(ctx, func(tx pgx.Tx) error {
		cur, err := getSkill(ctx, tx, idOrName, 0, lockSkill)
		if err != nil {
			return err
		}
		record.NextSkill(cur, next)
		out, err = putSkill(ctx, tx, next, up.Files, false)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("update skill %s: %w", idOrName, err)
	}
	return out, nil
}

// GetSkill returns a version of the skill with this id or name; 0 is the
// latest.
func (s *Store) GetSkill(ctx context.Context, idOrName string, version int) (*core.Skill, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	sk, err := getSkill(ctx, s.poolFor(ctx), idOrName, version, "")
	if err != nil {
		return nil, fmt.Errorf("get skill: %w", err)
	}
	return sk, nil
}

// ListSkills pages through the skills' latest versions in id order.
func (s *Store) ListSkills(ctx context.Context, after string, limit int) ([]*core.Skill, bool, error) {
	return bodyPage[core.Skill](ctx, s, "skills", `SELECT body FROM skills WHERE id > $1 ORDER BY id LIMIT $2`, after, limit)
}

// SkillFile returns the content of one file of a skill version (0: the
// latest).
func (s *Store) SkillFile(ctx context.Context, id string, version int, path string) ([]byte, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	content, err := func() ([]byte, error) {
		q := s.poolFor(ctx)
		sk, err := getSkill(ctx, q, id, version, "")
		if err != nil {
			return nil, err
		}
		f, err := record.SkillFileOf(sk, path)
		if err != nil {
			return nil, err
		}
		var content []byte
		if err := q.QueryRow(ctx, `SELECT content FROM skill_contents WHERE skill_id = $1 AND sha256 = $2`, sk.ID, f.SHA256).Scan(&content); err != nil {
			return nil, fmt.Errorf("skill %s version %d: the content of %q: %w", sk.ID, sk.Version, path, err)
		}
		return content, nil
	}()
	if err != nil {
		return nil, fmt.Errorf("skill file: %w", err)
	}
	return content, nil
}

// DeleteSkill deletes every version of the skill and its files, unless
// an agent's latest version or a session that is not archived pins it:
// checked under the skill's row lock, in the transaction that deletes.
func (s *Store) DeleteSkill(ctx context.Context, idOrName string) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	var id string
	err := s.do(ctx, func(tx pgx.Tx) error {
		sk, err := getSkill(ctx, tx, idOrName, 0, lockSkill)
		if err != nil {
			return err
		}
		id = sk.ID
		if err := skillInUse(ctx, tx, sk); err != nil {
			return err
		}
		b := &pgx.Batch{}
		b.Queue(`DELETE FROM skills WHERE id = $1`, sk.ID)
		b.Queue(`DELETE FROM skill_versions WHERE skill_id = $1`, sk.ID)
		b.Queue(`DELETE FROM skill_contents WHERE skill_id = $1`, sk.ID)
		return tx.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return fmt.Errorf("delete skill: %w", err)
	}
	s.log.Debug("skill deleted", "skill_id", id)
	return nil
}

// skillInUse refuses to delete a skill that the latest version of an
// agent pins, or an agent version that a session not archived runs. The
// agent versions whose JSON holds the skill's id are read, and the
// sessions of their agents only when one pins it.
func skillInUse(ctx context.Context, tx pgx.Tx, sk *core.Skill) error {
	use := record.NewSkillUse(sk)
	err := eachBody(ctx, tx, use.AgentVersion, `SELECT body FROM agent_versions WHERE position($1::bytea IN body) > 0`, []byte(sk.ID))
	if err != nil {
		return err
	}
	pinned := use.Pinned()
	if len(pinned) == 0 {
		return nil
	}
	rows, err := tx.Query(ctx, `SELECT id, name, version FROM agents WHERE id = ANY($1)`, pinned)
	if err != nil {
		return err
	}
	var id, name string
	var version int
	if _, err := pgx.ForEachRow(rows, []any{&id, &name, &version}, func() error {
		use.Agent(id, name, version)
		return nil
	}); err != nil {
		return err
	}
	err = eachBody(ctx, tx, use.Session, `SELECT body FROM sessions WHERE agent_id = ANY($1) AND status <> $2`, pinned, string(core.StatusArchived))
	if err != nil {
		return err
	}
	return use.Err()
}

// eachBody calls fn with the body column of each row query selects.
func eachBody(ctx context.Context, q querier, fn func([]byte) error, query string, args ...any) error {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return err
	}
	var body []byte
	_, err = pgx.ForEachRow(rows, []any{&body}, func() error { return fn(body) })
	return err
}
