package github

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	gh "github.com/google/go-github/v62/github"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/switchboardhq/switchboard/core"
)

func (sc *toolScope) comment(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	body, bad := requireText(req, "body")
	if bad != nil {
		return bad, nil
	}
	n, bad := sc.numberArg(req)
	if bad != nil {
		return bad, nil
	}
	c, _, err := sc.gh().Issues.CreateComment(ctx, sc.owner, sc.repo, n, &gh.IssueComment{Body: gh.String(body)})
	if err != nil {
		return toolError(fmt.Sprintf("comment on #%d", n), err), nil
	}
	return jsonResult(map[string]any{"id": c.GetID(), "number": n, "url": c.GetHTMLURL()}), nil
}

func (sc *toolScope) replyToReviewComment(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	id, ok := intArg(req, "comment_id")
	if !ok || id <= 0 {
		return mcp.NewToolResultError(`"comment_id" is required: the id of a review comment (get_issue lists them)`), nil
	}
	body, bad := requireText(req, "body")
	if bad != nil {
		return bad, nil
	}
	n, bad := sc.numberArg(req)
	if bad != nil {
		return bad, nil
	}
	c, _, err := sc.gh().PullRequests.CreateCommentInReplyTo(ctx, sc.owner, sc.repo, n, body, id)
	if err != nil {
		return toolError(fmt.Sprintf("reply to review comment %d on #%d", id, n), err), nil
	}
	return jsonResult(map[string]any{"id": c.GetID(), "in_reply_to_id": id, "url": c.GetHTMLURL()}), nil
}

// inlineComment is one of create_review's comments as the model gives it.
type inlineComment struct {
	Path      string          `json:"path"`
	Line      json.RawMessage `json:"line"`
	Side      string          `json:"side"`
	StartLine json.RawMessage `json:"start_line"`
	Body      string          `json:"body"`
}

// lineNumber reads a line given as a number or a numeric string.
func lineNumber(raw json.RawMessage) (int, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, true
	}
	var n int
	if err := json.Unmarshal(raw, &n); err == nil {
		return n, true
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		if _, err := fmt.Sscan(s, &n); err == nil {
			return n, true
		}
	}
	return 0, false
}

func (sc *toolScope) createReview(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	n, bad := sc.numberArg(req)
	if bad != nil {
		return bad, nil
	}
	event := strings.ToUpper(strings.TrimSpace(req.GetString("event", "COMMENT")))
	if event == "" {
		event = "COMMENT"
	}
	if event != "COMMENT" && event != "APPROVE" && event != "REQUEST_CHANGES" {
		return mcp.NewToolResultError(`"event" must be COMMENT, APPROVE or REQUEST_CHANGES`), nil
	}
	var args struct {
		Comments []inlineComment `json:"comments"`
	}
	if err := req.BindArguments(&args); err != nil {
		return mcp.NewToolResultError(`"comments" must be a list of {path, line, side?, start_line?, body}: ` + err.Error()), nil
	}
	body := req.GetString("body", "")
	if strings.TrimSpace(body) == "" && len(args.Comments) == 0 && event != "APPROVE" {
		return mcp.NewToolResultError(`a ` + event + ` review needs a "body" or inline "comments"`), nil
	}
	review := &gh.PullRequestReviewRequest{Event: gh.String(event)}
	if body != "" {
		review.Body = gh.String(body)
	}
	if c := strings.TrimSpace(req.GetString("commit_id", "")); c != "" {
		review.CommitID = gh.String(c)
	}
	for i, c := range args.Comments {
		line, ok1 := lineNumber(c.Line)
		start, ok2 := lineNumber(c.StartLine)
		side := strings.ToUpper(strings.TrimSpace(c.Side))
		if side == "" {
			side = "RIGHT"
		}
		switch {
		case strings.TrimSpace(c.Path) == "":
			return mcp.NewToolResultError(fmt.Sprintf(`comments[%d]: "path" is required`, i)), nil
		case !ok1 || !ok2 || line <= 0:
			return mcp.NewToolResultError(fmt.Sprintf(`comments[%d]: "line" must be a line number (1 or more) of %s`, i, c.Path)), nil
		case start < 0 || start > 0 && start >= line:
			return mcp.NewToolResultError(fmt.Sprintf(`comments[%d]: "start_line" must be before "line"`, i)), nil
		case side != "RIGHT" && side != "LEFT":
			return mcp.NewToolResultError(fmt.Sprintf(`comments[%d]: "side" must be RIGHT or LEFT`, i)), nil
		case strings.TrimSpace(c.Body) == "":
			return mcp.NewToolResultError(fmt.Sprintf(`comments[%d]: "body" is required`, i)), nil
		}
		d := &gh.DraftReviewComment{Path: gh.String(strings.TrimPrefix(c.Path, "/")), Line: gh.Int(line), Side: gh.String(side), Body: gh.String(c.Body)}
		if start > 0 {
			d.StartLine, d.StartSide = gh.Int(start), gh.String(side)
		}
		review.Comments = append(review.Comments, d)
	}
	r, _, err := sc.gh().PullRequests.CreateReview(ctx, sc.owner, sc.repo, n, review)
	if err != nil {
		return toolError(fmt.Sprintf("review pull request #%d", n), err), nil
	}
	return jsonResult(map[string]any{"id": r.GetID(), "state": r.GetState(), "comments": len(review.Comments), "url": r.GetHTMLURL()}), nil
}

