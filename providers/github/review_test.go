package github

import (
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakegithub"
)

// TestReviewGivenWhole: a review's summary and inline comments arrive as
// separate deliveries and make one input; whichever arrives first, that
// input holds the summary and every inline comment, those that do not
// mention the app included, so none of the reviewer's requests is lost.
func TestReviewGivenWhole(t *testing.T) {
	for _, order := range []string{"comment first", "review first"} {
		t.Run(order, func(t *testing.T) {
			r := newInstallRig(t, nil)
			r.fake.SetPermission("alice", "write")
			number := 40
			if order == "review first" {
				number = 41
			}
			rv := r.fake.AddReview("acme/widgets", number, "alice", fakegithub.Review{Event: "REQUEST_CHANGES",
				Body: "@sb-agent please address these",
				Comments: []fakegithub.ReviewComment{
					{Path: "widget.go", Line: 3, Side: "RIGHT", Body: "rename this variable", DiffHunk: "@@ -1,3 +1,3 @@\n-a := 1\n+b := 1"},
					{Path: "util.go", Line: 9, Side: "RIGHT", Body: "@sb-agent and handle the error here"},
				}})
			pr := map[string]any{"number": number, "title": "Fix Mondays", "body": "This fixes Mondays.", "head": map[string]any{"sha": "abc"}}
			base := func(action string) map[string]any {
				return map[string]any{"action": action, "installation": map[string]any{"id": 930}, "pull_request": pr,
					"repository": map[string]any{"name": "widgets", "full_name": "acme/widgets", "owner": map[string]any{"login": "acme"}},
					"sender":     map[string]any{"login": "alice", "type": "User"}}
			}
			comment := base("created")
			c := rv.Comments[1]
			comment["comment"] = map[string]any{"id": c.ID, "pull_request_review_id": rv.ID, "body": c.Body, "path": c.Path, "line": c.Line,
				"user": map[string]any{"login": "alice", "type": "User"}}
			review := base("submitted")
			review["review"] = map[string]any{"id": rv.ID, "body": rv.Body, "state": "changes_requested", "user": map[string]any{"login": "alice", "type": "User"}}
			deliveries := []struct {
				event   string
				payload map[string]any
			}{{"pull_request_review_comment", comment}, {"pull_request_review", review}}
			if order == "review first" {
				deliveries[0], deliveries[1] = deliveries[1], deliveries[0]
			}
			for _, d := range deliveries {
				if code := r.deliver(d.event, d.payload); code != 200 {
					t.Fatalf("deliver %s: %d", d.event, code)
				}
			}
			s, err := r.store.SessionByKey(t.Context(), sessionKey("acme", "widgets", number))
			if err != nil {
				t.Fatal(err)
			}
			pending, err := r.store.Pending(t.Context(), s.ID)
			if err != nil || len(pending) != 1 {
				t.Fatalf("%d inputs for one review (%v)", len(pending), err)
			}
			var b struct{ Text string }
			if err := pending[0].Decode(&b); err != nil || pending[0].Type != core.TypeUserMessage {
				t.Fatal(err)
			}
			for _, want := range []string{"please address these", "changes requested", "widget.go line 3", "rename this variable", "-a := 1",
				"util.go line 9", "handle the error here"} {
				if !strings.Contains(b.Text, want) {
					t.Errorf("the input lacks %q:\n%s", want, b.Text)
				}
			}
		})
	}
}
