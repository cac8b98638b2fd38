package hands

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// Limits of the search tools.
const (
	maxGlobResults = 1000
	maxGrepLines   = 500
	maxScanPaths   = 200_000 // paths glob looks at
)

// lsTool lists a directory.
type lsTool struct{ tools }

func (lsTool) Def() core.ToolDef {
	return core.ToolDef{
		Name:        "ls",
		Description: fmt.Sprintf("List a directory of the sandbox (ls -la): names, sizes, modes, times. Default: %s.", core.SandboxWorkspace),
		InputSchema: schema(map[string]any{"path": prop("string", "The directory (or file) to list.")}),
	}
}

func (l lsTool) Call(ctx context.Context, call core.ToolCall) (core.ToolResult, error) {
	var in struct {
		Path string `json:"path"`
	}
	if res := decode(call, &in); res != nil {
		return *res, nil
	}
	p, err := resolveOr(in.Path, core.SandboxWorkspace)
	if err != nil {
		return *fail("%v", err), nil
	}
	res, tr := l.exec(ctx, call, core.ExecRequest{Cmd: []string{"ls", "-la", "--", p}, MaxOutput: l.opts.MaxOutput})
	if tr != nil {
		return *tr, nil
	}
	if res.ExitCode != 0 {
		return *fail("ls %s: %s", p, stderrReason(res)), nil
	}
	return core.ToolResult{Output: text(res.Stdout)}, nil
}

// globScript prints the files and links under $1, pruning .git.
const globScript = `cd -- "$1" || exit 3
find . -name .git -prune -o \( -type f -o -type l \) -print 2>/dev/null | head -n "$2"`

// globTool finds files by name pattern.
type globTool struct{ tools }

func (globTool) Def() core.ToolDef {
	return core.ToolDef{
		Name:        "glob",
		Description: fmt.Sprintf("Find files in the sandbox whose path matches a glob pattern: * and ? within a path segment, ** across segments, [abc] and {a,b}. The pattern is matched against paths relative to path (default %s), e.g. **/*.go or src/*.{ts,tsx}. Answers absolute paths, sorted, at most %d; .git is skipped.", core.SandboxWorkspace, maxGlobResults),
		InputSchema: schema(map[string]any{
			"pattern": prop("string", "The glob pattern."),
			"path":    prop("string", "The directory to search."),
		}, "pattern"),
	}
}

func (g globTool) Call(ctx context.Context, call core.ToolCall) (core.ToolResult, error) {
	var in struct {
		Pattern string `json:"pattern"`
		Path    string `json:"path"`
	}
	if res := decode(call, &in); res != nil {
		return *res, nil
	}
	root, err := resolveOr(in.Path, core.SandboxWorkspace)
	if err != nil {
		return *fail("%v", err), nil
	}
	pattern := strings.TrimPrefix(strings.TrimSpace(in.Pattern), "./")
	if path.IsAbs(pattern) {
		// An absolute pattern under root is relative to it.
		rel, ok := strings.CutPrefix(pattern, strings.TrimSuffix(root, "/")+"/")
		if !ok {
			return *fail("pattern %q is absolute but not under %s; pass its directory as path", pattern, root), nil
		}
		pattern = rel
	}
	match, err := compileGlob(pattern)
	if err != nil {
		return *fail("%v", err), nil
	}
	res, tr := g.exec(ctx, call, core.ExecRequest{
		Cmd:       []string{"sh", "-c", globScript, "sh", root, fmt.Sprint(maxScanPaths)},
		MaxOutput: 64 << 20,
	})
	if tr != nil {
		return *tr, nil
	}
	if res.ExitCode != 0 {
		return *fail("glob in %s: %s", root, stderrReason(res)), nil
	}
	var found []string
	scanned := 0
	for rel := range strings.SplitSeq(strings.TrimSuffix(text(res.Stdout), "\n"), "\n") {
		rel = strings.TrimPrefix(rel, "./")
		if rel == "" {
			continue
		}
		scanned++
		if match(rel) {
			found = append(found, path.Join(root, rel))
		}
	}
	slices.Sort(found)
	if len(found) == 0 {
		return core.ToolResult{Output: fmt.Sprintf("no files under %s match %s", root, pattern)}, nil
	}
	var sb strings.Builder
	for _, f := range found[:min(len(found), maxGlobResults)] {
		sb.WriteString(f)
		sb.WriteByte('\n')
	}
	if len(found) > maxGlobResults {
		fmt.Fprintf(&sb, "[%d more not shown; narrow the pattern]\n", len(found)-maxGlobResults)
	}
	if scanned >= maxScanPaths {
		fmt.Fprintf(&sb, "[only the first %d files were looked at; pass a narrower path]\n", maxScanPaths)
	}
	return core.ToolResult{Output: sb.String()}, nil
}

