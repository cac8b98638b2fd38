package record

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard/core"
)

// NewMemoryStore is the memory store record CreateMemoryStore stores for
// in at now: an id given when in has none, its prefix, name and limits
// checked.
func NewMemoryStore(in *core.MemoryStore, now core.Time) (*core.MemoryStore, error) {
	m := *in
	if err := newID(&m.ID, core.PrefixMemoryStore, "create memory store", "a memory store id"); err != nil {
		return nil, err
	}
	m.CreatedAt, m.UpdatedAt = now, now
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return &m, nil
}

// UpdateMemoryStore applies update to next, a copy of cur it may change
// freely, then puts back what the store owns (id, created_at), stamps
// updated_at and checks the result.
func UpdateMemoryStore(cur, next *core.MemoryStore, update func(*core.MemoryStore) error, now core.Time) error {
	if err := update(next); err != nil {
		return fmt.Errorf("memory store %s: %w", cur.ID, err)
	}
	next.ID, next.CreatedAt, next.UpdatedAt = cur.ID, cur.CreatedAt, now
	return next.Validate()
}

// maxPartitionBytes bounds a partition's name (a tenant).
const maxPartitionBytes = 256

// ValidMemoryPartition checks a partition's name: a tenant or
// core.SharedPartition, which the bbolt store ends with 0x00 in its keys.
func ValidMemoryPartition(p string) error {
	if p == "" || len(p) > maxPartitionBytes || !utf8.ValidString(p) {
		return fmt.Errorf("memory tenant %q: want valid UTF-8 of 1 to %d bytes: %w", p, maxPartitionBytes, core.ErrInvalid)
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("memory tenant %q: control characters are not allowed: %w", p, core.ErrInvalid)
		}
	}
	return nil
}

// CheckMemoryChange refuses a malformed change before any transaction.
func CheckMemoryChange(c core.MemoryChange) error {
	if c.Store == "" {
		return fmt.Errorf("memory change: store is required: %w", core.ErrInvalid)
	}
	if err := ValidMemoryPartition(c.Partition); err != nil {
		return err
	}
	if err := core.ValidMemoryPath(c.Path); err != nil {
		return err
	}
	if c.IfVersion != nil && *c.IfVersion < 0 {
		return fmt.Errorf("memory file %q: if_version %d is negative: %w", c.Path, *c.IfVersion, core.ErrInvalid)
	}
	switch c.Op {
	case core.MemoryOpWrite:
		if !utf8.ValidString(c.Content) {
			return fmt.Errorf("memory file %q: content is not valid UTF-8: %w", c.Path, core.ErrInvalid)
		}
	case core.MemoryOpDelete:
	case core.MemoryOpRename:
		if err := core.ValidMemoryPath(c.NewPath); err != nil {
			return fmt.Errorf("new path: %w", err)
		}
		if c.NewPath == c.Path {
			return fmt.Errorf("memory file %q: renamed to itself: %w", c.Path, core.ErrInvalid)
		}
	case core.MemoryOpRevert:
		if c.Version <= 0 {
			return fmt.Errorf("memory file %q: revert needs a version, not %d: %w", c.Path, c.Version, core.ErrInvalid)
		}
	default:
		return fmt.Errorf("memory change: op %q: want write, delete, rename or revert: %w", c.Op, core.ErrInvalid)
	}
	return nil
}

// MemoryEntry is what a change needs to know of a retained version.
type MemoryEntry struct {
	Path    string
	Version int
	Deleted bool
	Size    int
	// Seq orders a partition's versions by when they were written.
	Seq int64
}

// MemoryPlan is what a change writes and prunes, in one transaction.
type MemoryPlan struct {
	// Write are the new versions, content included, in the order
	// written; the store gives each the next Seq.
	Write []core.MemoryVersion
	Prune []MemoryEntry
}

