package github

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	gh "github.com/google/go-github/v62/github"
	"github.com/mark3labs/mcp-go/mcp"
)

// Limits of what a read tool answers: enough to work from, small enough
// for the model's context.
const (
	maxBodyBytes    = 20_000
	maxCommentBytes = 4_000
	maxDiffBytes    = 60_000
	maxFileBytes    = 80_000
	maxOutputBytes  = 20_000 // each of a check run's summary and text
	maxLogBytes     = 30_000 // the end of a job log
	maxLogDownload  = 16 << 20
	maxListPages    = 30
)

type commentOut struct {
	ID        int64  `json:"id"`
	Author    string `json:"author"`
	CreatedAt string `json:"created_at,omitempty"`
	Path      string `json:"path,omitempty"`
	Line      int    `json:"line,omitempty"`
	InReplyTo int64  `json:"in_reply_to_id,omitempty"`
	Body      string `json:"body"`
	review    int64  // the review a review comment belongs to
}

type branchOut struct {
	Ref string `json:"ref"`
	SHA string `json:"sha"`
}

func (sc *toolScope) getIssue(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	n, bad := sc.numberArg(req)
	if bad != nil {
		return bad, nil
	}
	keep := req.GetInt("comments", 10)
	keep = min(max(keep, 0), 50)
	c := sc.gh()
	is, _, err := c.Issues.Get(ctx, sc.owner, sc.repo, n)
	if err != nil {
		return toolError(fmt.Sprintf("get #%d", n), err), nil
	}
	out := map[string]any{"number": is.GetNumber(), "kind": "issue", "title": is.GetTitle(), "state": is.GetState(),
		"author": is.GetUser().GetLogin(), "url": is.GetHTMLURL(), "body": cut(is.GetBody(), maxBodyBytes), "comment_count": is.GetComments()}
	var labels []string
	for _, l := range is.Labels {
		labels = append(labels, l.GetName())
	}
	out["labels"] = labels
	if keep > 0 {
		comments, err := issueComments(ctx, c, sc.owner, sc.repo, n)
		if err != nil {
			return toolError(fmt.Sprintf("list the comments of #%d", n), err), nil
		}
		out["comments"] = last(comments, keep)
	}
	if !is.IsPullRequest() {
		return jsonResult(out), nil
	}
	pr, _, err := c.PullRequests.Get(ctx, sc.owner, sc.repo, n)
	if err != nil {
		return toolError(fmt.Sprintf("get pull request #%d", n), err), nil
	}
	out["kind"] = "pull_request"
	out["head"] = branchOut{Ref: pr.GetHead().GetRef(), SHA: pr.GetHead().GetSHA()}
	out["base"] = branchOut{Ref: pr.GetBase().GetRef(), SHA: pr.GetBase().GetSHA()}
	out["draft"], out["merged"] = pr.GetDraft(), pr.GetMerged()
	out["changed_files"], out["additions"], out["deletions"] = pr.GetChangedFiles(), pr.GetAdditions(), pr.GetDeletions()
	if keep > 0 {
		review, err := reviewComments(ctx, c, sc.owner, sc.repo, n)
		if err != nil {
			return toolError(fmt.Sprintf("list the review comments of #%d", n), err), nil
		}
		out["review_comments"] = last(review, keep)
	}
	return jsonResult(out), nil
}

// issueComments are an issue's or pull request's comments, oldest first.
func issueComments(ctx context.Context, c *gh.Client, owner, repo string, n int) ([]commentOut, error) {
	opts := &gh.IssueListCommentsOptions{ListOptions: gh.ListOptions{PerPage: 100}}
	return listPages(func(page int) ([]commentOut, *gh.Response, error) {
		opts.Page = page
		list, resp, err := c.Issues.ListComments(ctx, owner, repo, n, opts)
		out := make([]commentOut, 0, len(list))
		for _, x := range list {
			out = append(out, commentOut{ID: x.GetID(), Author: x.GetUser().GetLogin(), CreatedAt: stamp(x.CreatedAt), Body: cut(x.GetBody(), maxCommentBytes)})
		}
		return out, resp, err
	})
}