// branchRe is what a branch name may be here: git's rules, a little
// stricter.
var branchRe = regexp.MustCompile(`^[A-Za-z0-9._\-/]+$`)

func validBranch(b string) bool {
	return branchRe.MatchString(b) && !strings.Contains(b, "..") && !strings.Contains(b, "//") &&
		!strings.HasPrefix(b, "/") && !strings.HasSuffix(b, "/") && !strings.HasSuffix(b, ".lock") && !strings.HasPrefix(b, "-")
}

var shaRe = regexp.MustCompile(`^[0-9a-fA-F]{40}$`)

func (sc *toolScope) createBranch(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	branch, bad := requireText(req, "branch")
	if bad != nil {
		return bad, nil
	}
	branch = strings.TrimPrefix(strings.TrimSpace(branch), "refs/heads/")
	if !validBranch(branch) {
		return mcp.NewToolResultError(fmt.Sprintf("%q is not a valid branch name (letters, digits, . _ - /)", branch)), nil
	}
	from := strings.TrimPrefix(strings.TrimSpace(req.GetString("from", "")), "refs/heads/")
	if from == "" {
		var err error
		if from, err = sc.defaultBranch(ctx); err != nil {
			return toolError("find the default branch", err), nil
		}
	}
	sha := from
	if !shaRe.MatchString(from) {
		ref, _, err := sc.gh().Git.GetRef(ctx, sc.owner, sc.repo, "heads/"+from)
		if err != nil {
			return toolError("find branch "+from, err), nil
		}
		sha = ref.GetObject().GetSHA()
	}
	ref, resp, err := sc.gh().Git.CreateRef(ctx, sc.owner, sc.repo, &gh.Reference{Ref: gh.String("refs/heads/" + branch), Object: &gh.GitObject{SHA: gh.String(sha)}})
	if err != nil && resp != nil && resp.StatusCode == http.StatusUnprocessableEntity && strings.Contains(err.Error(), "already exists") {
		return mcp.NewToolResultError(fmt.Sprintf("branch %s already exists; pick another name or push to it", branch)), nil
	}
	if err != nil {
		return toolError("create branch "+branch, err), nil
	}
	return jsonResult(map[string]any{"branch": branch, "sha": ref.GetObject().GetSHA(), "from": from}), nil
}

func (sc *toolScope) createPull(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	head, bad := requireText(req, "head")
	if bad != nil {
		return bad, nil
	}
	title, bad := requireText(req, "title")
	if bad != nil {
		return bad, nil
	}
	head = strings.TrimPrefix(strings.TrimSpace(head), "refs/heads/")
	base := strings.TrimPrefix(strings.TrimSpace(req.GetString("base", "")), "refs/heads/")
	if base == "" {
		var err error
		if base, err = sc.defaultBranch(ctx); err != nil {
			return toolError("find the default branch", err), nil
		}
	}
	if head == base {
		return mcp.NewToolResultError(fmt.Sprintf("head and base are both %s: push the changes to another branch first", head)), nil
	}
	pull := &gh.NewPullRequest{Title: gh.String(title), Head: gh.String(head), Base: gh.String(base), Draft: gh.Bool(req.GetBool("draft", false))}
	if body := req.GetString("body", ""); body != "" {
		pull.Body = gh.String(body)
	}
	pr, _, err := sc.gh().PullRequests.Create(ctx, sc.owner, sc.repo, pull)
	if err != nil {
		return toolError(fmt.Sprintf("open a pull request from %s into %s", head, base), err), nil
	}
	return jsonResult(map[string]any{"number": pr.GetNumber(), "url": pr.GetHTMLURL(), "head": head, "base": base, "draft": pr.GetDraft(),
		"linked": sc.link(ctx, pr.GetNumber(), pr.GetHTMLURL())}), nil
}

func (sc *toolScope) createIssue(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	title, bad := requireText(req, "title")
	if bad != nil {
		return bad, nil
	}
	is := &gh.IssueRequest{Title: gh.String(title)}
	if body := req.GetString("body", ""); body != "" {
		is.Body = gh.String(body)
	}
	if labels := req.GetStringSlice("labels", nil); len(labels) > 0 {
		is.Labels = &labels
	}
	out, _, err := sc.gh().Issues.Create(ctx, sc.owner, sc.repo, is)
	if err != nil {
		return toolError("open an issue in "+sc.owner+"/"+sc.repo, err), nil
	}
	return jsonResult(map[string]any{"number": out.GetNumber(), "url": out.GetHTMLURL(), "linked": sc.link(ctx, out.GetNumber(), out.GetHTMLURL())}), nil
}

// link routes the pull request or issue the model opened to its session,
// so a mention there steers this session instead of starting another
// (and a session from Linear shows it in its activity). It reports
// whether the link holds; one that fails is logged, the work stays done.
func (sc *toolScope) link(ctx context.Context, number int, url string) bool {
	key := sessionKey(sc.owner, sc.repo, number)
	_, err := sc.p.cfg.Sessions.AddLink(ctx, sc.session, core.LinkBody{Key: key, By: core.LinkedByAgent, URL: url})
	if err != nil {
		sc.p.log.Warn("opened, but not linked to the session", "session_id", sc.session, "key", key, "err", err)
		return false
	}
	return true
}