// PlanMemoryChange decides a change checked by CheckMemoryChange against
// the partition's retained versions, under the store's limits; content
// reads a retained version's content. Both stores call it inside the
// transaction that applies the plan, holding the partition against other
// changes, so the limits and IfVersion hold.
func PlanMemoryChange(st *core.MemoryStore, c core.MemoryChange, retained []MemoryEntry,
	content func(path string, version int) (string, error), now core.Time) (*MemoryPlan, error) {
	lim := st.Limits.Or(core.DefaultMemoryLimits)
	files := map[string][]MemoryEntry{}
	for _, e := range retained {
		files[e.Path] = append(files[e.Path], e)
	}
	for _, vs := range files {
		slices.SortFunc(vs, func(a, b MemoryEntry) int { return cmp.Compare(a.Version, b.Version) })
	}
	latest := func(p string) *MemoryEntry {
		if vs := files[p]; len(vs) > 0 {
			return &vs[len(vs)-1]
		}
		return nil
	}
	live := func(p string) *MemoryEntry {
		if l := latest(p); l != nil && !l.Deleted {
			return l
		}
		return nil
	}
	if c.IfVersion != nil {
		actual := 0
		if l := live(c.Path); l != nil {
			actual = l.Version
		}
		if actual != *c.IfVersion {
			return nil, fmt.Errorf("memory file %q: expected version %d, the latest is %d (0: none): %w", c.Path, *c.IfVersion, actual, core.ErrConflict)
		}
	}
	stamp := func(path, op string, deleted bool, text string) core.MemoryVersion {
		next := 1
		if l := latest(path); l != nil {
			next = l.Version + 1
		}
		return core.MemoryVersion{
			Store: st.ID, Partition: c.Partition, Path: path, Version: next, Op: op, Deleted: deleted,
			Size: len(text), Content: text, SessionID: c.SessionID, TurnID: c.TurnID, By: c.By, CreatedAt: now,
		}
	}
	notFound := func() error {
		return fmt.Errorf("memory file %q in store %s, tenant %q: %w", c.Path, st.ID, c.Partition, core.ErrNotFound)
	}
	var write []core.MemoryVersion
	switch c.Op {
	case core.MemoryOpWrite:
		write = append(write, stamp(c.Path, c.Op, false, c.Content))
	case core.MemoryOpDelete:
		if live(c.Path) == nil {
			return nil, notFound()
		}
		write = append(write, stamp(c.Path, c.Op, true, ""))
	case core.MemoryOpRename:
		src := live(c.Path)
		if src == nil {
			return nil, notFound()
		}
		if dst := live(c.NewPath); dst != nil {
			return nil, fmt.Errorf("memory file %q exists (version %d): %w", c.NewPath, dst.Version, core.ErrConflict)
		}
		text, err := content(c.Path, src.Version)
		if err != nil {
			return nil, err
		}
		write = append(write, stamp(c.Path, c.Op, true, ""), stamp(c.NewPath, c.Op, false, text))
	case core.MemoryOpRevert:
		i := slices.IndexFunc(files[c.Path], func(e MemoryEntry) bool { return e.Version == c.Version })
		if i < 0 || files[c.Path][i].Deleted {
			return nil, fmt.Errorf("memory file %q version %d: no retained version with content: %w", c.Path, c.Version, core.ErrNotFound)
		}
		text, err := content(c.Path, c.Version)
		if err != nil {
			return nil, err
		}
		write = append(write, stamp(c.Path, c.Op, false, text))
	default:
		return nil, fmt.Errorf("memory change: op %q: %w", c.Op, core.ErrInvalid)
	}
	for _, v := range write {
		if v.Size > lim.MaxFileBytes {
			return nil, fmt.Errorf("memory file %q: %d bytes, more than the store's max_file_bytes %d: %w", v.Path, v.Size, lim.MaxFileBytes, core.ErrInvalid)
		}
	}
	plan := &MemoryPlan{Write: write}
	for _, v := range write {
		vs := append(files[v.Path], MemoryEntry{Path: v.Path, Version: v.Version, Deleted: v.Deleted, Size: v.Size})
		if n := len(vs) - lim.MaxVersions; n > 0 {
			plan.Prune = append(plan.Prune, vs[:n]...)
			vs = vs[n:]
		}
		files[v.Path] = vs
	}
	if err := prunePartition(st, c.Partition, files, lim.MaxPartitionBytes, plan); err != nil {
		return nil, err
	}
	return plan, nil
}

