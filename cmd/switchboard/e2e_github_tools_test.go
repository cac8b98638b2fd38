package main_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/fixtures/fakegithub"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// TestGitHubTools: in a session started by a mention on a pull request,
// the model is offered the mcp_github_* tools, reads the PR and submits a
// review with an inline suggestion; the fake records the review, and the
// log has each call and its result.
func TestGitHubTools(t *testing.T) {
	const (
		sha    = "abcdef0123456789abcdef0123456789abcdef01"
		number = 30
		key    = "github:acme/widgets#30"
	)
	w := startGitHub(t, map[string]string{"SWITCHBOARD_SANDBOX": "none"})
	w.fake.SetPermission("alice", "write")
	w.fake.AddIssue("acme/widgets", fakegithub.Issue{Number: number, Title: "Fix Mondays", Body: "This fixes Mondays.", User: "carol",
		Pull: &fakegithub.Pull{HeadRef: "fix", HeadSHA: sha, BaseRef: "main", Files: []fakegithub.File{
			{Path: "widget.go", Status: "modified", Additions: 1, Deletions: 1, Patch: "@@ -4 +4 @@\n-\treturn false\n+\treturn true"},
		}}})
	suggestion := "Only on Mondays:\n```suggestion\n\treturn day == time.Monday\n```"
	w.ms.Push(
		modelserver.Step{ToolCalls: []modelserver.ToolCall{{ID: "toolu_get", Name: "mcp_github_get_issue", Input: map[string]any{}}}},
		modelserver.Step{ToolCalls: []modelserver.ToolCall{{ID: "toolu_review", Name: "mcp_github_create_review", Input: map[string]any{
			"event": "REQUEST_CHANGES", "body": "One change.",
			"comments": []map[string]any{{"path": "widget.go", "line": 4, "body": suggestion}},
		}}}},
		modelserver.Step{ToolCalls: []modelserver.ToolCall{{ID: "toolu_missing", Name: "mcp_github_get_issue", Input: map[string]any{"number": 404}}}},
		modelserver.Step{Text: "I asked for one change."},
	)
	comment := w.fake.AddComment("acme/widgets", number, false, "alice", "the trigger")
	if code := w.deliver("issue_comment", "", issueComment(number, true, comment, "alice", "@sb-agent please review"), githubSecret); code != 200 {
		t.Fatalf("deliver: %d", code)
	}
	id := w.session(key)
	_, evs := w.srv.waitIdle(id)
	checkLog(t, evs)

	reviews := w.fake.Reviews("acme/widgets", number)
	if len(reviews) != 1 {
		t.Fatalf("%d reviews", len(reviews))
	}
	r := reviews[0]
	if r.Event != "REQUEST_CHANGES" || r.Body != "One change." || r.CommitID != sha || len(r.Comments) != 1 {
		t.Fatalf("review %+v", r)
	}
	if c := r.Comments[0]; c.Path != "widget.go" || c.Line != 4 || c.Side != "RIGHT" || c.Body != suggestion {
		t.Fatalf("inline comment %+v", c)
	}

	uses := map[string]string{}
	for _, e := range evs {
		if e.Type == "agent.tool_use" {
			var u struct {
				ToolUseID string `json:"tool_use_id"`
				Name      string `json:"name"`
			}
			mustJSON(t, e.Body, &u)
			uses[u.ToolUseID] = u.Name
		}
	}
	if uses["toolu_get"] != "mcp_github_get_issue" || uses["toolu_review"] != "mcp_github_create_review" {
		t.Fatalf("tool uses %v", uses)
	}
	res := results(t, evs)
	if got := res["toolu_get"]; got.IsError || !strings.Contains(got.Output, `"title":"Fix Mondays"`) || !strings.Contains(got.Output, `"sha":"`+sha+`"`) {
		t.Fatalf("get_issue result %+v", got)
	}
	if got := res["toolu_review"]; got.IsError || !strings.Contains(got.Output, `"state":"CHANGES_REQUESTED"`) {
		t.Fatalf("create_review result %+v", got)
	}
	if got := res["toolu_missing"]; !got.IsError || !strings.Contains(got.Output, "404") {
		t.Fatalf("a missing issue: %+v", got)
	}

	reqs := w.ms.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d model requests", len(reqs))
	}
	for _, name := range []string{"mcp_github_get_issue", "mcp_github_create_review", "mcp_github_create_pull_request", "mcp_github_get_check_run"} {
		if !slices.Contains(reqs[0].Tools, name) {
			t.Fatalf("%s not offered: %v", name, reqs[0].Tools)
		}
	}
	if raw, _ := json.Marshal(evs); w.fake.TokensIssued() == 0 || strings.Contains(string(raw), "ghs_") {
		t.Fatalf("%d tokens issued; one in the log?", w.fake.TokensIssued())
	}
	w.fake.WaitFor(t, patience, "the answer", func() bool {
		for _, c := range w.botComments("acme/widgets", number) {
			if strings.Contains(c.Body, "I asked for one change.") {
				return true
			}
		}
		return false
	})
}
