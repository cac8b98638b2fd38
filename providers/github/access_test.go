package github

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/providers"
)

// grantedWorld is the tools world with a Linear session in the store
// granted repositories of installation 777 (acme).
func grantedWorld(t *testing.T, repos ...string) (*toolsWorld, *core.Session, providers.Grant) {
	t.Helper()
	w := newToolsWorld(t)
	res, err := w.store.CreateSession(t.Context(), core.NewSession{Session: core.Session{Agent: core.AgentRef{ID: "agt_test", Version: 1},
		Origin: &core.Origin{Provider: "linear", Key: "linear:org1:as-1", TenantID: "org1"}}, ExternalKey: "linear:org1:as-1"})
	if err != nil {
		t.Fatal(err)
	}
	in, err := w.store.FindInstallation(t.Context(), Name, "777")
	if err != nil {
		t.Fatal(err)
	}
	return w, res.Session, providers.Grant{Installation: in, Repositories: repos}
}

// connectGranted lists a granted session's tools through the MCP bridge.
func (w *toolsWorld) connectGranted(t *testing.T, s *core.Session, g providers.Grant) map[string]core.Tool {
	t.Helper()
	srv, err := w.p.GrantedToolServer(t.Context(), s, g)
	if err != nil || srv == nil {
		t.Fatalf("granted tool server: %v, %v", srv, err)
	}
	return bridged(t, s, srv)
}

// TestGrantedTools: a session from elsewhere granted two repositories
// names one of them in each call, cannot reach a third, has no issue of
// its own, and what it opens is linked to it, with its address.
func TestGrantedTools(t *testing.T) {
	w, s, g := grantedWorld(t, "acme/widgets", "acme/gears")
	tools := w.connectGranted(t, s, g)
	if schema := string(tools["mcp_github_get_issue"].Def().InputSchema); !strings.Contains(schema, `"repo"`) || !strings.Contains(schema, `"acme/gears"`) {
		t.Fatalf("get_issue schema %s: want the repo argument with the granted repositories", schema)
	}
	call := func(t *testing.T, name, input string) core.ToolResult {
		t.Helper()
		res, err := tools["mcp_github_"+name].Call(t.Context(), core.ToolCall{SessionID: s.ID, ID: "toolu_1", Input: json.RawMessage(input)})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for _, tc := range []struct {
		name, tool, input string
		isError           bool
		want              string
	}{
		{"an issue of a granted repository", "get_issue", `{"repo":"acme/widgets","number":8}`, false, "Widgets break on Mondays"},
		{"the repository in another case", "get_issue", `{"repo":"ACME/Widgets","number":8}`, false, "Widgets break on Mondays"},
		{"no repository among two", "get_issue", `{"number":8}`, true, `"repo" is required: one of acme/widgets, acme/gears`},
		{"a repository not granted", "get_issue", `{"repo":"acme/secrets","number":1}`, true, `"acme/secrets" is not a repository this session may use`},
		{"another account's repository", "get_file", `{"repo":"evil/widgets","path":"x"}`, true, "is not a repository this session may use"},
		{"no number of its own", "get_issue", `{"repo":"acme/widgets"}`, true, `"number" is required`},
		{"a file on the default branch", "get_file", `{"repo":"acme/widgets","path":"widget.go"}`, false, "widget.go at the default branch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, tc.tool, tc.input)
			if res.IsError != tc.isError || !strings.Contains(res.Output, tc.want) {
				t.Fatalf("result %+v: want is_error %v and %q", res, tc.isError, tc.want)
			}
		})
	}

	t.Run("a pull request it opens is linked", func(t *testing.T) {
		res := call(t, "create_pull_request", `{"repo":"acme/widgets","head":"sb/mondays","title":"Fix Mondays again"}`)
		var out struct {
			Number int
			URL    string
			Linked bool
		}
		if res.IsError || json.Unmarshal([]byte(res.Output), &out) != nil || out.Number == 0 || !out.Linked {
			t.Fatalf("result %+v", res)
		}
		key := sessionKey("acme", "widgets", out.Number)
		got, err := w.store.SessionByKey(t.Context(), key)
		if err != nil || got.ID != s.ID {
			t.Fatalf("%s routes to %v (%v), want the session", key, got, err)
		}
		if len(got.Links) != 1 || got.Links[0].AddedBy != core.LinkedByAgent || got.Links[0].URL != out.URL || out.URL == "" {
			t.Fatalf("links %+v, want the pull request's, by the agent, with %q", got.Links, out.URL)
		}
	})
	t.Run("an issue it opens is linked", func(t *testing.T) {
		res := call(t, "create_issue", `{"repo":"acme/gears","title":"Gears slip","labels":["bug"]}`)
		var out struct {
			Number int
			Linked bool
		}
		if res.IsError || json.Unmarshal([]byte(res.Output), &out) != nil || !out.Linked {
			t.Fatalf("result %+v", res)
		}
		is, ok := w.fake.Issue("acme/gears", out.Number)
		if !ok || !is.Opened || is.Title != "Gears slip" || !slices.Equal(is.Labels, []string{"bug"}) {
			t.Fatalf("opened %+v", is)
		}
		if got, err := w.store.SessionByKey(t.Context(), sessionKey("acme", "gears", out.Number)); err != nil || got.ID != s.ID {
			t.Fatalf("the issue routes to %v (%v)", got, err)
		}
	})
	t.Run("one repository needs no repo argument", func(t *testing.T) {
		w, s, g := grantedWorld(t, "acme/widgets")
		tools := w.connectGranted(t, s, g)
		res, err := tools["mcp_github_get_issue"].Call(t.Context(), core.ToolCall{SessionID: s.ID, ID: "toolu_2", Input: json.RawMessage(`{"number":8}`)})
		if err != nil || res.IsError || !strings.Contains(res.Output, "Widgets break on Mondays") {
			t.Fatalf("result %+v, %v", res, err)
		}
	})
}