// prunePartition adds to plan the oldest versions that are not a file's
// latest until the partition fits max, or refuses when the latest
// versions alone do not.
func prunePartition(st *core.MemoryStore, partition string, files map[string][]MemoryEntry, max int64, plan *MemoryPlan) error {
	var total, latest int64
	var older []MemoryEntry
	for _, vs := range files {
		for i, e := range vs {
			total += int64(e.Size)
			if i == len(vs)-1 {
				latest += int64(e.Size)
			} else {
				older = append(older, e)
			}
		}
	}
	if total <= max {
		return nil
	}
	if latest > max {
		return fmt.Errorf("memory store %s, tenant %q: the files' latest versions would hold %d bytes, more than max_partition_bytes %d: %w",
			st.ID, partition, latest, max, core.ErrInvalid)
	}
	slices.SortFunc(older, func(a, b MemoryEntry) int { return cmp.Compare(a.Seq, b.Seq) })
	for _, e := range older {
		if total <= max {
			break
		}
		plan.Prune = append(plan.Prune, e)
		total -= int64(e.Size)
	}
	return nil
}

// MemoryVersionBody is the JSON both stores keep of a version: all but
// its content, which they keep apart, so listings never read it.
func MemoryVersionBody(v core.MemoryVersion) ([]byte, error) {
	v.Content = ""
	raw, err := core.EncodeJSON(&v)
	if err != nil {
		return nil, fmt.Errorf("encode memory file %q version %d: %w", v.Path, v.Version, err)
	}
	return raw, nil
}

// ResolveMemoryStores checks the memory stores an agent names, before the
// version is saved, in the transaction that saves it: each names an
// existing store by id or name (get finds it; the id is kept), with a
// known access (read_write when empty), none twice.
func ResolveMemoryStores(refs []core.MemoryStoreRef, get func(idOrName string) (*core.MemoryStore, error)) ([]core.MemoryStoreRef, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	out := make([]core.MemoryStoreRef, len(refs))
	seen := map[string]int{}
	for i, r := range refs {
		switch r.Access {
		case "":
			r.Access = core.MemoryReadWrite
		case core.MemoryReadOnly, core.MemoryReadWrite:
		default:
			return nil, fmt.Errorf("memory_stores[%d]: access %q: want read_only or read_write: %w", i, r.Access, core.ErrInvalid)
		}
		if r.ID == "" {
			return nil, fmt.Errorf("memory_stores[%d]: id is required: %w", i, core.ErrInvalid)
		}
		m, err := get(r.ID)
		switch {
		case errors.Is(err, core.ErrNotFound):
			return nil, fmt.Errorf("memory_stores[%d]: no memory store %q: %w", i, r.ID, core.ErrInvalid)
		case err != nil:
			return nil, fmt.Errorf("memory_stores[%d]: %w", i, err)
		}
		if j, dup := seen[m.ID]; dup {
			return nil, fmt.Errorf("memory_stores[%d]: memory store %s is also memory_stores[%d]: %w", i, m.ID, j, core.ErrInvalid)
		}
		seen[m.ID] = i
		out[i] = core.MemoryStoreRef{ID: m.ID, Access: r.Access}
	}
	return out, nil
}

// NamesMemoryStore reports whether an agent's version names the store.
func NamesMemoryStore(a *core.Agent, storeID string) bool {
	return slices.ContainsFunc(a.MemoryStores, func(r core.MemoryStoreRef) bool { return r.ID == storeID })
}

// MemoryStoreInUse is the refusal of deleting a store that the latest
// versions of agents (names, sorted) name.
func MemoryStoreInUse(storeID string, agents []string) error {
	if len(agents) == 0 {
		return nil
	}
	slices.Sort(agents)
	return fmt.Errorf("memory store %s is named by agents %q; remove it from them first: %w", storeID, agents, core.ErrConflict)
}
