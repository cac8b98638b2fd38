package gitlab

import (
	"context"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/switchboardhq/switchboard/core"
)

func (sc *toolScope) comment(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	body, bad := requireText(req, "body")
	if bad != nil {
		return bad, nil
	}
	kind := sc.kind
	switch req.GetString("on", "") {
	case "issue":
		kind = kindIssue
	case "merge_request":
		kind = kindMR
	case "":
	default:
		return mcp.NewToolResultError(`"on" must be "issue" or "merge_request"`), nil
	}
	iid, bad := sc.iidArg(req, kind)
	if bad != nil {
		return bad, nil
	}
	c, err := sc.client(ctx)
	if err != nil {
		return toolError("post the note", err), nil
	}
	// The hidden marker makes the note the app's for the loop guard, even
	// should the app's username be unknown: a note the model writes never
	// triggers the agent, whatever it mentions. Quick actions in it are
	// the model's, never run.
	body = noQuickActions(body) + "\n\n<!-- switchboard:tool -->"
	var note *gl.Note
	if kind == kindMR {
		note, _, err = c.Notes.CreateMergeRequestNote(sc.project, iid, &gl.CreateMergeRequestNoteOptions{Body: gl.Ptr(body)}, gl.WithContext(ctx))
	} else {
		note, _, err = c.Notes.CreateIssueNote(sc.project, iid, &gl.CreateIssueNoteOptions{Body: gl.Ptr(body)}, gl.WithContext(ctx))
	}
	if err != nil {
		return toolError(fmt.Sprintf("post a note on %s%d", kind, iid), err), nil
	}
	return jsonResult(map[string]any{"id": note.ID, "on": sessionKey(sc.project, kind, iid)}), nil
}

func (sc *toolScope) createMergeRequest(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	source, bad := requireText(req, "source_branch")
	if bad != nil {
		return bad, nil
	}
	title, bad := requireText(req, "title")
	if bad != nil {
		return bad, nil
	}
	c, err := sc.client(ctx)
	if err != nil {
		return toolError("open the merge request", err), nil
	}
	target := strings.TrimSpace(req.GetString("target_branch", ""))
	if target == "" {
		pr, _, err := c.Projects.GetProject(sc.project, nil, gl.WithContext(ctx))
		if err != nil {
			return toolError("read the project's default branch", err), nil
		}
		if target = pr.DefaultBranch; target == "" {
			return mcp.NewToolResultError(sc.project + " has no default branch: pass target_branch"), nil
		}
	}
	if req.GetBool("draft", false) && !strings.HasPrefix(strings.ToLower(title), "draft:") {
		title = "Draft: " + title
	}
	opt := &gl.CreateMergeRequestOptions{Title: gl.Ptr(title), SourceBranch: gl.Ptr(strings.TrimSpace(source)), TargetBranch: gl.Ptr(target)}
	if d := req.GetString("description", ""); d != "" {
		opt.Description = gl.Ptr(noQuickActions(d)) // GitLab runs a description's quick actions too
	}
	mr, _, err := c.MergeRequests.CreateMergeRequest(sc.project, opt, gl.WithContext(ctx))
	if err != nil {
		return toolError("open the merge request", err), nil
	}
	return jsonResult(map[string]any{"iid": mr.IID, "url": mr.WebURL, "linked": sc.link(ctx, mr.IID, mr.WebURL)}), nil
}

// linker links keys to sessions (the session store).
type linker interface {
	AddLink(ctx context.Context, sessionID string, l core.LinkBody) (*core.Session, error)
}

// link routes the merge request the model opened to its session, so a
// mention there steers this session instead of starting another. It
// reports whether the link holds; one that fails is logged, the work
// stays done.
func (sc *toolScope) link(ctx context.Context, iid int64, url string) bool {
	l, ok := sc.p.cfg.Sessions.(linker)
	if !ok {
		return false
	}
	key := sessionKey(sc.project, kindMR, iid)
	if _, err := l.AddLink(ctx, sc.session, core.LinkBody{Key: key, By: core.LinkedByAgent, URL: url}); err != nil {
		sc.p.log.Warn("opened, but not linked to the session", "session_id", sc.session, "key", key, "err", err)
		return false
	}
	return true
}
