package hands

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// Limits of the file tools.
const (
	defaultReadLines = 2000
	maxLineChars     = 2000
	maxReadBytes     = 256 << 10 // what one read shows
	maxEditBytes     = 8 << 20   // files edit will rewrite
)

// readScript prints "<size> <NUL bytes in the first 8 KiB> <lines>" and,
// for a text file, lines $2.. ($3 of them, at most $4 bytes).
const readScript = `f=$1
if [ ! -e "$f" ]; then echo "no such file or directory: $f" >&2; exit 3; fi
if [ -d "$f" ]; then echo "$f is a directory (use ls)" >&2; exit 3; fi
if [ ! -r "$f" ]; then echo "permission denied: $f" >&2; exit 3; fi
size=$(wc -c < "$f") || exit 3
nul=$(head -c 8192 -- "$f" | LC_ALL=C tr -d '\001-\377' | wc -c)
lines=$(wc -l < "$f")
echo "$size $nul $lines"
[ "$nul" -gt 0 ] && exit 0
tail -n +"$2" -- "$f" | head -n "$3" | head -c "$4"`

// readTool shows a text file's lines.
type readTool struct{ tools }

func (readTool) Def() core.ToolDef {
	return core.ToolDef{
		Name:        "read",
		Description: fmt.Sprintf("Read a text file in the sandbox, with line numbers (as cat -n). Relative paths start at %s. Reads %d lines from offset by default; lines longer than %d characters are cut. Binary files are refused: inspect them with bash (od, xxd, file).", core.SandboxWorkspace, defaultReadLines, maxLineChars),
		InputSchema: schema(map[string]any{
			"path":   prop("string", "The file to read."),
			"offset": prop("integer", "The first line to show, from 1."),
			"limit":  prop("integer", "How many lines to show."),
		}, "path"),
	}
}

func (r readTool) Call(ctx context.Context, call core.ToolCall) (core.ToolResult, error) {
	var in struct {
		Path   string `json:"path"`
		Offset int    `json:"offset"`
		Limit  int    `json:"limit"`
	}
	if res := decode(call, &in); res != nil {
		return *res, nil
	}
	p, err := resolve(in.Path)
	if err != nil {
		return *fail("%v", err), nil
	}
	offset, limit := max(in.Offset, 1), in.Limit
	if limit <= 0 {
		limit = defaultReadLines
	}
	res, tr := r.exec(ctx, call, core.ExecRequest{
		Cmd:       []string{"sh", "-c", readScript, "sh", p, strconv.Itoa(offset), strconv.Itoa(limit), strconv.Itoa(maxReadBytes)},
		MaxOutput: maxReadBytes + 4096,
	})
	if tr != nil {
		return *tr, nil
	}
	if res.ExitCode != 0 {
		return *fail("%s", stderrReason(res)), nil
	}
	header, body, _ := bytes.Cut(res.Stdout, []byte("\n"))
	var size, nuls, lines int64
	if _, err := fmt.Sscan(string(header), &size, &nuls, &lines); err != nil {
		return *fail("read %s: unexpected answer %q", p, header), nil
	}
	if nuls > 0 {
		return *fail("%s is a binary file (%d bytes); inspect it with bash (od -c, xxd, file)", p, size), nil
	}
	if size == 0 {
		return core.ToolResult{Output: "(empty file)"}, nil
	}
	return core.ToolResult{Output: numberLines(body, offset, lines, int64(len(body)) >= maxReadBytes)}, nil
}

// numberLines formats body, which starts at line first of a file of total
// lines, as cat -n does, and says how to read on when there is more.
func numberLines(body []byte, first int, total int64, cut bool) string {
	s := text(body)
	if s == "" {
		return fmt.Sprintf("(the file has %d lines; offset %d is past its end)", total, first)
	}
	s = strings.TrimSuffix(s, "\n")
	var sb strings.Builder
	n := first
	for line := range strings.SplitSeq(s, "\n") {
		if len(line) > maxLineChars {
			line = strings.ToValidUTF8(line[:maxLineChars], "") + " … [line cut]"
		}
		fmt.Fprintf(&sb, "%6d\t%s\n", n, line)
		n++
	}
	last := n - 1
	// A file whose last line has no newline has one more line than wc -l says.
	if int64(last) < total || cut {
		fmt.Fprintf(&sb, "[lines %d–%d of about %d; pass offset %d to read on]\n", first, last, max(total, int64(last)), last+1)
	}
	return sb.String()
}

// writeTool creates or replaces a file.
type writeTool struct{ tools }

