package linear

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// TestAccessPolicy: an organization's policy names team keys and user
// ids. An agent session created, or a prompt written, from outside it
// starts and steers nothing and gets one error activity saying so; the
// same event delivered again tells it no second time.
func TestAccessPolicy(t *testing.T) {
	r := newRig(t)
	by := func(user string, m map[string]any) map[string]any {
		if act, ok := m["agentActivity"].(map[string]any); ok {
			act["userId"] = user
		} else {
			m["agentSession"].(map[string]any)["creatorId"] = user
		}
		return m
	}
	setPolicy := func(pol core.AccessPolicy) {
		t.Helper()
		if _, err := r.store.UpdateInstallation(t.Context(), r.in.ID, func(in *core.Installation) error { in.Policy = pol; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	inputs := func(as string) int {
		t.Helper()
		s, err := r.store.SessionByKey(t.Context(), key(testOrg, as))
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
	refusals := func() int {
		t.Helper()
		if err := r.p.Stop(t.Context()); err != nil { // the refusals told so far
			t.Fatal(err)
		}
		return len(slices.DeleteFunc(r.fake.shown(), func(s string) bool { return !strings.HasPrefix(s, "error: I am not set up") }))
	}
	ok := func(m map[string]any) {
		t.Helper()
		if code := r.deliver(m); code != 200 {
			t.Fatalf("deliver: %d", code)
		}
	}

	setPolicy(core.AccessPolicy{Channels: []string{"OPS"}})
	ok(by("user-2", created("as-eng")))
	ok(by("user-2", created("as-eng")))
	if n, told := inputs("as-eng"), refusals(); n != 0 || told != 1 {
		t.Fatalf("a team outside the policy: %d inputs, %d refusals", n, told)
	}

	setPolicy(core.AccessPolicy{Channels: []string{"ENG"}, Users: []string{"user-2"}})
	ok(by("user-2", created("as-ok")))
	ok(by("user-3", prompted("as-ok", "not yours", "")))
	ok(by("user-3", prompted("as-ok", "stop it", "stop")))
	if n, told := inputs("as-ok"), refusals(); n != 1 || told != 2 {
		t.Fatalf("a user outside the policy: %d inputs, %d refusals", n, told)
	}
	ok(by("user-2", prompted("as-ok", "go on", "")))
	if n := inputs("as-ok"); n != 2 {
		t.Fatalf("a prompt within the policy: %d inputs", n)
	}
}
