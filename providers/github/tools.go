package github

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	gh "github.com/google/go-github/v62/github"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/switchboardhq/switchboard/core"
)

// toolScope is what a session's tools act on: its installation, its
// repository and the issue or pull request it came from. For a GitHub
// session the repository is never an argument, so the model cannot reach
// another one; a session from elsewhere that was granted repositories
// (GrantedToolServer) names one of repos in each call.
type toolScope struct {
	p            *Provider
	installation int64
	owner, repo  string
	number       int
	// repos are the granted repositories (owner/name), nil for a GitHub
	// session; session is whom what the model opens is linked to.
	repos   []string
	session string
}

// ToolServer is the session's in-process MCP server, its tools offered as
// mcp_github_<tool> (see server for the list). The server is kept per
// session (the MCP bridge keys its connection on the pointer).
func (p *Provider) ToolServer(ctx context.Context, s *core.Session) (*server.MCPServer, error) {
	if s.Origin == nil || s.Origin.Provider != Name {
		return nil, nil
	}
	owner, repo, number, err := parseKey(s.Origin.Key)
	if err != nil {
		return nil, nil
	}
	installation, err := sessionInstallation(s)
	if err != nil {
		return nil, nil
	}
	in, err := p.cfg.Installations.FindInstallation(ctx, Name, s.Origin.TenantID)
	if err != nil {
		if !errors.Is(err, core.ErrNotFound) {
			p.log.Warn("github tools not offered: installation lookup", "session_id", s.ID, "err", err)
		}
		return nil, nil
	}
	if installStatus(in) != statusActive {
		return nil, nil // uninstalled or suspended: no platform tools
	}
	return p.tools.Get(s.ID, installation, func() *server.MCPServer {
		return (&toolScope{p: p, installation: installation, owner: owner, repo: repo, number: number, session: s.ID}).server()
	}), nil
}

// forgetTools drops the tool servers of an uninstalled installation.
func (p *Provider) forgetTools(installation int64) {
	p.tools.Forget(func(k int64) bool { return k == installation })
}

