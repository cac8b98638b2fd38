package github

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/server"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/mcpbridge"
	"github.com/switchboardhq/switchboard/fixtures/fakegithub"
	"github.com/switchboardhq/switchboard/sessions/store/bolt"
)

const (
	toolsRepo    = "acme/widgets"
	toolsMainSHA = "1111111111111111111111111111111111111111"
	toolsHeadSHA = "2222222222222222222222222222222222222222"
)

// toolsWorld is a provider against a fake GitHub holding one repository
// with a pull request (#7), an issue (#8) and CI runs on the PR's head.
type toolsWorld struct {
	p      *Provider
	store  *bolt.Store
	fake   *fakegithub.Server
	review int64 // a review comment on #7
	job    int64 // a failed GitHub Actions job on the head
	other  int64 // another app's check run
}

func newToolsWorld(t *testing.T) *toolsWorld {
	t.Helper()
	fake := fakegithub.Start(t)
	store, err := bolt.Open(filepath.Join(t.TempDir(), "switchboard.db"), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	p, err := New(Config{AppID: fake.AppID, PrivateKey: fake.KeyPEM, WebhookSecret: "tools-secret", Slug: fake.Slug,
		APIURL: fake.APIURL(), Sessions: store, Installations: store})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.SaveInstallation(t.Context(), &core.Installation{Provider: Name, ExternalID: "777", Name: "acme"}, nil, nil); err != nil {
		t.Fatal(err)
	}
	fake.SetBranch(toolsRepo, "main", toolsMainSHA)
	fake.SetBranch(toolsRepo, "fix", toolsHeadSHA)
	fake.AddIssue(toolsRepo, fakegithub.Issue{Number: 7, Title: "Fix Mondays", Body: "This fixes Mondays.", User: "carol", Labels: []string{"bug"},
		Pull: &fakegithub.Pull{HeadRef: "fix", HeadSHA: toolsHeadSHA, BaseRef: "main", BaseSHA: toolsMainSHA, Files: []fakegithub.File{
			{Path: "widget.go", Status: "modified", Additions: 2, Deletions: 1, Patch: "@@ -1,3 +1,4 @@\n package widgets\n-// old\n+func Monday() bool {\n+\treturn true"},
			{Path: "README.md", Status: "added", Additions: 1, Patch: "@@ -0,0 +1 @@\n+# Widgets"},
		}}})
	fake.AddIssue(toolsRepo, fakegithub.Issue{Number: 8, Title: "Widgets break on Mondays", Body: "Steps: run it on a Monday.", User: "dave"})
	fake.AddIssue(toolsRepo, fakegithub.Issue{Number: 9, Title: "Huge", User: "carol",
		Pull: &fakegithub.Pull{HeadRef: "huge", HeadSHA: toolsHeadSHA, BaseRef: "main", Diff: strings.Repeat("+x\n", 40_000)}})
	fake.SetFile(toolsRepo, toolsHeadSHA, "widget.go", "package widgets\n\nfunc Monday() bool {\n\treturn true\n}\n")
	fake.SetFile(toolsRepo, "main", "widget.go", "package widgets\n// old\n")
	fake.SetFile(toolsRepo, "main", "docs/guide.md", "# Guide\n")
	fake.SetFile(toolsRepo, "main", "docs/img/logo.txt", "logo")
	fake.AddComment(toolsRepo, 7, false, "alice", "looks close")
	w := &toolsWorld{p: p, store: store, fake: fake}
	w.review = fake.AddComment(toolsRepo, 7, true, "bob", "why this line?")
	log := strings.Repeat("##[group]setup\nok\n", 20_000) + "--- FAIL: TestMonday (0.01s)\n    widget_test.go:9: want false\n"
	w.job = fake.AddCIRun(toolsRepo, fakegithub.CIRun{Name: "test", App: "github-actions", HeadSHA: toolsHeadSHA, Conclusion: "failure",
		Title: "1 test failed", Summary: "TestMonday failed", Log: log})
	w.other = fake.AddCIRun(toolsRepo, fakegithub.CIRun{Name: "lint", App: "circleci", HeadSHA: toolsHeadSHA, Conclusion: "success", Title: "clean"})
	return w
}

func toolsSession(id, key string) *core.Session {
	return &core.Session{ID: id, Origin: &core.Origin{Provider: Name, Key: key, TenantID: "777"}}
}

// connect lists the session's tools through the MCP bridge, as the
// harness offers them.
func (w *toolsWorld) connect(t *testing.T, s *core.Session) map[string]core.Tool {
	t.Helper()
	srv, err := w.p.ToolServer(t.Context(), s)
	if err != nil || srv == nil {
		t.Fatalf("tool server: %v, %v", srv, err)
	}
	return bridged(t, s, srv)
}

// bridged lists a server's tools through the MCP bridge.
func bridged(t *testing.T, s *core.Session, srv *server.MCPServer) map[string]core.Tool {
	t.Helper()
	pool := mcpbridge.New(mcpbridge.Config{})
	t.Cleanup(pool.Shutdown)
	entries, err := pool.Tools(t.Context(), s.ID, []mcpbridge.Server{mcpbridge.InProcess{Name: Name, Server: srv}})
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]core.Tool{}
	for _, e := range entries {
		tools[e.Tool.Def().Name] = e.Tool
	}
	return tools
}