func (writeTool) Def() core.ToolDef {
	return core.ToolDef{
		Name:        "write",
		Description: fmt.Sprintf("Create or replace a file in the sandbox with the given content, making its parent directories. Relative paths start at %s. To change part of a file, use edit.", core.SandboxWorkspace),
		InputSchema: schema(map[string]any{
			"path":    prop("string", "The file to write."),
			"content": prop("string", "The whole new content."),
		}, "path", "content"),
	}
}

func (w writeTool) Call(ctx context.Context, call core.ToolCall) (core.ToolResult, error) {
	var in struct {
		Path    string  `json:"path"`
		Content *string `json:"content"`
	}
	if res := decode(call, &in); res != nil {
		return *res, nil
	}
	p, err := resolve(in.Path)
	if err != nil {
		return *fail("%v", err), nil
	}
	if in.Content == nil {
		return *fail("content is required"), nil
	}
	if tr := w.put(ctx, call, p, []byte(*in.Content)); tr != nil {
		return *tr, nil
	}
	return core.ToolResult{Output: fmt.Sprintf("wrote %d bytes to %s", len(*in.Content), p)}, nil
}

// put replaces p's content, keeping its mode when it exists.
func (t tools) put(ctx context.Context, call core.ToolCall, p string, content []byte) *core.ToolResult {
	const script = `d=$(dirname -- "$1") && mkdir -p -- "$d" && cat > "$1"`
	res, tr := t.exec(ctx, call, core.ExecRequest{Cmd: []string{"sh", "-c", script, "sh", p}, Stdin: append([]byte{}, content...)})
	if tr != nil {
		return tr
	}
	if res.ExitCode != 0 {
		return fail("write %s: %s", p, stderrReason(res))
	}
	return nil
}

// editTool replaces one exact occurrence of a string in a file.
type editTool struct{ tools }

func (editTool) Def() core.ToolDef {
	return core.ToolDef{
		Name:        "edit",
		Description: fmt.Sprintf("Replace an exact string in a file of the sandbox. old_string must occur exactly once (whitespace and indentation included): the edit fails when it occurs nowhere or more than once; add surrounding lines to make it unique. Relative paths start at %s.", core.SandboxWorkspace),
		InputSchema: schema(map[string]any{
			"path":       prop("string", "The file to edit."),
			"old_string": prop("string", "The text to replace, exactly as it is in the file."),
			"new_string": prop("string", "The text to put in its place."),
		}, "path", "old_string", "new_string"),
	}
}

func (e editTool) Call(ctx context.Context, call core.ToolCall) (core.ToolResult, error) {
	var in struct {
		Path      string  `json:"path"`
		OldString string  `json:"old_string"`
		NewString *string `json:"new_string"`
	}
	if res := decode(call, &in); res != nil {
		return *res, nil
	}
	p, err := resolve(in.Path)
	if err != nil {
		return *fail("%v", err), nil
	}
	switch {
	case in.OldString == "":
		return *fail("old_string is required and must not be empty"), nil
	case in.NewString == nil:
		return *fail("new_string is required"), nil
	case in.OldString == *in.NewString:
		return *fail("old_string and new_string are the same; nothing to do"), nil
	}
	const script = `if [ ! -f "$1" ]; then echo "no such file: $1" >&2; exit 3; fi; cat -- "$1"`
	res, tr := e.exec(ctx, call, core.ExecRequest{Cmd: []string{"sh", "-c", script, "sh", p}, MaxOutput: maxEditBytes + 1})
	if tr != nil {
		return *tr, nil
	}
	if res.ExitCode != 0 {
		return *fail("edit %s: %s", p, stderrReason(res)), nil
	}
	if res.StdoutOmitted > 0 {
		return *fail("%s is larger than %d bytes; edit it with bash (sed, patch)", p, maxEditBytes), nil
	}
	content := string(res.Stdout)
	switch n := strings.Count(content, in.OldString); n {
	case 0:
		return *fail("old_string was not found in %s; it must match exactly, whitespace and indentation included (read the file first)", p), nil
	case 1:
	default:
		return *fail("old_string occurs %d times in %s; include more surrounding lines so that it occurs exactly once", n, p), nil
	}
	at := strings.Index(content, in.OldString)
	updated := content[:at] + *in.NewString + content[at+len(in.OldString):]
	if tr := e.put(ctx, call, p, []byte(updated)); tr != nil {
		return *tr, nil
	}
	line := strings.Count(content[:at], "\n") + 1
	return core.ToolResult{Output: fmt.Sprintf("edited %s at line %d", p, line)}, nil
}