func (sc *toolScope) server() *server.MCPServer {
	s := server.NewMCPServer("github", "1", server.WithToolCapabilities(false), server.WithRecovery())
	repo, numberDoc := sc.owner+"/"+sc.repo, "The issue or pull request number in this repository (default: the one this conversation is on)."
	if sc.repos != nil {
		repo, numberDoc = "the repository named by repo", "The issue or pull request number in that repository (required)."
	}
	s.AddTool(sc.tool("get_issue",
		mcp.WithDescription("Read an issue or pull request of "+repo+": title, body, state, author, labels, the latest comments with their ids and, for a pull request, its head and base branches and commits and its latest review comments (path, line, thread)."),
		mcp.WithNumber("number", mcp.Description(numberDoc)),
		mcp.WithNumber("comments", mcp.Description("How many of the latest comments to include (default 10, at most 50).")),
	), sc.on((*toolScope).getIssue))
	s.AddTool(sc.tool("list_pr_files",
		mcp.WithDescription("List the files a pull request of "+repo+" changes: path, status (added, modified, removed, renamed), additions, deletions."),
		mcp.WithNumber("number", mcp.Description(numberDoc)),
	), sc.on((*toolScope).listFiles))
	s.AddTool(sc.tool("get_pr_diff",
		mcp.WithDescription("Get a pull request's unified diff. Large diffs are cut: pass path to get one file's part."),
		mcp.WithNumber("number", mcp.Description(numberDoc)),
		mcp.WithString("path", mcp.Description("Only this file's part of the diff.")),
	), sc.on((*toolScope).getDiff))
	s.AddTool(sc.tool("get_file",
		mcp.WithDescription("Read a file of "+repo+" at a ref, with line numbers (a directory lists its entries). Line numbers are the file's, as review comments use them."),
		mcp.WithString("path", mcp.Required(), mcp.Description("The path from the repository root, e.g. cmd/app/main.go.")),
		mcp.WithString("ref", mcp.Description("A branch, tag or commit sha (default: the pull request's head commit, or the default branch on an issue).")),
		mcp.WithNumber("start_line", mcp.Description("First line to show (default 1).")),
		mcp.WithNumber("end_line", mcp.Description("Last line to show (default: the end, within the size limit).")),
	), sc.on((*toolScope).getFile))
	s.AddTool(sc.tool("comment",
		mcp.WithDescription("Post a comment on an issue or pull request (a top-level conversation comment, in GitHub Markdown). Your final answer is posted for you: use this for extra comments or other issues."),
		mcp.WithString("body", mcp.Required(), mcp.Description("The comment, in GitHub Markdown.")),
		mcp.WithNumber("number", mcp.Description(numberDoc)),
	), sc.on((*toolScope).comment))
	s.AddTool(sc.tool("reply_to_review_comment",
		mcp.WithDescription("Reply in the thread of a pull request review comment (an inline comment on a diff line; ids come from get_issue)."),
		mcp.WithNumber("comment_id", mcp.Required(), mcp.Description("The id of a review comment of the thread.")),
		mcp.WithString("body", mcp.Required(), mcp.Description("The reply, in GitHub Markdown.")),
		mcp.WithNumber("number", mcp.Description("The pull request number (default: this conversation's).")),
	), sc.on((*toolScope).replyToReviewComment))
	s.AddTool(sc.tool("create_review",
		mcp.WithDescription("Submit a review on a pull request, with inline comments on lines of its diff. To suggest a change, put a ```suggestion block holding the replacement lines in an inline comment's body: it replaces the lines from start_line (or line) to line."),
		mcp.WithString("event", mcp.Enum("COMMENT", "APPROVE", "REQUEST_CHANGES"), mcp.Description("COMMENT (default), APPROVE or REQUEST_CHANGES.")),
		mcp.WithString("body", mcp.Description("The review's summary, in GitHub Markdown (required for COMMENT and REQUEST_CHANGES without inline comments).")),
		mcp.WithArray("comments", mcp.Description("Inline comments."), mcp.Items(map[string]any{
			"type":     "object",
			"required": []string{"path", "line", "body"},
			"properties": map[string]any{
				"path":       map[string]any{"type": "string", "description": "The file's path, as list_pr_files shows it."},
				"line":       map[string]any{"type": "integer", "description": "The line of the file the comment is on (the last line of a range)."},
				"side":       map[string]any{"type": "string", "enum": []string{"RIGHT", "LEFT"}, "description": "RIGHT (default): the line in the new version; LEFT: a deleted line, in the old version."},
				"start_line": map[string]any{"type": "integer", "description": "For a comment on several lines: the first line."},
				"body":       map[string]any{"type": "string", "description": "The comment, in GitHub Markdown; may hold a ```suggestion block."},
			},
		})),
		mcp.WithNumber("number", mcp.Description("The pull request number (default: this conversation's).")),
		mcp.WithString("commit_id", mcp.Description("The commit the review is on (default: the head commit).")),
	), sc.on((*toolScope).createReview))
	s.AddTool(sc.tool("create_branch",
		mcp.WithDescription("Create a branch in "+repo+" pointing at a commit, e.g. to push work to or to open a pull request from."),
		mcp.WithString("branch", mcp.Required(), mcp.Description("The new branch's name, e.g. fix/monday-widgets.")),
		mcp.WithString("from", mcp.Description("A branch name or a commit sha to start from (default: the repository's default branch).")),
	), sc.on((*toolScope).createBranch))
	s.AddTool(sc.tool("create_pull_request",
		mcp.WithDescription("Open a pull request in "+repo+" from a branch that holds the changes (push it first). It is linked to this conversation: a mention of the app on it comes back here."),
		mcp.WithString("head", mcp.Required(), mcp.Description("The branch with the changes.")),
		mcp.WithString("title", mcp.Required(), mcp.Description("The pull request's title.")),
		mcp.WithString("body", mcp.Description("The description, in GitHub Markdown.")),
		mcp.WithString("base", mcp.Description("The branch to merge into (default: the repository's default branch).")),
		mcp.WithBoolean("draft", mcp.Description("Open it as a draft.")),
	), sc.on((*toolScope).createPull))
	s.AddTool(sc.tool("create_issue",
		mcp.WithDescription("Open an issue in "+repo+". It is linked to this conversation: a mention of the app on it comes back here."),
		mcp.WithString("title", mcp.Required(), mcp.Description("The issue's title.")),
		mcp.WithString("body", mcp.Description("The description, in GitHub Markdown.")),
		mcp.WithArray("labels", mcp.Description("Labels to put on it (they must exist in the repository)."), mcp.WithStringItems()),
	), sc.on((*toolScope).createIssue))
	s.AddTool(sc.tool("list_check_runs",
		mcp.WithDescription("List the check runs (CI jobs and other checks) of a commit: id, name, app, status, conclusion, title."),
		mcp.WithString("ref", mcp.Description("A commit sha, branch or tag (default: the pull request's head commit, or the default branch on an issue).")),
	), sc.on((*toolScope).listCheckRuns))
	s.AddTool(sc.tool("get_check_run",
		mcp.WithDescription("Read a check run's output (title, summary, details) and, for a GitHub Actions job, the end of its log: where failures are."),
		mcp.WithNumber("check_run_id", mcp.Required(), mcp.Description("The check run's id, from list_check_runs.")),
		mcp.WithBoolean("log", mcp.Description("Include a GitHub Actions job's log (default true).")),
	), sc.on((*toolScope).getCheckRun))
	return s
}

