package memory

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// create writes a whole file, replacing it when it exists.
func (t *tool) create(ctx context.Context, call core.ToolCall, in input) (string, error) {
	g, err := t.file("path", in.Path)
	if err != nil {
		return "", err
	}
	if err := writable(g); err != nil {
		return "", err
	}
	if in.FileText == nil {
		return "", fail("file_text is required: the file's whole content")
	}
	files, err := t.files(ctx, g.m, false)
	if err != nil {
		return "", err
	}
	replaced := false
	for _, f := range files {
		switch {
		case f.Path == g.rel:
			replaced = true
		case strings.HasPrefix(f.Path, g.rel+"/"):
			return "", fail("%s is a directory: create a file in it, or pick another name", g.show())
		case strings.HasPrefix(g.rel, f.Path+"/"):
			return "", fail("%s is a file, so %s cannot be created under it", g.m.show(f.Path), g.show())
		}
	}
	if err := t.change(ctx, call, g, core.MemoryChange{Op: core.MemoryOpWrite, Content: *in.FileText}); err != nil {
		return "", err
	}
	if replaced {
		return fmt.Sprintf("Replaced %s (%d bytes).", g.show(), len(*in.FileText)), nil
	}
	return fmt.Sprintf("Created %s (%d bytes).", g.show(), len(*in.FileText)), nil
}

// edit reads the file's latest version and writes what rewrite makes of
// it, expecting that version still to be the latest.
func (t *tool) edit(ctx context.Context, call core.ToolCall, path string, rewrite func(g target, content string) (string, error)) (target, error) {
	g, err := t.file("path", path)
	if err != nil {
		return g, err
	}
	if err := writable(g); err != nil {
		return g, err
	}
	v, err := t.latest(ctx, g)
	if err != nil {
		return g, err
	}
	next, err := rewrite(g, v.Content)
	if err != nil {
		return g, err
	}
	return g, t.change(ctx, call, g, core.MemoryChange{Op: core.MemoryOpWrite, Content: next, IfVersion: &v.Version})
}

// strReplace replaces the one occurrence of old_str.
func (t *tool) strReplace(ctx context.Context, call core.ToolCall, in input) (string, error) {
	switch {
	case in.OldStr == nil || *in.OldStr == "":
		return "", fail("old_str is required and must not be empty")
	case in.NewStr == nil:
		in.NewStr = new(string)
	}
	line := 0
	g, err := t.edit(ctx, call, in.Path, func(g target, content string) (string, error) {
		switch n := strings.Count(content, *in.OldStr); n {
		case 0:
			return "", fail("old_str occurs 0 times in %s; it must match exactly, whitespace included (view the file first)", g.show())
		case 1:
		default:
			return "", fail("old_str occurs %d times in %s; include more of the surrounding text so that it occurs exactly once", n, g.show())
		}
		at := strings.Index(content, *in.OldStr)
		line = strings.Count(content[:at], "\n") + 1
		return content[:at] + *in.NewStr + content[at+len(*in.OldStr):], nil
	})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Edited %s at line %d.", g.show(), line), nil
}

// insert puts insert_text after line insert_line.
func (t *tool) insert(ctx context.Context, call core.ToolCall, in input) (string, error) {
	switch {
	case in.InsertLine == nil:
		return "", fail("insert_line is required: the line after which to insert (0: at the top)")
	case in.InsertText == nil:
		return "", fail("insert_text is required")
	}
	after, text := *in.InsertLine, *in.InsertText
	g, err := t.edit(ctx, call, in.Path, func(g target, content string) (string, error) {
		lines := splitLines(content)
		if after < 0 || after > len(lines) {
			return "", fail("insert_line %d is out of range: %s has %d lines (0 to %d)", after, g.show(), len(lines), len(lines))
		}
		at := 0
		for _, l := range lines[:after] {
			at += len(l) + 1
		}
		if at > len(content) {
			// The last line has no newline: end it first.
			content += "\n"
		}
		if !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		return content[:at] + text + content[at:], nil
	})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Inserted %d line(s) into %s after line %d.", len(splitLines(text)), g.show(), after), nil
}

// delete deletes a file, or every file of a directory.
func (t *tool) delete(ctx context.Context, call core.ToolCall, in input) (string, error) {
	g, err := t.resolve("path", in.Path)
	if err != nil {
		return "", err
	}
	if g.rel == "" {
		return "", fail("%s itself cannot be deleted: delete the files or directories in it", g.show())
	}
	if err := writable(g); err != nil {
		return "", err
	}
	files, err := t.files(ctx, g.m, false)
	if err != nil {
		return "", err
	}
	files = under(files, g.rel)
	if len(files) == 0 {
		return "", fail("%s does not exist", g.show())
	}
	for i, f := range files {
		if err := t.change(ctx, call, g, core.MemoryChange{Op: core.MemoryOpDelete, Path: f.Path, IfVersion: &f.Version}); err != nil {
			return "", partly(err, i, len(files), "deleted")
		}
	}
	if len(files) == 1 && files[0].Path == g.rel {
		return fmt.Sprintf("Deleted %s.", g.show()), nil
	}
	return fmt.Sprintf("Deleted %s and the %d file(s) in it.", g.show(), len(files)), nil
}

// partly says how far a change of several files got before the model's
// mistake err.
func partly(err error, done, total int, what string) error {
	var te *toolError
	if done == 0 || !errors.As(err, &te) {
		return err
	}
	return fail("%s (%d of %d files were %s before this)", te.msg, done, total, what)
}

// rename moves a file, or every file of a directory, within a store.
func (t *tool) rename(ctx context.Context, call core.ToolCall, in input) (string, error) {
	from, err := t.file("old_path", in.OldPath)
	if err != nil {
		return "", err
	}
	to, err := t.file("new_path", in.NewPath)
	if err != nil {
		return "", err
	}
	switch {
	case from.m != to.m:
		return "", fail("old_path and new_path are in different memory stores: copy the file with create, then delete it")
	case to.rel == from.rel:
		return "", fail("old_path and new_path are the same")
	case strings.HasPrefix(to.rel, from.rel+"/"):
		return "", fail("new_path %s is inside old_path %s", to.show(), from.show())
	}
	if err := writable(from); err != nil {
		return "", err
	}
	files, err := t.files(ctx, from.m, false)
	if err != nil {
		return "", err
	}
	if len(under(files, to.rel)) > 0 {
		return "", fail("new_path %s exists: delete it first or pick another name", to.show())
	}
	for _, f := range files {
		if strings.HasPrefix(to.rel, f.Path+"/") {
			return "", fail("%s is a file, so %s cannot be created under it", to.m.show(f.Path), to.show())
		}
	}
	moving := under(files, from.rel)
	if len(moving) == 0 {
		return "", fail("old_path %s does not exist", from.show())
	}
	for i, f := range moving {
		dest := to.rel + strings.TrimPrefix(f.Path, from.rel)
		c := core.MemoryChange{Op: core.MemoryOpRename, Path: f.Path, NewPath: dest, IfVersion: &f.Version}
		if err := t.change(ctx, call, from, c); err != nil {
			return "", partly(err, i, len(moving), "moved")
		}
	}
	return fmt.Sprintf("Renamed %s to %s.", from.show(), to.show()), nil
}
