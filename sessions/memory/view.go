package memory

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// view shows a directory's tree or a file's numbered lines.
func (t *tool) view(ctx context.Context, in input) (string, error) {
	if in.Path == "" {
		in.Path = core.MemoryRoot
	}
	g, err := t.resolve("path", in.Path)
	if err != nil {
		return "", err
	}
	if g.m == nil {
		return t.viewStores(ctx)
	}
	files, err := t.files(ctx, g.m, false)
	if err != nil {
		return "", err
	}
	if g.rel != "" && slices.ContainsFunc(files, func(f core.MemoryVersion) bool { return f.Path == g.rel }) {
		return t.viewFile(ctx, g, in.ViewRange)
	}
	if in.ViewRange != nil {
		return "", fail("view_range is for files; %s is a directory", g.show())
	}
	files = under(files, g.rel)
	if g.rel != "" && len(files) == 0 {
		return "", fail("%s does not exist", g.show())
	}
	var entries []entry
	for _, f := range files {
		entries = append(entries, entry{path: strings.TrimPrefix(strings.TrimPrefix(f.Path, g.rel), "/"), size: f.Size})
	}
	return listing(g.show(), entries, nil), nil
}

// viewStores lists the stores under /memories, and their top entries.
func (t *tool) viewStores(ctx context.Context) (string, error) {
	var entries []entry
	var dirs, notes []string
	for _, m := range t.mounts {
		files, err := t.files(ctx, m, false)
		if err != nil {
			return "", err
		}
		for _, f := range files {
			entries = append(entries, entry{path: m.dir + "/" + f.Path, size: f.Size})
		}
		dirs = append(dirs, m.dir)
		note := m.root() + "/"
		if m.readOnly {
			note += " (read-only)"
		}
		if m.store.Description != "" {
			note += ": " + m.store.Description
		}
		notes = append(notes, note)
	}
	return listing(core.MemoryRoot, entries, dirs) + "\nMemory stores:\n" + strings.Join(notes, "\n") + "\n", nil
}

// entry is a file below the directory a listing shows.
type entry struct {
	path string // relative to the directory
	size int
}

// listing shows the files and directories up to two levels below base,
// each with its size (a directory's is that of the files below it);
// dirs are directories to show even when empty.
func listing(base string, entries []entry, dirs []string) string {
	sizes := map[string]int{}
	for _, d := range dirs {
		sizes[d+"/"] += 0
	}
	total := 0
	for _, e := range entries {
		total += e.size
		segs := strings.Split(e.path, "/")
		for depth := 1; depth <= 2 && depth <= len(segs); depth++ {
			name := strings.Join(segs[:depth], "/")
			if depth < len(segs) {
				name += "/"
			}
			sizes[name] += e.size
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The files and directories up to 2 levels deep in %s:\n", base)
	fmt.Fprintf(&b, "%s\t%s/\n", human(total), base)
	names := make([]string, 0, len(sizes))
	for n := range sizes {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(&b, "%s\t%s/%s\n", human(sizes[n]), base, n)
	}
	if len(names) == 0 {
		b.WriteString("(no files yet)\n")
	}
	return b.String()
}

// human is a size as du -h shows it.
func human(n int) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%dB", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1fK", float64(n)/1024)
	}
	return fmt.Sprintf("%.1fM", float64(n)/(1024*1024))
}

// viewFile shows a file's lines, numbered, or the part view_range names.
func (t *tool) viewFile(ctx context.Context, g target, span []int) (string, error) {
	v, err := t.latest(ctx, g)
	if err != nil {
		return "", err
	}
	lines := splitLines(v.Content)
	first, last := 1, len(lines)
	if span != nil {
		if len(span) != 2 {
			return "", fail("view_range must be [start, end], got %d numbers", len(span))
		}
		first, last = span[0], span[1]
		if last == -1 {
			last = len(lines)
		}
		switch {
		case first < 1 || first > max(len(lines), 1):
			return "", fail("view_range start %d: %s has %d lines", first, g.show(), len(lines))
		case last < first:
			return "", fail("view_range end %d is before its start %d (use -1 for the last line)", span[1], first)
		}
		last = min(last, len(lines))
	}
	if len(lines) == 0 {
		return fmt.Sprintf("%s is empty.\n", g.show()), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The content of %s (version %d) with line numbers:\n", g.show(), v.Version)
	for i := first; i <= last; i++ {
		fmt.Fprintf(&b, "%6d\t%s\n", i, lines[i-1])
	}
	return b.String(), nil
}

// splitLines splits content into lines; a final newline ends the last
// line rather than starting an empty one.
func splitLines(content string) []string {
	if content == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(content, "\n"), "\n")
}