// tool declares a tool, with the repo argument when the scope holds
// granted repositories.
func (sc *toolScope) tool(name string, opts ...mcp.ToolOption) mcp.Tool {
	if sc.repos != nil {
		doc := []mcp.PropertyOption{mcp.Enum(sc.repos...), mcp.Description("The repository (owner/name): one of " + strings.Join(sc.repos, ", ") +
			". With a sandbox, git clones and pushes them over HTTPS from " + sc.p.cfg.WebURL + "/<owner>/<name>.git; the gateway authenticates, no token is needed or available.")}
		if len(sc.repos) > 1 {
			doc = append(doc, mcp.Required())
		}
		opts = append(opts, mcp.WithString("repo", doc...))
	}
	return mcp.NewTool(name, opts...)
}

// on is a tool's handler, run on the repository the call names when the
// scope holds granted repositories.
func (sc *toolScope) on(h func(*toolScope, context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error)) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if sc.repos == nil {
			return h(sc, ctx, req)
		}
		at, bad := sc.repoArg(req)
		if bad != nil {
			return bad, nil
		}
		return h(at, ctx, req)
	}
}

// repoArg is the scope narrowed to the granted repository the call names
// (the only one, when there is one).
func (sc *toolScope) repoArg(req mcp.CallToolRequest) (*toolScope, *mcp.CallToolResult) {
	name := strings.TrimSpace(req.GetString("repo", ""))
	if name == "" && len(sc.repos) == 1 {
		name = sc.repos[0]
	}
	for _, r := range sc.repos {
		if strings.EqualFold(r, name) {
			at := *sc
			at.owner, at.repo, _ = strings.Cut(r, "/")
			return &at, nil
		}
	}
	if name == "" {
		return nil, mcp.NewToolResultError(`"repo" is required: one of ` + strings.Join(sc.repos, ", "))
	}
	return nil, mcp.NewToolResultError(fmt.Sprintf("%q is not a repository this session may use: use one of %s", name, strings.Join(sc.repos, ", ")))
}

// gh is a REST client acting as the scope's installation.
func (sc *toolScope) gh() *gh.Client { return sc.p.client(sc.installation) }

// numberArg is the issue or PR number the call names, by default the
// session's.
func (sc *toolScope) numberArg(req mcp.CallToolRequest) (int, *mcp.CallToolResult) {
	n, ok := intArg(req, "number")
	if !ok && sc.number == 0 {
		return 0, mcp.NewToolResultError(`"number" is required: this conversation is not on an issue or pull request of ` + sc.owner + "/" + sc.repo)
	}
	if !ok {
		return sc.number, nil
	}
	if n <= 0 {
		return 0, mcp.NewToolResultError(`"number" must be a positive issue or pull request number`)
	}
	return int(n), nil
}