// TestGrantedGit: the sandbox of a granted session gets one credential
// for its repositories, whose token reaches those repositories only.
func TestGrantedGit(t *testing.T) {
	w, _, g := grantedWorld(t, "acme/widgets", "acme/gears")
	hosts, id := w.p.GrantedGit(g)
	if !slices.Equal(hosts, []string{"github.com:443"}) || id != "github-git:777:acme/gears,widgets" || !w.p.IsGitCredential(id) {
		t.Fatalf("grant %q %q", hosts, id)
	}
	before := len(w.fake.IssuedTokens())
	if _, _, err := w.p.GitHeader(t.Context(), id, "github.com:443"); err != nil {
		t.Fatal(err)
	}
	issued := w.fake.IssuedTokens()
	if len(issued) != before+1 {
		t.Fatalf("%d tokens issued, want one more than %d", len(issued), before)
	}
	for _, tok := range issued {
		if slices.Equal(tok.Repositories, []string{"gears", "widgets"}) && tok.Permissions["contents"] == "write" && tok.Permissions["issues"] == "" {
			return
		}
	}
	t.Fatalf("no token narrowed to gears and widgets' contents: %+v", issued)
}

// TestCheckRepositories: an agent may be granted only repositories of the
// account an active installation is on, among those it may reach.
func TestCheckRepositories(t *testing.T) {
	w := newToolsWorld(t)
	in, err := w.store.FindInstallation(t.Context(), Name, "777")
	if err != nil {
		t.Fatal(err)
	}
	with := func(meta map[string]string) *core.Installation {
		c := *in
		c.Metadata = meta
		return &c
	}
	selected := map[string]string{metaSelection: "selected", metaRepos: "acme/gears,acme/widgets"}
	for _, tc := range []struct {
		name  string
		in    *core.Installation
		repos []string
		want  string // "" passes
	}{
		{"all repositories", in, []string{"acme/widgets", "ACME/anything"}, ""},
		{"selected ones", with(selected), []string{"acme/Gears"}, ""},
		{"one not selected", with(selected), []string{"acme/gears", "acme/secrets"}, "was not given access to acme/secrets"},
		{"another account", in, []string{"evil/widgets"}, "evil/widgets is not a repository of acme"},
		{"suspended", with(map[string]string{metaStatus: statusSuspended}), []string{"acme/widgets"}, "is suspended"},
		{"removed", with(map[string]string{metaStatus: statusDeleted}), []string{"acme/widgets"}, "is deleted"},
		{"not GitHub's", &core.Installation{ID: "ins_slack", Provider: "slack"}, []string{"acme/widgets"}, "is not GitHub's"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := w.p.CheckRepositories(t.Context(), tc.in, tc.repos)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrInvalid saying %q", err, tc.want)
			}
		})
	}
}

// TestInstallationOfKey: a key routes to the active installation on its
// repository's account; GitHub's installations keep no token, so their
// status decides.
func TestInstallationOfKey(t *testing.T) {
	w := newToolsWorld(t)
	in, err := w.p.InstallationOfKey(t.Context(), "github:ACME/widgets#7")
	if err != nil || in.ExternalID != "777" {
		t.Fatalf("installation %+v, %v", in, err)
	}
	if _, err := w.p.InstallationOfKey(t.Context(), "github:other/widgets#7"); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("another account: %v", err)
	}
	if _, err := w.store.UpdateInstallation(t.Context(), in.ID, func(in *core.Installation) error {
		in.Metadata = map[string]string{metaStatus: statusDeleted}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.p.InstallationOfKey(t.Context(), "github:acme/widgets#7"); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("a removed installation: %v", err)
	}
}
