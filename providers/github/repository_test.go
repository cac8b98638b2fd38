package github

import (
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakegithub"
)

// TestRepository: an issue's session clones the default branch, a pull
// request's its base branch (looked up at GitHub), both from the URL the
// model is given; a session from elsewhere has no repository.
func TestRepository(t *testing.T) {
	r := newInstallRig(t, nil)
	r.fake.SetPermission("alice", "write")
	const sha = "0123456789abcdef0123456789abcdef01234567"
	r.fake.AddIssue("acme/widgets", fakegithub.Issue{Number: 7, Title: "Fix", User: "bob",
		Pull: &fakegithub.Pull{HeadRef: "fix", HeadSHA: sha, BaseRef: "release-2", BaseSHA: sha}})
	issue := mention(950, 5, 21, "@sb-agent why?")
	pull := mention(950, 7, 22, "@sb-agent look")
	pull["issue"].(map[string]any)["pull_request"] = map[string]any{"url": r.fake.URL + "/repos/acme/widgets/pulls/7"}
	for _, tc := range []struct {
		name    string
		payload map[string]any
		number  int
		branch  string
	}{
		{"issue: the default branch", issue, 5, ""},
		{"pull request: its base branch", pull, 7, "release-2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if code := r.deliver("issue_comment", tc.payload); code != 200 {
				t.Fatalf("mention: %d", code)
			}
			s, err := r.store.SessionByKey(t.Context(), sessionKey("acme", "widgets", tc.number))
			if err != nil {
				t.Fatal(err)
			}
			got, err := r.p.Repository(t.Context(), s)
			if err != nil {
				t.Fatal(err)
			}
			want := core.Repository{FullName: "acme/widgets", CloneURL: r.fake.URL + "/acme/widgets.git", Dir: "widgets", Branch: tc.branch}
			if got == nil || *got != want {
				t.Fatalf("repository %+v, want %+v", got, want)
			}
		})
	}
	pulls := 0
	for _, c := range r.fake.Calls() {
		if c.Method == "GET" && c.Path == "/repos/acme/widgets/pulls/7" {
			pulls++
		}
	}
	if pulls != 1 {
		t.Fatalf("%d lookups of the pull request, want 1 (none for the issue)", pulls)
	}
	other := &core.Session{ID: "ses_x", Origin: &core.Origin{Provider: "slack", Key: "slack:T1:C1:1.2"}}
	if got, err := r.p.Repository(t.Context(), other); got != nil || err != nil {
		t.Fatalf("a slack session's repository: %+v %v", got, err)
	}
}
