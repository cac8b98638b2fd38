package gitlab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/providers"
)

var _ providers.ToolServer = (*Provider)(nil)

// toolScope is what a session's tools act on: its installation, its
// project and the issue or merge request it came from. The project is
// never an argument, so the model cannot reach another one.
type toolScope struct {
	p       *Provider
	in      *core.Installation
	project string
	kind    string // kindIssue or kindMR
	iid     int64
	session string
}

// ToolServer is the session's in-process MCP server, its tools offered
// as mcp_gitlab_<tool>. The server is kept per session (the MCP bridge
// keys its connection on the pointer).
func (p *Provider) ToolServer(ctx context.Context, s *core.Session) (*server.MCPServer, error) {
	if s.Origin == nil || s.Origin.Provider != Name {
		return nil, nil
	}
	project, kind, iid, err := parseKey(s.Origin.Key)
	if err != nil {
		return nil, nil
	}
	in, err := p.installationFor(ctx, "", project)
	if err != nil {
		if !errors.Is(err, core.ErrNotFound) {
			p.log.Warn("gitlab tools not offered: installation lookup", "session_id", s.ID, "err", err)
		}
		return nil, nil
	}
	return p.own.tools.Get(s.ID, in.ID, func() *server.MCPServer {
		return (&toolScope{p: p, in: in, project: project, kind: kind, iid: iid, session: s.ID}).server()
	}), nil
}

func (sc *toolScope) server() *server.MCPServer {
	s := server.NewMCPServer(Name, "1", server.WithToolCapabilities(false), server.WithRecovery())
	issueDoc := "The issue's iid in " + sc.project + " (default: the issue this conversation is on)."
	mrDoc := "The merge request's iid in " + sc.project + " (default: the merge request this conversation is on)."
	s.AddTool(mcp.NewTool("get_issue",
		mcp.WithDescription("Read an issue of "+sc.project+": title, description, state, author, labels and its latest notes (comments) with their ids."),
		mcp.WithNumber("iid", mcp.Description(issueDoc)),
		mcp.WithNumber("notes", mcp.Description("How many of the latest notes to include (default 10, at most 50).")),
	), sc.getIssue)
	s.AddTool(mcp.NewTool("get_merge_request",
		mcp.WithDescription("Read a merge request of "+sc.project+": title, description, state, author, source and target branches, head commit, and its latest notes with their ids."),
		mcp.WithNumber("iid", mcp.Description(mrDoc)),
		mcp.WithNumber("notes", mcp.Description("How many of the latest notes to include (default 10, at most 50).")),
	), sc.getMergeRequest)
	s.AddTool(mcp.NewTool("get_merge_request_diff",
		mcp.WithDescription("Get a merge request's changes as a unified diff. Large diffs are cut: pass path to get one file's part."),
		mcp.WithNumber("iid", mcp.Description(mrDoc)),
		mcp.WithString("path", mcp.Description("Only this file's part of the diff.")),
	), sc.getDiff)
	s.AddTool(mcp.NewTool("get_file",
		mcp.WithDescription("Read a file of "+sc.project+" at a ref, with line numbers."),
		mcp.WithString("path", mcp.Required(), mcp.Description("The path from the repository root, e.g. cmd/app/main.go.")),
		mcp.WithString("ref", mcp.Description("A branch, tag or commit sha (default: the merge request's head commit, or the default branch on an issue).")),
		mcp.WithNumber("start_line", mcp.Description("First line to show (default 1).")),
		mcp.WithNumber("end_line", mcp.Description("Last line to show (default: the end, within the size limit).")),
	), sc.getFile)
	s.AddTool(mcp.NewTool("comment",
		mcp.WithDescription("Post a note (comment) on an issue or merge request of "+sc.project+", in GitLab Markdown. Your final answer is posted for you: use this for extra notes or other issues."),
		mcp.WithString("body", mcp.Required(), mcp.Description("The note, in GitLab Markdown.")),
		mcp.WithString("on", mcp.Enum("issue", "merge_request"), mcp.Description("What iid names (default: what this conversation is on).")),
		mcp.WithNumber("iid", mcp.Description("The issue's or merge request's iid (default: this conversation's).")),
	), sc.comment)
	s.AddTool(mcp.NewTool("create_merge_request",
		mcp.WithDescription("Open a merge request in "+sc.project+" from a branch that holds the changes. Push it first: with a sandbox, clone and push "+sc.p.cfg.URL+"/"+sc.project+".git with git over HTTPS (the gateway authenticates; no token is needed or available). The merge request is linked to this conversation: a mention of the app on it comes back here."),
		mcp.WithString("source_branch", mcp.Required(), mcp.Description("The branch with the changes.")),
		mcp.WithString("title", mcp.Required(), mcp.Description("The merge request's title.")),
		mcp.WithString("description", mcp.Description("The description, in GitLab Markdown.")),
		mcp.WithString("target_branch", mcp.Description("The branch to merge into (default: the project's default branch).")),
		mcp.WithBoolean("draft", mcp.Description("Open it as a draft.")),
	), sc.createMergeRequest)
	return s
}

// client is a REST client acting as the scope's installation.
func (sc *toolScope) client(ctx context.Context) (*gl.Client, error) {
	return sc.p.apiClient(ctx, sc.in)
}

// iidArg is the iid the call names, by default the session's when it is
// of kind.
func (sc *toolScope) iidArg(req mcp.CallToolRequest, kind string) (int64, *mcp.CallToolResult) {
	n, ok := intArg(req, "iid")
	if !ok {
		if sc.kind != kind {
			return 0, mcp.NewToolResultError(`"iid" is required: this conversation is not on ` + kindWord(kind) + " of " + sc.project)
		}
		return sc.iid, nil
	}
	if n <= 0 {
		return 0, mcp.NewToolResultError(`"iid" must be a positive ` + kindWord(kind) + " iid")
	}
	return n, nil
}

// kindWord names a kind in a sentence.
func kindWord(kind string) string {
	if kind == kindMR {
		return "a merge request"
	}
	return "an issue"
}

// intArg reads an integer argument given as a JSON number or a numeric
// string ("#7", "!7"); ok is false when it is absent, and the value -1
// when it is not an integer.
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
	case json.Number:
		n, err := x.Int64()
		if err != nil {
			return -1, true
		}
		return n, true
	case string:
		n, err := strconv.ParseInt(strings.TrimLeft(strings.TrimSpace(x), "#!"), 10, 64)
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
	if errors.Is(err, gl.ErrNotFound) {
		return mcp.NewToolResultError(what + ": GitLab answered 404 (it does not exist, or the app cannot see it)")
	}
	var er *gl.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		msg := fmt.Sprintf("%s: GitLab answered %d", what, er.Response.StatusCode)
		if er.Message != "" {
			msg += " " + er.Message
		}
		if er.Response.StatusCode == http.StatusTooManyRequests {
			msg += " (rate limited: wait before trying again)"
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
