package gitlab

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/mcpbridge"
	"github.com/switchboardhq/switchboard/fixtures/fakegitlab"
)

const (
	toolsProject = "acme/platform/widgets"
	toolsHead    = "3f2a9c1d5e7b8a0c4d6e8f1a2b3c5d7e9f0a1b2c"
	toolsToken   = "glpat-project-token"
)

type toolsWorld struct {
	fake    *fakegitlab.Server
	p       *Provider
	project *fakegitlab.Project
	mr      *fakegitlab.Thread
	app     *fakegitlab.User
}

// newToolsWorld is a project with a merge request (!7) and an issue (#8),
// served in single-project mode.
func newToolsWorld(t *testing.T) *toolsWorld {
	t.Helper()
	fake := fakegitlab.Start(t)
	w := &toolsWorld{fake: fake}
	w.app = fake.AddUser("sb-agent", toolsToken)
	carol := fake.AddUser("carol", "")
	w.project = fake.AddProject(toolsProject, "private")
	fake.SetAccess(w.project.ID, w.app.ID, fakegitlab.Developer)
	w.mr = fake.AddMergeRequest(w.project.ID, 7, "Fix Mondays", "Widgets break on Mondays.", carol.ID, toolsHead)
	issue := fake.AddIssue(w.project.ID, 8, "Widgets break on Mondays", "Steps: run it on a Monday.", carol.ID)
	fake.AddNote(w.mr, carol.ID, "looks close", "", false)
	fake.AddNote(issue, carol.ID, "seen it too", "", false)
	fake.SetDiffs(w.mr, []fakegitlab.Diff{
		{OldPath: "widget.go", NewPath: "widget.go", Diff: "@@ -1,3 +1,3 @@\n package widgets\n-// old\n+func Monday() bool { return true }\n"},
		{OldPath: "README.md", NewPath: "README.md", NewFile: true, Diff: "@@ -0,0 +1 @@\n+# Widgets\n"},
	})
	fake.AddFile(w.project.ID, toolsHead, "widget.go", "package widgets\n\nfunc Monday() bool {\n\treturn true\n}\n")
	fake.AddFile(w.project.ID, "main", "widget.go", "package widgets\n// old\n")
	fake.AddBranch(w.project.ID, "fix/tuesdays")
	store := openStore(t)
	p, err := New(Config{URL: fake.URL, WebhookSecret: testHookSecret, Token: toolsToken, Project: toolsProject, Username: "sb-agent",
		Sessions: store, Installations: store, Sealer: testSealer(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	w.p = p
	return w
}

// bridged lists a session's tools through the MCP bridge, as the harness
// offers them.
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

// TestTools calls each tool the way the model does (mcp_gitlab_<tool>
// through the MCP bridge): happy paths, bad arguments and GitLab's errors
// all end as tool results.
func TestTools(t *testing.T) {
	w := newToolsWorld(t)
	s := &core.Session{ID: "ses_tools", Origin: &core.Origin{Provider: Name, Key: "gitlab:" + toolsProject + "!7"}}
	srv, err := w.p.ToolServer(t.Context(), s)
	if err != nil || srv == nil {
		t.Fatalf("tool server: %v, %v", srv, err)
	}
	if again, _ := w.p.ToolServer(t.Context(), s); again != srv {
		t.Error("a second call made another server: the bridge would reconnect")
	}
	tools := bridged(t, s, srv)
	var names []string
	for n := range tools {
		names = append(names, n)
	}
	slices.Sort(names)
	want := []string{"mcp_gitlab_comment", "mcp_gitlab_create_merge_request", "mcp_gitlab_get_file", "mcp_gitlab_get_issue",
		"mcp_gitlab_get_merge_request", "mcp_gitlab_get_merge_request_diff"}
	if !slices.Equal(names, want) {
		t.Fatalf("tools %v", names)
	}
	type args = map[string]any
	tests := []struct {
		name    string
		tool    string
		input   args
		want    []string
		not     []string
		isError bool
	}{
		{"the session's merge request", "get_merge_request", args{}, []string{`"iid":7`, `"title":"Fix Mondays"`, `"author":"carol"`,
			`"source_branch":"feature-7"`, `"target_branch":"main"`, `"sha":"` + toolsHead, "looks close"}, nil, false},
		{"an issue", "get_issue", args{"iid": 8}, []string{`"iid":8`, "Steps: run it on a Monday.", "seen it too"}, nil, false},
		{"an iid as a reference", "get_issue", args{"iid": "#8"}, []string{"Widgets break on Mondays"}, nil, false},
		{"no issue on a merge request", "get_issue", args{}, []string{`"iid" is required`, "not on an issue"}, nil, true},
		{"an unknown issue", "get_issue", args{"iid": 999}, []string{"read issue #999", "404", "does not exist"}, nil, true},
		{"an iid that is no number", "get_issue", args{"iid": "seven"}, []string{`"iid"`}, nil, true},
		{"a negative iid", "get_merge_request", args{"iid": -3}, []string{`"iid" must be a positive`}, nil, true},
		{"the diff", "get_merge_request_diff", args{}, []string{"diff --git a/widget.go b/widget.go", "--- a/widget.go\n+++ b/widget.go", "+func Monday()",
			"--- /dev/null\n+++ b/README.md"}, nil, false},
		{"one file's diff", "get_merge_request_diff", args{"path": "README.md"}, []string{"+# Widgets"}, []string{"widget.go"}, false},
		{"a file the diff does not touch", "get_merge_request_diff", args{"path": "main.go"}, []string{"does not change main.go"}, nil, true},
		{"a file at the head", "get_file", args{"path": "widget.go"}, []string{"1\tpackage widgets", "3\tfunc Monday() bool {"}, []string{"// old"}, false},
		{"a file at a ref", "get_file", args{"path": "/widget.go", "ref": "main"}, []string{"2\t// old"}, nil, false},
		{"some lines", "get_file", args{"path": "widget.go", "start_line": 3, "end_line": 4}, []string{"3\tfunc Monday", "4\t\treturn true"}, []string{"1\tpackage"}, false},
		{"a missing file", "get_file", args{"path": "nope.go"}, []string{"read nope.go", "404"}, nil, true},
		{"no path", "get_file", args{}, []string{`"path" is required`}, nil, true},
		{"a note on the merge request", "comment", args{"body": "done"}, []string{`"on":"gitlab:` + toolsProject + `!7"`}, nil, false},
		{"a note on an issue", "comment", args{"body": "see !7", "on": "issue", "iid": 8}, []string{`"on":"gitlab:` + toolsProject + `#8"`}, nil, false},
		{"an empty note", "comment", args{"body": "  "}, []string{`"body" is required`}, nil, true},
		{"a merge request", "create_merge_request", args{"source_branch": "fix/tuesdays", "title": "Fix Tuesdays", "draft": true},
			[]string{`"iid":8`, `/-/merge_requests/8`}, nil, false},
		{"a branch never pushed", "create_merge_request", args{"source_branch": "nope", "title": "x"}, []string{"GitLab answered 422"}, nil, true},
		{"no title", "create_merge_request", args{"source_branch": "fix/tuesdays"}, []string{`"title" is required`}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, _ := json.Marshal(tt.input)
			res, err := tools["mcp_gitlab_"+tt.tool].Call(t.Context(), core.ToolCall{SessionID: s.ID, ID: "toolu_1", Name: "mcp_gitlab_" + tt.tool, Input: raw})
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError != tt.isError {
				t.Fatalf("is_error %v: %s", res.IsError, res.Output)
			}
			if strings.Contains(res.Output, toolsToken) {
				t.Fatalf("the token in a result: %s", res.Output)
			}
			for _, s := range tt.want {
				if !strings.Contains(res.Output, s) {
					t.Errorf("no %q in %s", s, res.Output)
				}
			}
			for _, s := range tt.not {
				if strings.Contains(res.Output, s) {
					t.Errorf("%q in %s", s, res.Output)
				}
			}
		})
	}
	// What the writes left on GitLab.
	mrs := w.fake.MergeRequests(w.project.ID)
	if len(mrs) != 2 || mrs[1].Title != "Draft: Fix Tuesdays" || mrs[1].TargetBranch != "main" || mrs[1].AuthorID != w.app.ID {
		t.Errorf("merge requests %+v", mrs)
	}
	if notes := w.fake.NotesBy(w.mr, w.app.ID); len(notes) != 1 || !strings.HasPrefix(notes[0].Body, "done") || !marker.MatchString(notes[0].Body) {
		t.Errorf("the app's notes on !7: %+v", notes)
	}
}

func TestNoToolsForOtherSessions(t *testing.T) {
	w := newToolsWorld(t)
	for _, s := range []*core.Session{
		{ID: "ses_api"},
		{ID: "ses_gh", Origin: &core.Origin{Provider: "github", Key: "github:acme/app#1"}},
		{ID: "ses_other", Origin: &core.Origin{Provider: Name, Key: "gitlab:acme/another!1"}},
	} {
		if srv, err := w.p.ToolServer(t.Context(), s); err != nil || srv != nil {
			t.Errorf("%s: a server (%v, %v)", s.ID, srv, err)
		}
	}
}