// grepTool searches file contents.
type grepTool struct{ tools }

func (grepTool) Def() core.ToolDef {
	return core.ToolDef{
		Name:        "grep",
		Description: fmt.Sprintf("Search file contents in the sandbox with a POSIX extended regular expression (grep -rnE), recursively from path (default %s), skipping binary files and .git. Answers path:line:text, at most %d lines. glob keeps only files whose name matches it (e.g. *.go).", core.SandboxWorkspace, maxGrepLines),
		InputSchema: schema(map[string]any{
			"pattern":     prop("string", "The regular expression."),
			"path":        prop("string", "A directory or file to search."),
			"glob":        prop("string", "Only search files whose name matches this glob."),
			"ignore_case": prop("boolean", "Match regardless of case."),
		}, "pattern"),
	}
}

func (g grepTool) Call(ctx context.Context, call core.ToolCall) (core.ToolResult, error) {
	var in struct {
		Pattern    string `json:"pattern"`
		Path       string `json:"path"`
		Glob       string `json:"glob"`
		IgnoreCase bool   `json:"ignore_case"`
	}
	if res := decode(call, &in); res != nil {
		return *res, nil
	}
	if in.Pattern == "" {
		return *fail("pattern is required"), nil
	}
	root, err := resolveOr(in.Path, core.SandboxWorkspace)
	if err != nil {
		return *fail("%v", err), nil
	}
	cmd := []string{"grep", "-rnIE", "--exclude-dir=.git"}
	if in.IgnoreCase {
		cmd = append(cmd, "-i")
	}
	if in.Glob != "" {
		cmd = append(cmd, "--include="+in.Glob)
	}
	cmd = append(cmd, "-e", in.Pattern, "--", root)
	res, tr := g.exec(ctx, call, core.ExecRequest{Cmd: cmd, MaxOutput: 4 * g.opts.MaxOutput})
	if tr != nil {
		return *tr, nil
	}
	switch res.ExitCode {
	case 0:
	case 1:
		return core.ToolResult{Output: fmt.Sprintf("no matches for %s under %s", in.Pattern, root)}, nil
	default:
		return *fail("grep: %s", stderrReason(res)), nil
	}
	return core.ToolResult{Output: grepOutput(text(res.Stdout), res.StdoutOmitted > 0, g.opts.MaxOutput)}, nil
}

// grepOutput keeps whole lines, at most maxGrepLines of them and about
// maxBytes, each cut at maxLineChars.
func grepOutput(out string, truncated bool, maxBytes int) string {
	var sb strings.Builder
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	shown := 0
	for _, line := range lines {
		if shown == maxGrepLines || sb.Len() > maxBytes || strings.HasPrefix(line, "\n[… ") || strings.HasPrefix(line, "[… ") {
			break
		}
		if len(line) > maxLineChars {
			line = strings.ToValidUTF8(line[:maxLineChars], "") + " … [line cut]"
		}
		sb.WriteString(line)
		sb.WriteByte('\n')
		shown++
	}
	if shown < len(lines) || truncated {
		fmt.Fprintf(&sb, "[more matches not shown; narrow the pattern, path or glob]\n")
	}
	return sb.String()
}