// TestTools calls each tool the way the model does (mcp_github_<tool>
// through the MCP bridge): happy paths, bad arguments and GitHub's errors
// all end as tool results.
func TestTools(t *testing.T) {
	w := newToolsWorld(t)
	s := toolsSession("ses_tools", "github:acme/widgets#7")
	tools := w.connect(t, s)
	var names []string
	for n := range tools {
		names = append(names, n)
	}
	slices.Sort(names)
	want := []string{"mcp_github_comment", "mcp_github_create_branch", "mcp_github_create_issue", "mcp_github_create_pull_request", "mcp_github_create_review",
		"mcp_github_get_check_run", "mcp_github_get_file", "mcp_github_get_issue", "mcp_github_get_pr_diff", "mcp_github_list_check_runs",
		"mcp_github_list_pr_files", "mcp_github_reply_to_review_comment"}
	if !slices.Equal(names, want) {
		t.Fatalf("tools %v", names)
	}
	if schema := string(tools["mcp_github_create_review"].Def().InputSchema); !strings.Contains(schema, `"start_line"`) || !strings.Contains(schema, `"REQUEST_CHANGES"`) {
		t.Fatalf("create_review schema %s", schema)
	}
	call := func(t *testing.T, name string, input any) core.ToolResult {
		t.Helper()
		tool, ok := tools[name]
		if !ok {
			t.Fatalf("no tool %s", name)
		}
		raw, _ := json.Marshal(input)
		res, err := tool.Call(t.Context(), core.ToolCall{SessionID: s.ID, ID: "toolu_1", Name: name, Input: raw})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(res.Output, "ghs_") {
			t.Fatalf("a token in the result: %s", res.Output)
		}
		return res
	}
	type args = map[string]any
	tests := []struct {
		name    string
		tool    string
		input   args
		want    []string
		not     []string
		isError bool
		check   func(t *testing.T, out string)
	}{
		{"get the session's PR", "get_issue", args{}, []string{`"kind":"pull_request"`, `"title":"Fix Mondays"`, `"author":"carol"`, `"labels":["bug"]`,
			`"head":{"ref":"fix","sha":"` + toolsHeadSHA, `"base":{"ref":"main"`, "looks close", "why this line?", `"changed_files":2`}, nil, false, nil},
		{"get an issue", "get_issue", args{"number": 8}, []string{`"kind":"issue"`, "Steps: run it on a Monday."}, []string{`"head"`}, false, nil},
		{"a number as a string", "get_issue", args{"number": "#8"}, []string{"Widgets break on Mondays"}, nil, false, nil},
		{"an unknown number", "get_issue", args{"number": 999}, []string{"get #999", "404", "does not exist"}, nil, true, nil},
		{"a number that is no number", "get_issue", args{"number": "seven"}, []string{`"number"`}, nil, true, nil},
		{"a negative number", "get_issue", args{"number": -3}, []string{`"number"`}, nil, true, nil},
		{"list the files", "list_pr_files", args{}, []string{`{"path":"widget.go","status":"modified","additions":2,"deletions":1}`, `"path":"README.md","status":"added"`}, nil, false, nil},
		{"files of an issue", "list_pr_files", args{"number": 8}, []string{"404"}, nil, true, nil},
		{"the diff", "get_pr_diff", args{}, []string{"diff --git a/widget.go b/widget.go", "+func Monday() bool {", "diff --git a/README.md"}, nil, false, nil},
		{"one file's diff", "get_pr_diff", args{"path": "README.md"}, []string{"+# Widgets"}, []string{"widget.go"}, false, nil},
		{"a file the PR does not change", "get_pr_diff", args{"path": "nope.go"}, []string{"does not change nope.go"}, nil, true, nil},
		{"a huge diff is cut", "get_pr_diff", args{"number": 9}, []string{"cut:", "pass path"}, nil, false, func(t *testing.T, out string) {
			if len(out) > maxDiffBytes+200 {
				t.Fatalf("diff of %d bytes", len(out))
			}
		}},
		{"a file at the PR head", "get_file", args{"path": "widget.go"}, []string{"widget.go at " + toolsHeadSHA + " (5 lines)", "     4\t\treturn true"}, nil, false, nil},
		{"a file at a branch", "get_file", args{"path": "widget.go", "ref": "main"}, []string{"     2\t// old"}, []string{"return true"}, false, nil},
		{"a range of lines", "get_file", args{"path": "/widget.go", "start_line": 3, "end_line": 4}, []string{"     3\tfunc Monday", "     4\t"}, []string{"package widgets"}, false, nil},
		{"a directory", "get_file", args{"path": "docs", "ref": "main"}, []string{"docs/ at main", "guide.md\t8", "img/"}, nil, false, nil},
		{"a missing file", "get_file", args{"path": "missing.go"}, []string{"get missing.go at " + toolsHeadSHA, "404"}, nil, true, nil},
		{"no path", "get_file", args{}, []string{`"path" is required`}, nil, true, nil},
		{"a path out of the repository", "get_file", args{"path": "../etc/passwd"}, []string{".."}, nil, true, nil},
		{"comment", "comment", args{"body": "On it."}, []string{`"number":7`}, nil, false, func(t *testing.T, _ string) {
			cs := w.fake.Comments(toolsRepo, 7)
			if c := cs[len(cs)-1]; c.Body != "On it." || c.Review || c.User != "sb-agent[bot]" {
				t.Fatalf("comment %+v", c)
			}
		}},
		{"comment on another issue", "comment", args{"body": "Related to #7.", "number": 8}, []string{`"number":8`}, nil, false, func(t *testing.T, _ string) {
			if cs := w.fake.Comments(toolsRepo, 8); len(cs) != 1 || cs[0].Body != "Related to #7." {
				t.Fatalf("comments on #8: %+v", cs)
			}
		}},
		{"an empty comment", "comment", args{"body": "  "}, []string{`"body" is required`}, nil, true, nil},
		{"reply in a review thread", "reply_to_review_comment", args{"comment_id": w.review, "body": "Because Mondays."}, []string{`"in_reply_to_id"`}, nil, false, func(t *testing.T, _ string) {
			cs := w.fake.Comments(toolsRepo, 7)
			if c := cs[len(cs)-1]; c.Body != "Because Mondays." || !c.Review || c.InReplyTo != w.review {
				t.Fatalf("reply %+v", c)
			}
		}},
		{"reply to an unknown comment", "reply_to_review_comment", args{"comment_id": 424242, "body": "hm"}, []string{"reply to review comment 424242", "404"}, nil, true, nil},
		{"reply without a comment id", "reply_to_review_comment", args{"body": "hm"}, []string{`"comment_id" is required`}, nil, true, nil},
		{"review with a suggestion", "create_review", args{"body": "Two notes.", "comments": []args{
			{"path": "widget.go", "line": 4, "body": "Mondays only:\n```suggestion\n\treturn day == Monday\n```"},
			{"path": "widget.go", "start_line": 3, "line": "4", "side": "right", "body": "Name it better."},
		}}, []string{`"state":"COMMENTED"`, `"comments":2`}, nil, false, func(t *testing.T, _ string) {
			rs := w.fake.Reviews(toolsRepo, 7)
			if len(rs) != 1 {
				t.Fatalf("%d reviews", len(rs))
			}
			r := rs[0]
			if r.Event != "COMMENT" || r.Body != "Two notes." || len(r.Comments) != 2 {
				t.Fatalf("review %+v", r)
			}
			if c := r.Comments[0]; c.Path != "widget.go" || c.Line != 4 || c.Side != "RIGHT" || c.StartLine != 0 || !strings.Contains(c.Body, "```suggestion\n\treturn day == Monday\n```") {
				t.Fatalf("inline comment %+v", c)
			}
			if c := r.Comments[1]; c.StartLine != 3 || c.Line != 4 || c.StartSide != "RIGHT" || c.Position != 0 {
				t.Fatalf("range comment %+v", c)
			}
		}},
		{"approve", "create_review", args{"event": "APPROVE"}, []string{`"state":"APPROVED"`}, nil, false, nil},
		{"request changes without a word", "create_review", args{"event": "REQUEST_CHANGES"}, []string{`needs a "body"`}, nil, true, nil},
		{"an unknown event", "create_review", args{"event": "MERGE", "body": "x"}, []string{`"event" must be`}, nil, true, nil},
		{"an inline comment without a line", "create_review", args{"comments": []args{{"path": "widget.go", "body": "x"}}}, []string{`comments[0]: "line"`}, nil, true, nil},
		{"a range upside down", "create_review", args{"comments": []args{{"path": "widget.go", "start_line": 5, "line": 4, "body": "x"}}}, []string{`"start_line" must be before`}, nil, true, nil},
		{"comments that are no list", "create_review", args{"comments": "widget.go:4 fix it"}, []string{`"comments" must be a list`}, nil, true, nil},
		{"a path the PR does not touch", "create_review", args{"comments": []args{{"path": "other.go", "line": 1, "body": "x"}}}, []string{"422", "Path could not be resolved"}, nil, true, nil},
		{"review an unknown PR", "create_review", args{"number": 999, "body": "x"}, []string{"404"}, nil, true, nil},
		{"create a branch", "create_branch", args{"branch": "sb/monday"}, []string{`"branch":"sb/monday"`, `"sha":"` + toolsMainSHA + `"`, `"from":"main"`}, nil, false, func(t *testing.T, _ string) {
			if sha, ok := w.fake.Branch(toolsRepo, "sb/monday"); !ok || sha != toolsMainSHA {
				t.Fatalf("branch at %q", sha)
			}
		}},
		{"a branch from a commit", "create_branch", args{"branch": "refs/heads/sb/at-head", "from": toolsHeadSHA}, []string{`"sha":"` + toolsHeadSHA}, nil, false, nil},
		{"a branch that exists", "create_branch", args{"branch": "sb/monday"}, []string{"already exists"}, nil, true, nil},
		{"a bad branch name", "create_branch", args{"branch": "two words"}, []string{"not a valid branch name"}, nil, true, nil},
		{"from an unknown branch", "create_branch", args{"branch": "sb/x", "from": "nowhere"}, []string{"find branch nowhere", "404"}, nil, true, nil},
		{"open a pull request", "create_pull_request", args{"head": "sb/monday", "title": "Fix Mondays for good", "body": "Closes #8."}, []string{`"head":"sb/monday"`, `"base":"main"`}, nil, false, func(t *testing.T, out string) {
			var res struct{ Number int }
			if err := json.Unmarshal([]byte(out), &res); err != nil || res.Number == 0 {
				t.Fatalf("answer %s", out)
			}
			is, ok := w.fake.Issue(toolsRepo, res.Number)
			if !ok || !is.Opened || is.Title != "Fix Mondays for good" || is.Body != "Closes #8." || is.Pull.BaseRef != "main" || is.Pull.HeadSHA != toolsMainSHA {
				t.Fatalf("opened %+v %+v", is, is.Pull)
			}
		}},
		{"a second pull request from the branch", "create_pull_request", args{"head": "sb/monday", "title": "Again"}, []string{"422", "already exists"}, nil, true, nil},
		{"a pull request without a title", "create_pull_request", args{"head": "sb/x"}, []string{`"title" is required`}, nil, true, nil},
		{"a pull request into itself", "create_pull_request", args{"head": "main", "title": "x"}, []string{"both main"}, nil, true, nil},
		{"list the check runs", "list_check_runs", args{}, []string{`"ref":"` + toolsHeadSHA, `"name":"test","app":"github-actions","status":"completed","conclusion":"failure","title":"1 test failed"`, `"name":"lint"`}, nil, false, nil},
		{"no check runs on main", "list_check_runs", args{"ref": "main"}, []string{`"check_runs":[]`}, nil, false, nil},
		{"a failed job with its log", "get_check_run", args{"check_run_id": w.job}, []string{`"summary":"TestMonday failed"`, "--- FAIL: TestMonday", "widget_test.go:9: want false", "left out"}, []string{"log_error"}, false, func(t *testing.T, out string) {
			if len(out) > 2*maxLogBytes { // the log is 360 kB
				t.Fatalf("answer of %d bytes", len(out))
			}
		}},
		{"a job without its log", "get_check_run", args{"check_run_id": w.job, "log": false}, []string{"1 test failed"}, []string{"FAIL: TestMonday", `"log"`}, false, nil},
		{"another app's check run", "get_check_run", args{"check_run_id": w.other}, []string{`"app":"circleci"`, `"title":"clean"`}, []string{`"log"`}, false, nil},
		{"an unknown check run", "get_check_run", args{"check_run_id": 5}, []string{"get check run 5", "404"}, nil, true, nil},
		{"no check run id", "get_check_run", args{}, []string{`"check_run_id" is required`}, nil, true, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, "mcp_github_"+tc.tool, tc.input)
			if res.IsError != tc.isError {
				t.Fatalf("is_error %v, want %v: %s", res.IsError, tc.isError, res.Output)
			}
			for _, s := range tc.want {
				if !strings.Contains(res.Output, s) {
					t.Fatalf("%q not in %s", s, clip(res.Output, 3000))
				}
			}
			for _, s := range tc.not {
				if strings.Contains(res.Output, s) {
					t.Fatalf("%q in %s", s, clip(res.Output, 3000))
				}
			}
			if tc.check != nil {
				tc.check(t, res.Output)
			}
		})
	}
}

