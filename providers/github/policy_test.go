package github

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// TestAccessPolicy: an installation's policy names repositories
// (owner/repo) and logins, matched without regard to case. A mention
// outside it starts nothing and gets one polite reply; a Stop outside it
// queues nothing.
func TestAccessPolicy(t *testing.T) {
	r := newInstallRig(t, nil)
	for _, login := range []string{"alice", "bob"} {
		r.fake.SetPermission(login, "write")
	}
	from := func(login string, m map[string]any) map[string]any {
		m["sender"] = map[string]any{"login": login}
		m["comment"].(map[string]any)["user"] = map[string]any{"login": login}
		return m
	}
	inputs := func(number int) int {
		t.Helper()
		s, err := r.store.SessionByKey(t.Context(), sessionKey("acme", "widgets", number))
		if errors.Is(err, core.ErrNotFound) {
			return 0
		}
		if err != nil {
			t.Fatal(err)
		}
		p, err := r.store.Pending(t.Context(), s.ID)
		if err != nil {
			t.Fatal(err)
		}
		return len(p)
	}
	setPolicy := func(pol core.AccessPolicy) {
		t.Helper()
		in := r.installation(950)
		if _, err := r.store.UpdateInstallation(t.Context(), in.ID, func(in *core.Installation) error { in.Policy = pol; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	ok := func(event string, m map[string]any) {
		t.Helper()
		if code := r.deliver(event, m); code != 200 {
			t.Fatalf("%s: %d", event, code)
		}
	}
	ok("issue_comment", from("alice", mention(950, 1, 11, "@sb-agent one"))) // records the installation
	if n := inputs(1); n != 1 {
		t.Fatalf("no policy: %d inputs", n)
	}

	setPolicy(core.AccessPolicy{Channels: []string{"acme/gears"}})
	ok("issue_comment", from("alice", mention(950, 2, 21, "@sb-agent elsewhere")))
	if n := inputs(2); n != 0 {
		t.Fatalf("a repository outside the policy: %d inputs", n)
	}
	r.fake.WaitFor(t, 30*time.Second, "the refusal reply", func() bool {
		for _, c := range r.fake.Comments("acme/widgets", 2) {
			if strings.Contains(c.Body, "@alice") && strings.Contains(c.Body, "not set up") {
				return true
			}
		}
		return false
	})

	setPolicy(core.AccessPolicy{Channels: []string{"ACME/Widgets"}, Users: []string{"Bob"}})
	ok("issue_comment", from("alice", mention(950, 3, 31, "@sb-agent not you")))
	ok("issue_comment", from("bob", mention(950, 3, 32, "@sb-agent you")))
	if n := inputs(3); n != 1 {
		t.Fatalf("one allowed login of two: %d inputs", n)
	}
	ok("check_run", stopClicked(5001, 3)) // from alice
	if n := inputs(3); n != 1 {
		t.Fatalf("a Stop outside the policy queued an input (%d)", n)
	}
	stop := stopClicked(5002, 3)
	stop["sender"] = map[string]any{"login": "bob"}
	ok("check_run", stop)
	if n := inputs(3); n != 2 {
		t.Fatalf("a Stop within the policy: %d inputs", n)
	}
}
