package memory

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// target is a path the model named: a file or directory rel of mount m
// ("" its root), or the memory root itself when the agent has several
// stores (m nil).
type target struct {
	m   *mount
	rel string
}

func (g target) show() string {
	if g.m == nil {
		return core.MemoryRoot
	}
	return g.m.show(g.rel)
}

// resolve maps a path under /memories to its store and the path the store
// keeps it at; field names the input field for errors.
func (t *tool) resolve(field, p string) (target, error) {
	if p == "" {
		return target{}, fail("%s is required: a path under %s", field, core.MemoryRoot)
	}
	if strings.ContainsRune(p, 0) {
		return target{}, fail("%s %q contains a NUL byte", field, p)
	}
	trimmed := p
	if len(trimmed) > 1 {
		trimmed = strings.TrimRight(trimmed, "/")
	}
	rel, ok := strings.CutPrefix(trimmed, core.MemoryRoot)
	if !ok || (rel != "" && rel[0] != '/') {
		return target{}, fail("%s %q is outside %s: memory paths start with %s/", field, p, core.MemoryRoot, core.MemoryRoot)
	}
	rel = strings.TrimPrefix(rel, "/")
	if slices.Contains(strings.Split(rel, "/"), "..") {
		return target{}, fail("%s %q escapes %s: \"..\" is not allowed", field, p, core.MemoryRoot)
	}
	if rel != "" {
		if err := core.ValidMemoryPath(rel); err != nil {
			return target{}, fail("%s %q: %s", field, p, reason(err))
		}
	}
	if len(t.mounts) == 1 {
		return target{m: t.mounts[0], rel: rel}, nil
	}
	if rel == "" {
		return target{}, nil
	}
	dir, rest, _ := strings.Cut(rel, "/")
	for _, m := range t.mounts {
		if m.dir == dir {
			return target{m: m, rel: rest}, nil
		}
	}
	return target{}, fail("%s %q: no memory store %q; view %s lists the stores", field, p, dir, core.MemoryRoot)
}

// file resolves a path that must name a file (not the root of a store).
func (t *tool) file(field, p string) (target, error) {
	g, err := t.resolve(field, p)
	if err != nil {
		return target{}, err
	}
	if g.rel == "" {
		return target{}, fail("%s %q is a directory, not a file", field, p)
	}
	return g, nil
}

// writable refuses changes to a store the agent may only read.
func writable(g target) error {
	if g.m.readOnly {
		return fail("memory store %q is read-only: %s cannot be changed", g.m.store.Name, g.show())
	}
	return nil
}

// reason is a store's or a check's message without the sentinel's words.
func reason(err error) string {
	msg := err.Error()
	for _, s := range []error{core.ErrInvalid, core.ErrNotFound, core.ErrConflict} {
		msg = strings.TrimSuffix(msg, ": "+s.Error())
	}
	return msg
}

// files lists the latest files of the mount.
func (t *tool) files(ctx context.Context, m *mount, withContent bool) ([]core.MemoryVersion, error) {
	return t.stores.MemoryFiles(ctx, m.store.ID, m.partition, withContent)
}

// under keeps the files at or below rel ("" keeps all).
func under(files []core.MemoryVersion, rel string) []core.MemoryVersion {
	if rel == "" {
		return files
	}
	var out []core.MemoryVersion
	for _, f := range files {
		if f.Path == rel || strings.HasPrefix(f.Path, rel+"/") {
			out = append(out, f)
		}
	}
	return out
}

// change writes one change for the session's turn. What the model can
// act on (a concurrent edit, a limit, a file gone) comes back as a tool
// error.
func (t *tool) change(ctx context.Context, call core.ToolCall, g target, c core.MemoryChange) error {
	c.Store, c.Partition, c.SessionID, c.TurnID = g.m.store.ID, g.m.partition, call.SessionID, call.TurnID
	if c.Path == "" {
		c.Path = g.rel
	}
	written, err := t.stores.ChangeMemory(ctx, c)
	if err == nil {
		t.embedWritten(ctx, g.m, written)
	}
	switch {
	case errors.Is(err, core.ErrConflict):
		return fail("%s was changed by another session since you read it: view it again and retry", g.m.show(c.Path))
	case errors.Is(err, core.ErrInvalid):
		return fail("%s: %s", g.m.show(c.Path), reason(err))
	case errors.Is(err, core.ErrNotFound):
		return fail("%s does not exist (another session may have deleted it)", g.m.show(c.Path))
	}
	return err
}

// latest reads a file's latest version, or says it does not exist.
func (t *tool) latest(ctx context.Context, g target) (*core.MemoryVersion, error) {
	v, err := t.stores.MemoryFile(ctx, g.m.store.ID, g.m.partition, g.rel, 0)
	if errors.Is(err, core.ErrNotFound) {
		return nil, fail("%s does not exist", g.show())
	}
	return v, err
}
