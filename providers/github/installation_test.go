package github

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

func TestInstallChangeApply(t *testing.T) {
	tests := []struct {
		name   string
		start  map[string]string
		ch     installChange
		status string
		repos  string
	}{
		{"created", nil, installChange{action: "created", repos: []string{"o/b", "o/a"}, setRepos: true}, statusActive, "o/a,o/b"},
		{"added and removed", map[string]string{metaRepos: "o/a,o/b"}, installChange{action: "added", added: []string{"o/c", "o/a"}, removed: []string{"o/b"}}, statusActive, "o/a,o/c"},
		{"suspend", map[string]string{metaStatus: statusActive, metaRepos: "o/a"}, installChange{action: "suspend"}, statusSuspended, "o/a"},
		{"unsuspend", map[string]string{metaStatus: statusSuspended}, installChange{action: "unsuspend"}, statusActive, ""},
		{"deleted", map[string]string{metaStatus: statusActive, metaRepos: "o/a"}, installChange{action: "deleted"}, statusDeleted, ""},
		{"unsuspend does not revive a deleted one", map[string]string{metaStatus: statusDeleted}, installChange{action: "unsuspend"}, statusDeleted, ""},
		{"created again", map[string]string{metaStatus: statusDeleted}, installChange{action: "created", repos: []string{"o/z"}, setRepos: true}, statusActive, "o/z"},
		{"setup of a suspended one", nil, installChange{action: "setup", suspended: true}, statusSuspended, ""},
		{"new permissions keep the status", map[string]string{metaStatus: statusSuspended}, installChange{action: "new_permissions_accepted"}, statusSuspended, ""},
		{"a record from before statuses", map[string]string{}, installChange{}, statusActive, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := &core.Installation{Metadata: tc.start}
			tc.ch.apply(rec, "sb-agent")
			if got := rec.Metadata[metaStatus]; got != tc.status {
				t.Errorf("status %q, want %q", got, tc.status)
			}
			if got := rec.Metadata[metaRepos]; got != tc.repos {
				t.Errorf("repositories %q, want %q", got, tc.repos)
			}
			if rec.Metadata[metaSlug] != "sb-agent" {
				t.Errorf("slug %q", rec.Metadata[metaSlug])
			}
		})
	}
}

// TestInstallChangeUpstream reads the real installation payloads.
func TestInstallChangeUpstream(t *testing.T) {
	tests := []struct {
		file, event, action, account string
		repos, added                 []string
	}{
		{"installation.created.json", "installation", "created", "Codertocat", []string{"Codertocat/Hello-World"}, nil},
		{"installation.deleted.json", "installation", "deleted", "octocat", nil, nil},
		{"installation_repositories.added.json", "installation_repositories", "added", "Codertocat", nil, []string{"Codertocat/Space"}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(upstream, tc.file))
			if err != nil {
				if os.IsNotExist(err) {
					missingUpstream(t)
				}
				t.Fatal(err)
			}
			ev, err := Decode(tc.event, raw)
			if err != nil {
				t.Fatal(err)
			}
			d := decide(ev, identity{slug: "sb-agent", label: "sb-agent"})
			ch := d.change
			if d.act != actInstall || d.installation == 0 || ch == nil {
				t.Fatalf("decision %+v", d)
			}
			if ch.action != tc.action || !strings.EqualFold(ch.account, tc.account) || ch.accountType == "" || ch.selection == "" {
				t.Fatalf("change %+v", ch)
			}
			if strings.Join(ch.repos, ",") != strings.Join(tc.repos, ",") || strings.Join(ch.added, ",") != strings.Join(tc.added, ",") {
				t.Fatalf("repos %v added %v", ch.repos, ch.added)
			}
		})
	}
}

func installationEvent(action string, id int64, repos ...string) map[string]any {
	var list []any
	for _, r := range repos {
		list = append(list, map[string]any{"id": 1, "name": r[strings.Index(r, "/")+1:], "full_name": r})
	}
	return map[string]any{"action": action, "sender": map[string]any{"login": "acme-admin"}, "repositories": list,
		"installation": map[string]any{"id": id, "app_id": 4242, "repository_selection": "selected",
			"account": map[string]any{"login": "acme", "type": "Organization"}}}
}

