package main_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// TestGitHubTriggers is acceptance 1 and 2: each trigger kind starts the
// session of its issue or PR; 👀 on a triggering comment; a review
// comment is answered in its thread, the rest as issue comments; on a PR
// a check run goes queued → in_progress → completed.
func TestGitHubTriggers(t *testing.T) {
	const sha = "0123456789abcdef0123456789abcdef01234567"
	tests := []struct {
		name      string
		event     func(comment int64) (string, map[string]any)
		number    int
		pr        bool
		comment   bool // a triggering comment (👀)
		inThread  bool
		modelSees string
	}{
		{"issue comment", func(c int64) (string, map[string]any) {
			return "issue_comment", issueComment(1, false, c, "alice", "@sb-agent why do widgets break?")
		}, 1, false, true, false, "why do widgets break?"},
		{"review comment", func(c int64) (string, map[string]any) {
			return "pull_request_review_comment", reviewComment(2, sha, c, 9002, "alice", "@sb-agent is this line right?")
		}, 2, true, true, true, "widget.go line 42"},
		{"review", func(c int64) (string, map[string]any) {
			return "pull_request_review", review(3, sha, 9003, "alice", "@sb-agent please address these")
		}, 3, true, false, false, "please address these"},
		{"label on an issue", func(c int64) (string, map[string]any) { return labeled(4, false, "", "alice", "sb-agent") }, 4, false, false, false, "added the label"},
		{"label on a PR", func(c int64) (string, map[string]any) { return labeled(5, true, sha, "alice", "sb-agent") }, 5, true, false, false, "Fix Mondays"},
	}
	w := startGitHub(t, nil)
	w.fake.SetPermission("alice", "write")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var comment int64
			if tc.comment {
				comment = w.fake.AddComment("acme/widgets", tc.number, tc.inThread, "alice", "the trigger")
			}
			w.ms.Push(modelserver.Step{Text: "Answer to " + tc.name + "."})
			event, payload := tc.event(comment)
			if code := w.deliver(event, "", payload, githubSecret); code != 200 {
				t.Fatalf("deliver: %d", code)
			}
			key := "github:acme/widgets#" + strconv.Itoa(tc.number)
			id := w.session(key)
			if tenant := w.srv.session(id).Tenant; tenant != "github:acme/widgets" {
				t.Fatalf("tenant %q, want the repository's", tenant)
			}
			w.fake.WaitFor(t, patience, "the answer", func() bool {
				for _, c := range w.botComments("acme/widgets", tc.number) {
					if strings.Contains(c.Body, "Answer to "+tc.name) {
						return true
					}
				}
				return false
			})
			var answer = w.botComments("acme/widgets", tc.number)
			found := false
			for _, c := range answer {
				if strings.Contains(c.Body, "Answer to "+tc.name) {
					found = true
					if c.Review != tc.inThread || (tc.inThread && c.InReplyTo != comment) {
						t.Fatalf("answer %+v: want in review thread %v", c, tc.inThread)
					}
				}
			}
			if !found {
				t.Fatal("no answer")
			}
			if tc.comment {
				w.fake.WaitFor(t, patience, "👀 on the trigger", func() bool {
					c, _ := w.fake.Comment(comment)
					return len(c.Reactions) == 1 && c.Reactions[0] == "eyes"
				})
			}
			_, evs := w.srv.waitIdle(id)
			checkLog(t, evs)
			if !modelSaw(w.ms, tc.modelSees) {
				t.Fatalf("the model did not see %q", tc.modelSees)
			}
			if tc.pr {
				w.fake.WaitFor(t, patience, "the check run completed", func() bool {
					for _, cr := range w.fake.CheckRuns() {
						if strings.HasPrefix(cr.ExternalID, key+"@") && cr.Status == "completed" {
							return true
						}
					}
					return false
				})
				for _, cr := range w.fake.CheckRuns() {
					if strings.HasPrefix(cr.ExternalID, key+"@") && (strings.Join(cr.Statuses, ",") != "queued,in_progress,completed" || cr.HeadSHA != sha || cr.Name != "sb-agent" ||
						// Stop while it ran; no button once it completed.
						!slices.Contains(cr.Offered, "stop") || len(cr.Actions) != 0) {
						t.Fatalf("check run %+v", cr)
					}
				}
			} else {
				w.fake.WaitFor(t, patience, "the status comment edited", func() bool {
					for _, c := range w.botComments("acme/widgets", tc.number) {
						if strings.Contains(c.Body, "Done") && c.Edits > 0 {
							return true
						}
					}
					return false
				})
			}
		})
	}
}