// TestToolServerScope: one server per session, kept across cycles; none
// for a session of another provider, of an unknown or deleted
// installation; an issue session reads the default branch.
func TestToolServerScope(t *testing.T) {
	w := newToolsWorld(t)
	s := toolsSession("ses_scope", "github:acme/widgets#7")
	srv, err := w.p.ToolServer(t.Context(), s)
	if err != nil || srv == nil {
		t.Fatalf("tool server: %v, %v", srv, err)
	}
	if again, _ := w.p.ToolServer(t.Context(), s); again != srv {
		t.Fatal("a second cycle got another server: the bridge would reconnect")
	}
	if other, _ := w.p.ToolServer(t.Context(), toolsSession("ses_other", "github:acme/widgets#8")); other == nil || other == srv {
		t.Fatal("another session shares the server")
	}
	none := map[string]*core.Session{
		"api session":          {ID: "ses_api"},
		"slack session":        {ID: "ses_slack", Origin: &core.Origin{Provider: "slack", Key: "slack:T:C:1", TenantID: "T"}},
		"unknown installation": {ID: "ses_unknown", Origin: &core.Origin{Provider: Name, Key: "github:acme/widgets#7", TenantID: "778"}},
		"bad key":              {ID: "ses_bad", Origin: &core.Origin{Provider: Name, Key: "github:acme#7", TenantID: "777"}},
	}
	for name, s := range none {
		if srv, err := w.p.ToolServer(t.Context(), s); err != nil || srv != nil {
			t.Errorf("%s: server %v, %v", name, srv, err)
		}
	}

	t.Run("an issue session reads the default branch", func(t *testing.T) {
		issue := toolsSession("ses_issue", "github:acme/widgets#8")
		tools := w.connect(t, issue)
		res, err := tools["mcp_github_get_file"].Call(t.Context(), core.ToolCall{SessionID: issue.ID, ID: "toolu_2", Input: json.RawMessage(`{"path":"widget.go"}`)})
		if err != nil || res.IsError || !strings.Contains(res.Output, "widget.go at the default branch") || !strings.Contains(res.Output, "// old") {
			t.Fatalf("result %+v, %v", res, err)
		}
		res, err = tools["mcp_github_list_check_runs"].Call(t.Context(), core.ToolCall{SessionID: issue.ID, ID: "toolu_3", Input: json.RawMessage(`{}`)})
		if err != nil || res.IsError || !strings.Contains(res.Output, `"ref":"main"`) {
			t.Fatalf("result %+v, %v", res, err)
		}
	})

	t.Run("no tools once uninstalled", func(t *testing.T) {
		in, err := w.store.FindInstallation(t.Context(), Name, "777")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.store.UpdateInstallation(t.Context(), in.ID, func(in *core.Installation) error {
			in.Metadata = map[string]string{metaStatus: statusDeleted}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if srv, err := w.p.ToolServer(t.Context(), s); err != nil || srv != nil {
			t.Fatalf("server %v, %v", srv, err)
		}
	})
}
