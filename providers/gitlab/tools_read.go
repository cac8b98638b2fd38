package gitlab

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	gl "gitlab.com/gitlab-org/api/client-go"
)

// maxDiff and maxFile bound what one tool answer holds (bytes).
const (
	maxDiff = 60 << 10
	maxFile = 60 << 10
)

// noteOut is a note as the tools show it.
type noteOut struct {
	ID     int64  `json:"id"`
	Author string `json:"author"`
	Body   string `json:"body"`
	At     string `json:"created_at,omitempty"`
}

// latestNotes are the n latest notes by people (system notes, such as
// "changed the description", left out), oldest first.
func latestNotes(list []*gl.Note, n int) []noteOut {
	var out []noteOut
	for _, nt := range list {
		if nt.System {
			continue
		}
		o := noteOut{ID: nt.ID, Author: nt.Author.Username, Body: cut(nt.Body, 4<<10)}
		if nt.CreatedAt != nil {
			o.At = nt.CreatedAt.UTC().Format("2006-01-02T15:04:05Z")
		}
		out = append(out, o)
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}

// notesArg is how many notes to show.
func notesArg(req mcp.CallToolRequest) int {
	n, ok := intArg(req, "notes")
	switch {
	case !ok || n < 0:
		return 10
	case n > 50:
		return 50
	}
	return int(n)
}

// notesQuery lists the latest 100 notes, newest first (reversed by the
// caller into reading order).
func notesQuery() (*string, *string, gl.ListOptions) {
	return gl.Ptr("created_at"), gl.Ptr("desc"), gl.ListOptions{PerPage: 100}
}

func reverse(ns []*gl.Note) []*gl.Note {
	for i, j := 0, len(ns)-1; i < j; i, j = i+1, j-1 {
		ns[i], ns[j] = ns[j], ns[i]
	}
	return ns
}

func (sc *toolScope) getIssue(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	iid, bad := sc.iidArg(req, kindIssue)
	if bad != nil {
		return bad, nil
	}
	c, err := sc.client(ctx)
	if err != nil {
		return toolError("read the issue", err), nil
	}
	is, _, err := c.Issues.GetIssue(sc.project, iid, gl.WithContext(ctx))
	if err != nil {
		return toolError(fmt.Sprintf("read issue #%d", iid), err), nil
	}
	order, sort, lo := notesQuery()
	notes, _, err := c.Notes.ListIssueNotes(sc.project, iid, &gl.ListIssueNotesOptions{ListOptions: lo, OrderBy: order, Sort: sort}, gl.WithContext(ctx))
	if err != nil {
		return toolError(fmt.Sprintf("read the notes of issue #%d", iid), err), nil
	}
	author := ""
	if is.Author != nil {
		author = is.Author.Username
	}
	return jsonResult(map[string]any{"iid": is.IID, "title": is.Title, "description": cut(is.Description, 16<<10), "state": is.State,
		"author": author, "labels": is.Labels, "url": is.WebURL, "notes": latestNotes(reverse(notes), notesArg(req))}), nil
}

func (sc *toolScope) getMergeRequest(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	iid, bad := sc.iidArg(req, kindMR)
	if bad != nil {
		return bad, nil
	}
	c, err := sc.client(ctx)
	if err != nil {
		return toolError("read the merge request", err), nil
	}
	mr, _, err := c.MergeRequests.GetMergeRequest(sc.project, iid, nil, gl.WithContext(ctx))
	if err != nil {
		return toolError(fmt.Sprintf("read merge request !%d", iid), err), nil
	}
	order, sort, lo := notesQuery()
	notes, _, err := c.Notes.ListMergeRequestNotes(sc.project, iid, &gl.ListMergeRequestNotesOptions{ListOptions: lo, OrderBy: order, Sort: sort}, gl.WithContext(ctx))
	if err != nil {
		return toolError(fmt.Sprintf("read the notes of merge request !%d", iid), err), nil
	}
	author := ""
	if mr.Author != nil {
		author = mr.Author.Username
	}
	return jsonResult(map[string]any{"iid": mr.IID, "title": mr.Title, "description": cut(mr.Description, 16<<10), "state": mr.State,
		"draft": mr.Draft, "author": author, "source_branch": mr.SourceBranch, "target_branch": mr.TargetBranch, "sha": mr.SHA,
		"labels": mr.Labels, "url": mr.WebURL, "notes": latestNotes(reverse(notes), notesArg(req))}), nil
}

func (sc *toolScope) getDiff(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	iid, bad := sc.iidArg(req, kindMR)
	if bad != nil {
		return bad, nil
	}
	path := strings.TrimPrefix(strings.TrimSpace(req.GetString("path", "")), "/")
	c, err := sc.client(ctx)
	if err != nil {
		return toolError("read the diff", err), nil
	}
	var b strings.Builder
	found := false
	opt := &gl.ListMergeRequestDiffsOptions{ListOptions: gl.ListOptions{PerPage: 100, Page: 1}}
	for {
		diffs, resp, err := c.MergeRequests.ListMergeRequestDiffs(sc.project, iid, opt, gl.WithContext(ctx))
		if err != nil {
			return toolError(fmt.Sprintf("read the diff of merge request !%d", iid), err), nil
		}
		for _, d := range diffs {
			if path != "" && d.NewPath != path && d.OldPath != path {
				continue
			}
			found = true
			writeFileDiff(&b, d)
		}
		if resp == nil || resp.NextPage == 0 || b.Len() > maxDiff {
			break
		}
		opt.Page = resp.NextPage
	}
	if path != "" && !found {
		return mcp.NewToolResultError(fmt.Sprintf("merge request !%d does not change %s", iid, path)), nil
	}
	if b.Len() == 0 {
		return mcp.NewToolResultText("(no changes)"), nil
	}
	return mcp.NewToolResultText(cut(b.String(), maxDiff)), nil
}

// writeFileDiff writes one file's part of a unified diff, with the
// headers git writes (GitLab gives the hunks only).
func writeFileDiff(b *strings.Builder, d *gl.MergeRequestDiff) {
	old, new := "a/"+d.OldPath, "b/"+d.NewPath
	if d.NewFile {
		old = "/dev/null"
	}
	if d.DeletedFile {
		new = "/dev/null"
	}
	fmt.Fprintf(b, "diff --git a/%s b/%s\n", d.OldPath, d.NewPath)
	if d.RenamedFile {
		fmt.Fprintf(b, "rename from %s\nrename to %s\n", d.OldPath, d.NewPath)
	}
	fmt.Fprintf(b, "--- %s\n+++ %s\n", old, new)
	switch {
	case d.TooLarge || d.Collapsed:
		b.WriteString("(too large for GitLab to show: read the file with get_file)\n")
	default:
		b.WriteString(d.Diff)
		if d.Diff != "" && !strings.HasSuffix(d.Diff, "\n") {
			b.WriteString("\n")
		}
	}
}

func (sc *toolScope) getFile(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	path, bad := requireText(req, "path")
	if bad != nil {
		return bad, nil
	}
	path = strings.TrimPrefix(strings.TrimSpace(path), "/")
	c, err := sc.client(ctx)
	if err != nil {
		return toolError("read the file", err), nil
	}
	ref := strings.TrimSpace(req.GetString("ref", ""))
	if ref == "" && sc.kind == kindMR {
		mr, _, err := c.MergeRequests.GetMergeRequest(sc.project, sc.iid, nil, gl.WithContext(ctx))
		if err != nil {
			return toolError(fmt.Sprintf("read merge request !%d for its head", sc.iid), err), nil
		}
		ref = mr.SHA
	}
	opt := &gl.GetRawFileOptions{}
	if ref != "" {
		opt.Ref = gl.Ptr(ref)
	}
	raw, _, err := c.RepositoryFiles.GetRawFile(sc.project, path, opt, gl.WithContext(ctx))
	if err != nil {
		return toolError("read "+path, err), nil
	}
	start, end := lineArg(req, "start_line", 1), lineArg(req, "end_line", 0)
	return mcp.NewToolResultText(numbered(string(raw), start, end)), nil
}

// lineArg is a positive line number argument, def when absent.
func lineArg(req mcp.CallToolRequest, key string, def int) int {
	n, ok := intArg(req, key)
	if !ok || n <= 0 {
		return def
	}
	return int(n)
}

// numbered shows lines start..end (0: to the end) of a file with their
// numbers, within maxFile bytes.
func numbered(text string, start, end int) string {
	lines := strings.SplitAfter(text, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if end == 0 || end > len(lines) {
		end = len(lines)
	}
	if start > end {
		return fmt.Sprintf("(the file has %d lines)", len(lines))
	}
	var b strings.Builder
	for i := start; i <= end; i++ {
		line := strconv.Itoa(i) + "\t" + strings.TrimSuffix(lines[i-1], "\n") + "\n"
		if b.Len()+len(line) > maxFile {
			fmt.Fprintf(&b, "… (cut at line %d of %d: pass start_line to read on)\n", i, len(lines))
			break
		}
		b.WriteString(line)
	}
	return b.String()
}
