package linear

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// seed reads a body from the fuzz corpus (the go test fuzz v1 format).
func seed(t *testing.T, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "fuzz", "FuzzDecode", name))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitN(string(raw), "\n", 3)
	s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")"))
	if err != nil {
		t.Fatalf("seed %s: %v", name, err)
	}
	return []byte(s)
}

func TestDecodeSeeds(t *testing.T) {
	const app = "e4a3c2b1-0000-4000-8000-00000000a99"
	tests := []struct {
		seed          string
		typ, action   string
		delegateGone  bool
		promptHas     string
		invalid       bool
		activityText  string
		activitySigns string
	}{
		{seed: "created", typ: "AgentSessionEvent", action: "created", promptHas: "(team Engineering) Run the tests."},
		{seed: "prompted", typ: "AgentSessionEvent", action: "prompted", activityText: "Use the staging database."},
		{seed: "prompted_stop", typ: "AgentSessionEvent", action: "prompted", activitySigns: "stop", activityText: "Stop"},
		{seed: "oauth_revoked", typ: "OAuthApp", action: "revoked"},
		{seed: "issue_delegate_removed", typ: "Issue", action: "update", delegateGone: true},
		{seed: "unassigned_notification", typ: "AppUserNotification", action: "issueUnassignedFromYou", delegateGone: true},
		{seed: "comment_create", typ: "Comment", action: "create"},
		{seed: "not_json", invalid: true},
	}
	for _, tc := range tests {
		t.Run(tc.seed, func(t *testing.T) {
			p, err := Decode(seed(t, tc.seed))
			if tc.invalid {
				if err == nil {
					t.Fatal("decoded")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Type != tc.typ || p.Action != tc.action {
				t.Fatalf("type %q action %q", p.Type, p.Action)
			}
			issue, gone := p.delegateRemoved(app)
			if gone != tc.delegateGone || (gone && issue != "9cfb482a-81e3-4154-b5b9-2c805e70a02d") {
				t.Fatalf("delegate removed: %q %v", issue, gone)
			}
			if _, gone := p.delegateRemoved("another-app"); gone && tc.typ == "Issue" {
				t.Fatal("another app's delegation taken for ours")
			}
			if tc.promptHas != "" && !strings.Contains(firstPrompt(p), tc.promptHas) {
				t.Fatalf("first prompt %q lacks %q", firstPrompt(p), tc.promptHas)
			}
			if tc.activityText != "" && (p.AgentActivity.Text() != tc.activityText || p.AgentActivity.Signal != tc.activitySigns) {
				t.Fatalf("activity %+v", p.AgentActivity)
			}
		})
	}
}

func TestParseKey(t *testing.T) {
	for _, k := range []string{"linear:o", "linear::a", "slack:o:a", "linear:o:a:b", ""} {
		if _, _, err := parseKey(k); err == nil {
			t.Fatalf("%q parsed", k)
		}
	}
	if org, as, err := parseKey(key("o-1", "as-1")); err != nil || org != "o-1" || as != "as-1" {
		t.Fatalf("%q %q %v", org, as, err)
	}
}