// reviewComments are a pull request's review comments, oldest first.
func reviewComments(ctx context.Context, c *gh.Client, owner, repo string, n int) ([]commentOut, error) {
	opts := &gh.PullRequestListCommentsOptions{ListOptions: gh.ListOptions{PerPage: 100}}
	return listPages(func(page int) ([]commentOut, *gh.Response, error) {
		opts.Page = page
		list, resp, err := c.PullRequests.ListComments(ctx, owner, repo, n, opts)
		out := make([]commentOut, 0, len(list))
		for _, x := range list {
			out = append(out, commentOut{ID: x.GetID(), Author: x.GetUser().GetLogin(), CreatedAt: stamp(x.CreatedAt),
				Path: x.GetPath(), Line: x.GetLine(), InReplyTo: x.GetInReplyTo(), Body: cut(x.GetBody(), maxCommentBytes), review: x.GetPullRequestReviewID()})
		}
		return out, resp, err
	})
}

// listPages gathers the pages list answers, from the first, up to
// maxListPages of them.
func listPages[T any](list func(page int) ([]T, *gh.Response, error)) ([]T, error) {
	var out []T
	for page, n := 0, 0; n < maxListPages; n++ {
		items, resp, err := list(page)
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
		if resp.NextPage == 0 {
			break
		}
		page = resp.NextPage
	}
	return out, nil
}