// intArg reads an integer argument given as a JSON number or a numeric
// string; ok is false when it is absent.
func intArg(req mcp.CallToolRequest, key string) (int64, bool) {
	v, present := req.GetArguments()[key]
	if !present || v == nil {
		return 0, false
	}
	switch x := v.(type) {
	case float64:
		if x != float64(int64(x)) {
			return -1, true
		}
		return int64(x), true
	case int:
		return int64(x), true
	case int64:
		return x, true
	case json.Number:
		n, err := x.Int64()
		if err != nil {
			return -1, true
		}
		return n, true
	case string:
		n, err := strconv.ParseInt(strings.TrimPrefix(strings.TrimSpace(x), "#"), 10, 64)
		if err != nil {
			return -1, true
		}
		return n, true
	}
	return -1, true
}

// requireText is a non-blank string argument.
func requireText(req mcp.CallToolRequest, key string) (string, *mcp.CallToolResult) {
	v, err := req.RequireString(key)
	if err != nil || strings.TrimSpace(v) == "" {
		return "", mcp.NewToolResultError(fmt.Sprintf("%q is required (a non-empty string)", key))
	}
	return v, nil
}

// toolError turns a failed call into a tool error the model can act on.
func toolError(what string, err error) *mcp.CallToolResult {
	var (
		rl    *gh.RateLimitError
		abuse *gh.AbuseRateLimitError
		er    *gh.ErrorResponse
	)
	switch {
	case errors.As(err, &rl):
		return mcp.NewToolResultError(fmt.Sprintf("%s: GitHub's rate limit is exhausted until %s", what, rl.Rate.Reset.UTC().Format("15:04:05 UTC")))
	case errors.As(err, &abuse):
		return mcp.NewToolResultError(fmt.Sprintf("%s: GitHub's secondary rate limit; wait %s before trying again", what, abuse.GetRetryAfter()))
	case errors.As(err, &er) && er.Response != nil:
		msg := fmt.Sprintf("%s: GitHub answered %d", what, er.Response.StatusCode)
		if er.Message != "" {
			msg += " " + er.Message
		}
		var details []string
		for _, e := range er.Errors {
			switch {
			case e.Message != "":
				details = append(details, e.Message)
			case e.Field != "":
				details = append(details, e.Field+" "+strings.ReplaceAll(e.Code, "_", " "))
			}
		}
		if len(details) > 0 {
			msg += ": " + strings.Join(details, "; ")
		}
		if er.Response.StatusCode == http.StatusNotFound {
			msg += " (it does not exist, or the app cannot see it)"
		}
		return mcp.NewToolResultError(msg)
	}
	return mcp.NewToolResultError(what + ": " + err.Error())
}

// jsonResult is a compact JSON answer.
func jsonResult(v any) *mcp.CallToolResult {
	out, err := json.Marshal(v)
	if err != nil {
		return mcp.NewToolResultError("encode the answer: " + err.Error())
	}
	return mcp.NewToolResultText(string(out))
}

// headOrDefault is the ref a read defaults to: the head commit of the
// session's pull request, or "" (the default branch) on an issue.
func (sc *toolScope) headOrDefault(ctx context.Context) (string, error) {
	if sc.number == 0 {
		return "", nil
	}
	pr, resp, err := sc.gh().PullRequests.Get(ctx, sc.owner, sc.repo, sc.number)
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return pr.GetHead().GetSHA(), nil
}

// defaultBranch is the repository's default branch.
func (sc *toolScope) defaultBranch(ctx context.Context) (string, error) {
	r, _, err := sc.gh().Repositories.Get(ctx, sc.owner, sc.repo)
	if err != nil {
		return "", err
	}
	if r.GetDefaultBranch() == "" {
		return "", fmt.Errorf("%s/%s has no default branch", sc.owner, sc.repo)
	}
	return r.GetDefaultBranch(), nil
}

// cut keeps at most n bytes of s, on a rune boundary, saying so.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + fmt.Sprintf("\n… (cut: %d of %d bytes shown)", i, len(s))
}
