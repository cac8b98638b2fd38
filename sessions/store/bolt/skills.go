package bolt

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
	"go.etcd.io/bbolt"
)

var _ core.SkillStore = (*Store)(nil)

// Skill bucket names; doc.go describes what each holds.
const (
	bucketSkills        = "skills"
	bucketSkillNames    = "skill_names"
	bucketSkillVersions = "skill_versions"
	bucketSkillContents = "skill_contents"
)

// skillContentKey keys a file's content under its skill by its digest,
// so the versions of a skill share the files they have in common.
func skillContentKey(id, sha256Hex string) ([]byte, error) {
	sum, err := hex.DecodeString(sha256Hex)
	if err != nil || len(sum) != 32 {
		return nil, fmt.Errorf("skill %s: digest %q is not a sha256", id, sha256Hex)
	}
	return append([]byte(id), sum...), nil
}

func decodeSkill(v []byte) (*core.Skill, error) { return record.Decode[core.Skill]("skill", v) }

// getSkill reads a version of the skill with this id or name, 0 the
// latest. Names never look like ids, so the two never collide.
func getSkill(tx *bbolt.Tx, idOrName string, version int) (*core.Skill, error) {
	skills := bkt(tx, bucketSkills)
	v := skills.Get([]byte(idOrName))
	if v == nil {
		if id := bkt(tx, bucketSkillNames).Get([]byte(idOrName)); id != nil {
			v = skills.Get(id)
		}
	}
	if v == nil {
		return nil, fmt.Errorf("skill %q: %w", idOrName, core.ErrNotFound)
	}
	latest, err := decodeSkill(v)
	if err != nil || version == 0 || version == latest.Version {
		return latest, err
	}
	if version < 0 || version > latest.Version {
		return nil, fmt.Errorf("skill %s version %d: %w", latest.ID, version, core.ErrNotFound)
	}
	v = bkt(tx, bucketSkillVersions).Get(versionKey(latest.ID, version))
	if v == nil {
		return nil, fmt.Errorf("skill %s version %d is missing", latest.ID, version)
	}
	return decodeSkill(v)
}

// putSkill writes sk as the latest version, as its immutable version
// record, and the contents of its files from files, and returns it as
// decoded from the stored bytes.
func putSkill(tx *bbolt.Tx, sk *core.Skill, files map[string][]byte) (*core.Skill, error) {
	v, err := record.Encode("skill", sk.ID, sk)
	if err != nil {
		return nil, err
	}
	if err := bkt(tx, bucketSkills).Put([]byte(sk.ID), v); err != nil {
		return nil, err
	}
	if err := bkt(tx, bucketSkillVersions).Put(versionKey(sk.ID, sk.Version), v); err != nil {
		return nil, err
	}
	contents := bkt(tx, bucketSkillContents)
	for _, f := range sk.Files {
		k, err := skillContentKey(sk.ID, f.SHA256)
		if err != nil {
			return nil, err
		}
		if contents.Get(k) != nil {
			continue
		}
		if err := contents.Put(k, files[f.Path]); err != nil {
			return nil, err
		}
	}
	return decodeSkill(v)
}

// CreateSkill saves version 1 of a new skill under a unique name.
func (s *Store) CreateSkill(ctx context.Context, up core.SkillUpload) (*core.Skill, error) {
	sk, err := record.NewSkill(up, s.clock())
	if err != nil {
		return nil, fmt.Errorf("create skill: %w", err)
	}
	out, err := writeOne(ctx, s, "create skill", func(tx *bbolt.Tx) (*core.Skill, error) {
		if err := claimName(bkt(tx, bucketSkillNames), "skill", sk.Name, sk.ID); err != nil {
			return nil, err
		}
		return putSkill(tx, sk, up.Files)
	})
	if err == nil {
		s.log.Debug("skill created", "skill_id", out.ID, "files", len(out.Files))
	}
	return out, err
}

// UpdateSkill saves up as the next version of the skill.
func (s *Store) UpdateSkill(ctx context.Context, idOrName string, up core.SkillUpload) (*core.Skill, error) {
	next, err := record.NewSkillVersion(up, s.clock())
	if err != nil {
		return nil, fmt.Errorf("update skill %s: %w", idOrName, err)
	}
	return writeOne(ctx, s, "update skill "+idOrName, func(tx *bbolt.Tx) (*core.Skill, error) {
		cur, err := getSkill(tx, idOrName, 0)
		if err != nil {
			return nil, err
		}
		record.NextSkill(cur, next)
		if err := moveName(bkt(tx, bucketSkillNames), "skill", cur.ID, cur.Name, next.Name); err != nil {
			return nil, err
		}
		return putSkill(tx, next, up.Files)
	})
}