func last[T any](s []T, n int) []T {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func stamp(t *gh.Timestamp) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func (sc *toolScope) listFiles(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	n, bad := sc.numberArg(req)
	if bad != nil {
		return bad, nil
	}
	type fileOut struct {
		Path      string `json:"path"`
		Status    string `json:"status"`
		Additions int    `json:"additions"`
		Deletions int    `json:"deletions"`
		Previous  string `json:"previous_path,omitempty"`
	}
	files := []fileOut{}
	opts := &gh.ListOptions{PerPage: 100}
	for page := 0; page < maxListPages; page++ {
		list, resp, err := sc.gh().PullRequests.ListFiles(ctx, sc.owner, sc.repo, n, opts)
		if err != nil {
			return toolError(fmt.Sprintf("list the files of pull request #%d", n), err), nil
		}
		for _, f := range list {
			files = append(files, fileOut{Path: f.GetFilename(), Status: f.GetStatus(), Additions: f.GetAdditions(), Deletions: f.GetDeletions(), Previous: f.GetPreviousFilename()})
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	return jsonResult(map[string]any{"number": n, "files": files}), nil
}

func (sc *toolScope) getDiff(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	n, bad := sc.numberArg(req)
	if bad != nil {
		return bad, nil
	}
	diff, _, err := sc.gh().PullRequests.GetRaw(ctx, sc.owner, sc.repo, n, gh.RawOptions{Type: gh.Diff})
	if err != nil {
		return toolError(fmt.Sprintf("get the diff of pull request #%d", n), err), nil
	}
	if path := strings.TrimPrefix(strings.TrimSpace(req.GetString("path", "")), "/"); path != "" {
		part, ok := fileDiff(diff, path)
		if !ok {
			return mcp.NewToolResultError(fmt.Sprintf("pull request #%d does not change %s (list_pr_files shows what it changes)", n, path)), nil
		}
		diff = part
	}
	if diff == "" {
		return mcp.NewToolResultText("(the diff is empty)"), nil
	}
	if len(diff) > maxDiffBytes {
		diff = cut(diff, maxDiffBytes) + "\nThe diff is larger than this: pass path to read one file's part."
	}
	return mcp.NewToolResultText(diff), nil
}

// fileDiff is one file's part of a unified diff.
func fileDiff(diff, path string) (string, bool) {
	parts := strings.Split("\n"+diff, "\ndiff --git ")
	for _, p := range parts[1:] {
		header, _, _ := strings.Cut(p, "\n")
		if strings.HasSuffix(header, " b/"+path) || strings.HasPrefix(header, "a/"+path+" ") {
			return "diff --git " + strings.TrimSuffix(p, "\n") + "\n", true
		}
	}
	return "", false
}

func (sc *toolScope) getFile(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	path, bad := requireText(req, "path")
	if bad != nil {
		return bad, nil
	}
	path = strings.Trim(strings.TrimSpace(path), "/")
	if strings.Contains(path, "..") {
		return mcp.NewToolResultError(`"path" must not contain ".."`), nil
	}
	ref := strings.TrimSpace(req.GetString("ref", ""))
	if ref == "" {
		var err error
		if ref, err = sc.headOrDefault(ctx); err != nil {
			return toolError("find the pull request's head commit", err), nil
		}
	}
	var opts *gh.RepositoryContentGetOptions
	if ref != "" {
		opts = &gh.RepositoryContentGetOptions{Ref: ref}
	}
	at := ref
	if at == "" {
		at = "the default branch"
	}
	file, dir, _, err := sc.gh().Repositories.GetContents(ctx, sc.owner, sc.repo, path, opts)
	if err != nil {
		return toolError(fmt.Sprintf("get %s at %s", path, at), err), nil
	}
	if file == nil {
		var b strings.Builder
		fmt.Fprintf(&b, "%s/ at %s:\n", path, at)
		for _, e := range dir {
			name := e.GetName()
			if e.GetType() == "dir" {
				name += "/"
			}
			fmt.Fprintf(&b, "%s\t%d\n", name, e.GetSize())
		}
		return mcp.NewToolResultText(b.String()), nil
	}
	content, err := file.GetContent()
	if err != nil {
		return mcp.NewToolResultError(fmt.Sprintf("%s at %s (%d bytes) cannot be read through the API (%v); read it in the sandbox", path, at, file.GetSize(), err)), nil
	}
	if strings.ContainsRune(content, 0) {
		return mcp.NewToolResultText(fmt.Sprintf("%s at %s is a binary file of %d bytes.", path, at, len(content))), nil
	}
	return mcp.NewToolResultText(numbered(path, at, content, req.GetInt("start_line", 1), req.GetInt("end_line", 0))), nil
}

// numbered renders lines start..end (0: to the end) of a file, each with
// its number, within maxFileBytes.
func numbered(path, at, content string, start, end int) string {
	lines := strings.SplitAfter(content, "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	total := len(lines)
	start = max(start, 1)
	if end <= 0 || end > total {
		end = total
	}
	var b strings.Builder
	if start > total {
		return fmt.Sprintf("%s at %s has %d lines: nothing from line %d.", path, at, total, start)
	}
	fmt.Fprintf(&b, "%s at %s (%d lines):\n", path, at, total)
	for i := start; i <= end; i++ {
		line := strings.TrimRight(lines[i-1], "\n")
		if b.Len()+len(line) > maxFileBytes {
			fmt.Fprintf(&b, "… (cut at line %d: pass start_line=%d for more)\n", i-1, i)
			break
		}
		fmt.Fprintf(&b, "%6d\t%s\n", i, line)
	}
	return b.String()
}

func (sc *toolScope) listCheckRuns(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	ref := strings.TrimSpace(req.GetString("ref", ""))
	if ref == "" {
		var err error
		if ref, err = sc.headOrDefault(ctx); err != nil {
			return toolError("find the pull request's head commit", err), nil
		}
		if ref == "" {
			if ref, err = sc.defaultBranch(ctx); err != nil {
				return toolError("find the default branch", err), nil
			}
		}
	}
	type runOut struct {
		ID         int64  `json:"id"`
		Name       string `json:"name"`
		App        string `json:"app,omitempty"`
		Status     string `json:"status"`
		Conclusion string `json:"conclusion,omitempty"`
		Title      string `json:"title,omitempty"`
		URL        string `json:"url,omitempty"`
	}
	runs := []runOut{}
	opts := &gh.ListCheckRunsOptions{ListOptions: gh.ListOptions{PerPage: 100}}
	for page := 0; page < 5; page++ {
		res, resp, err := sc.gh().Checks.ListCheckRunsForRef(ctx, sc.owner, sc.repo, ref, opts)
		if err != nil {
			return toolError("list the check runs of "+ref, err), nil
		}
		for _, r := range res.CheckRuns {
			runs = append(runs, runOut{ID: r.GetID(), Name: r.GetName(), App: r.GetApp().GetSlug(), Status: r.GetStatus(),
				Conclusion: r.GetConclusion(), Title: r.GetOutput().GetTitle(), URL: r.GetHTMLURL()})
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	return jsonResult(map[string]any{"ref": ref, "check_runs": runs}), nil
}

func (sc *toolScope) getCheckRun(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	id, ok := intArg(req, "check_run_id")
	if !ok || id <= 0 {
		return mcp.NewToolResultError(`"check_run_id" is required: a check run id from list_check_runs`), nil
	}
	run, _, err := sc.gh().Checks.GetCheckRun(ctx, sc.owner, sc.repo, id)
	if err != nil {
		return toolError("get check run "+strconv.FormatInt(id, 10), err), nil
	}
	out := map[string]any{"id": run.GetID(), "name": run.GetName(), "app": run.GetApp().GetSlug(), "head_sha": run.GetHeadSHA(),
		"status": run.GetStatus(), "conclusion": run.GetConclusion(), "url": run.GetHTMLURL(),
		"title": run.GetOutput().GetTitle(), "summary": cut(run.GetOutput().GetSummary(), maxOutputBytes), "text": cut(run.GetOutput().GetText(), maxOutputBytes)}
	// A GitHub Actions job's check run has the job's id.
	if run.GetApp().GetSlug() == "github-actions" && req.GetBool("log", true) {
		log, err := sc.jobLog(ctx, id)
		if err != nil {
			out["log_error"] = err.Error()
		} else {
			out["log"] = log
		}
	}
	return jsonResult(out), nil
}

// jobLog is the end of a GitHub Actions job's log. GitHub answers with a
// redirect to a short-lived download URL on another host, fetched
// without the installation token.
func (sc *toolScope) jobLog(ctx context.Context, id int64) (string, error) {
	u, resp, err := sc.gh().Actions.GetWorkflowJobLogs(ctx, sc.owner, sc.repo, id, 2)
	if err != nil {
		if resp != nil {
			switch resp.StatusCode {
			case http.StatusNotFound:
				return "", fmt.Errorf("no log for job %d (not found, or the app lacks the actions:read permission)", id)
			case http.StatusGone:
				return "", fmt.Errorf("the log of job %d has expired", id)
			}
		}
		return "", fmt.Errorf("the log of job %d: %w", id, err)
	}
	dl, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", err
	}
	res, err := (&http.Client{Transport: sc.p.cfg.Transport, Timeout: 60 * time.Second}).Do(dl)
	if err != nil {
		// The URL carries a signature: name only its host.
		return "", fmt.Errorf("download the log of job %d from %s failed", id, u.Host)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return "", fmt.Errorf("download the log of job %d: %s answered %d", id, u.Host, res.StatusCode)
	}
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxLogDownload))
	if err != nil {
		return "", fmt.Errorf("download the log of job %d: %w", id, err)
	}
	return tail(string(raw), maxLogBytes), nil
}

// tail keeps the last n bytes of s, from a line start.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	end := s[len(s)-n:]
	if i := strings.IndexByte(end, '\n'); i >= 0 {
		end = end[i+1:]
	}
	return fmt.Sprintf("… (the first %d of %d bytes left out)\n", len(s)-len(end), len(s)) + end
}