func mention(id int64, number int, commentID int64, text string) map[string]any {
	return map[string]any{"action": "created", "installation": map[string]any{"id": id},
		"repository": map[string]any{"name": "widgets", "full_name": "acme/widgets", "owner": map[string]any{"login": "acme"}},
		"sender":     map[string]any{"login": "alice"},
		"issue":      map[string]any{"number": number, "title": "Widgets", "body": "They break."},
		"comment":    map[string]any{"id": commentID, "body": text, "user": map[string]any{"login": "alice"}}}
}

// TestInstallationLifecycle: installation events track the record; a
// suspended installation's mentions are acknowledged and ignored until it
// is unsuspended, a deleted one's until it is installed again.
func TestInstallationLifecycle(t *testing.T) {
	r := newInstallRig(t, nil)
	r.fake.SetPermission("alice", "write")
	const id = 900
	ok := func(event string, payload map[string]any) {
		t.Helper()
		if code := r.deliver(event, payload); code != 200 {
			t.Fatalf("%s: %d", event, code)
		}
	}
	inputs := func(number int) int {
		t.Helper()
		s, err := r.store.SessionByKey(t.Context(), sessionKey("acme", "widgets", number))
		if err != nil {
			return 0
		}
		p, err := r.store.Pending(t.Context(), s.ID)
		if err != nil {
			t.Fatal(err)
		}
		return len(p)
	}
	ok("installation", installationEvent("created", id, "acme/widgets", "acme/gears"))
	in := r.installation(id)
	if in == nil || in.Name != "acme" || in.Metadata[metaStatus] != statusActive || in.Metadata[metaRepos] != "acme/gears,acme/widgets" {
		t.Fatalf("after created: %+v", in)
	}
	added := map[string]any{"action": "added", "repository_selection": "selected", "installation": installationEvent("", id)["installation"],
		"repositories_added": []any{map[string]any{"full_name": "acme/sprockets"}}, "repositories_removed": []any{map[string]any{"full_name": "acme/gears"}}}
	ok("installation_repositories", added)
	if got := r.installation(id).Metadata[metaRepos]; got != "acme/sprockets,acme/widgets" {
		t.Fatalf("repositories after added/removed: %q", got)
	}

	ok("issue_comment", mention(id, 1, 11, "@sb-agent one"))
	if n := inputs(1); n != 1 {
		t.Fatalf("active: %d inputs", n)
	}
	ok("installation", installationEvent("suspend", id))
	ok("issue_comment", mention(id, 1, 12, "@sb-agent two"))
	ok("issue_comment", mention(id, 2, 13, "@sb-agent elsewhere"))
	if n1, n2 := inputs(1), inputs(2); n1 != 1 || n2 != 0 {
		t.Fatalf("suspended: inputs %d and %d", n1, n2)
	}
	ok("installation", installationEvent("unsuspend", id))
	ok("issue_comment", mention(id, 1, 14, "@sb-agent three"))
	if n := inputs(1); n != 2 {
		t.Fatalf("unsuspended: %d inputs", n)
	}

	r.p.client(id) // a client the deletion must drop
	ok("installation", installationEvent("deleted", id, "acme/widgets"))
	in = r.installation(id)
	if in.Metadata[metaStatus] != statusDeleted || in.Metadata[metaRepos] != "" {
		t.Fatalf("after deleted: %+v", in.Metadata)
	}
	r.p.mu.Lock()
	_, kept := r.p.clients[id]
	r.p.mu.Unlock()
	if kept {
		t.Fatal("the deleted installation's client was kept")
	}
	ok("issue_comment", mention(id, 1, 15, "@sb-agent four"))
	ok("issue_comment", mention(id, 3, 16, "@sb-agent new issue"))
	if n1, n3 := inputs(1), inputs(3); n1 != 2 || n3 != 0 {
		t.Fatalf("deleted: inputs %d and %d", n1, n3)
	}
	if got := r.installation(id).Metadata[metaStatus]; got != statusDeleted {
		t.Fatalf("a later event revived the deleted installation: %q", got)
	}
	ok("installation", installationEvent("created", id, "acme/widgets"))
	ok("issue_comment", mention(id, 1, 17, "@sb-agent five"))
	if n := inputs(1); n != 3 {
		t.Fatalf("installed again: %d inputs", n)
	}
	list, _, err := r.store.ListInstallations(t.Context(), core.InstallationQuery{Provider: Name})
	if err != nil || len(list) != 1 {
		raw, _ := json.Marshal(list)
		t.Fatalf("installations %s %v", raw, err)
	}
}