// GetSkill returns a version of the skill with this id or name; 0 is the
// latest.
func (s *Store) GetSkill(ctx context.Context, idOrName string, version int) (*core.Skill, error) {
	return viewOne(ctx, s, "get skill", func(tx *bbolt.Tx) (*core.Skill, error) { return getSkill(tx, idOrName, version) })
}

// ListSkills pages through the skills' latest versions in id order.
func (s *Store) ListSkills(ctx context.Context, after string, limit int) ([]*core.Skill, bool, error) {
	list, more, err := listPage(ctx, s, bucketSkills, after, limit, decodeSkill)
	if err != nil {
		return nil, false, fmt.Errorf("list skills: %w", err)
	}
	return list, more, nil
}

// SkillFile returns the content of one file of a skill version (0: the
// latest).
func (s *Store) SkillFile(ctx context.Context, id string, version int, path string) ([]byte, error) {
	return viewOne(ctx, s, "skill file", func(tx *bbolt.Tx) ([]byte, error) {
		sk, err := getSkill(tx, id, version)
		if err != nil {
			return nil, err
		}
		f, err := record.SkillFileOf(sk, path)
		if err != nil {
			return nil, err
		}
		k, err := skillContentKey(sk.ID, f.SHA256)
		if err != nil {
			return nil, err
		}
		v := bkt(tx, bucketSkillContents).Get(k)
		if v == nil && f.Size > 0 {
			return nil, fmt.Errorf("skill %s version %d: the content of %q is missing", sk.ID, sk.Version, path)
		}
		// bbolt's memory is only valid inside the transaction.
		return append([]byte{}, v...), nil
	})
}

// DeleteSkill deletes every version of the skill and its files, unless
// an agent's latest version or a session that is not archived pins it:
// checked in the transaction that deletes.
func (s *Store) DeleteSkill(ctx context.Context, idOrName string) error {
	id, err := writeOne(ctx, s, "delete skill", func(tx *bbolt.Tx) (string, error) {
		sk, err := getSkill(tx, idOrName, 0)
		if err != nil {
			return "", err
		}
		if err := skillInUse(tx, sk); err != nil {
			return "", err
		}
		if err := bkt(tx, bucketSkillNames).Delete([]byte(sk.Name)); err != nil {
			return "", err
		}
		if err := bkt(tx, bucketSkills).Delete([]byte(sk.ID)); err != nil {
			return "", err
		}
		for _, name := range []string{bucketSkillVersions, bucketSkillContents} {
			if err := deletePrefix(bkt(tx, name), []byte(sk.ID)); err != nil {
				return "", err
			}
		}
		return sk.ID, nil
	})
	if err == nil {
		s.log.Debug("skill deleted", "skill_id", id)
	}
	return err
}

// deletePrefix deletes the keys of b that start with prefix.
func deletePrefix(b *bbolt.Bucket, prefix []byte) error {
	// Collected first: bbolt cursors must not walk a bucket while it is
	// being deleted from.
	var keys [][]byte
	c := b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		keys = append(keys, bytes.Clone(k))
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// skillInUse refuses to delete a skill that the latest version of an
// agent pins, or an agent version that a session not archived runs. It
// reads every agent version, and the sessions only when one pins the
// skill.
func skillInUse(tx *bbolt.Tx, sk *core.Skill) error {
	use := record.NewSkillUse(sk)
	if err := bkt(tx, bucketAgentVersions).ForEach(func(_, v []byte) error { return use.AgentVersion(v) }); err != nil {
		return err
	}
	pinned := use.Pinned()
	if len(pinned) == 0 {
		return nil
	}
	for _, id := range pinned {
		a, err := getAgent(tx, id)
		if err != nil {
			return err
		}
		use.Agent(a.ID, a.Name, a.Version)
	}
	if err := bkt(tx, bucketSessions).ForEach(func(_, v []byte) error { return use.Session(v) }); err != nil {
		return err
	}
	return use.Err()
}
