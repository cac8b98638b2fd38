package github

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// upstream holds real payloads (octokit's webhook examples), read in
// place and never copied into the repository.
const upstream = "../../../shared/upstream/github"

// upstreamFiles lists them; without them the tests are skipped with a
// message, and fail under CI=true (CI has ../shared beside the clone).
func upstreamFiles(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(upstream, "*.json"))
	if len(files) == 0 {
		missingUpstream(t)
	}
	return files
}

// missingUpstream fails under CI=true and skips elsewhere.
func missingUpstream(t *testing.T) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal("upstream payloads not available at " + upstream + " (CI has ../shared beside the clone)")
	}
	t.Skip("no upstream payloads at " + upstream)
}

// eventOf is the X-GitHub-Event of an upstream file (issue_comment.created.json).
func eventOf(path string) string {
	name := filepath.Base(path)
	return name[:strings.Index(name, ".")]
}

func TestDecodeUpstream(t *testing.T) {
	for _, f := range upstreamFiles(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			body, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			ev, err := Decode(eventOf(f), body)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if ev == nil {
				t.Fatalf("event %s not handled", eventOf(f))
			}
		})
	}
}

// TestDecideUpstream edits real payloads the way a trigger would look (a
// mention, the trigger label, an installation) and checks the session
// each starts.
func TestDecideUpstream(t *testing.T) {
	id := identity{slug: "sb-agent", label: "sb-agent"}
	tests := []struct {
		file string
		edit func(m map[string]any)
		kind string
		key  string
	}{
		{"issue_comment.created.with-installation.json", func(m map[string]any) { set(m, "hello @sb-agent please look", "comment", "body") }, kindIssueComment, "github:Codertocat/Hello-World#1"},
		{"pull_request_review_comment.created.json", func(m map[string]any) { set(m, "@sb-agent why?", "comment", "body") }, kindReviewComment, "github:Codertocat/Hello-World#2"},
		{"pull_request_review.submitted.json", func(m map[string]any) { set(m, "@sb-agent fix these", "review", "body") }, kindReview, "github:Codertocat/Hello-World#2"},
		{"issues.assigned.with-installation.json", func(m map[string]any) {
			m["action"] = "labeled"
			m["label"] = map[string]any{"name": "sb-agent"}
		}, kindLabel, "github:Codertocat/Hello-World#1"},
		{"pull_request.opened.json", func(m map[string]any) {
			m["action"] = "labeled"
			m["label"] = map[string]any{"name": "SB-Agent"}
		}, kindLabel, "github:Codertocat/Hello-World#2"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(upstream, tt.file))
			if errors.Is(err, os.ErrNotExist) {
				missingUpstream(t)
			}
			var m map[string]any
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatal(err)
			}
			if m["installation"] == nil {
				m["installation"] = map[string]any{"id": 42}
			}
			tt.edit(m)
			body, _ := json.Marshal(m)
			ev, err := Decode(eventOf(tt.file), body)
			if err != nil {
				t.Fatal(err)
			}
			d := decide(ev, id)
			if d.act != actTrigger || d.ref.Kind != tt.kind || d.key != tt.key {
				t.Fatalf("decide = %v %q %q (%s), want trigger %q %q", d.act, d.ref.Kind, d.key, d.why, tt.kind, tt.key)
			}
			if d.ref.Login == "" || d.text == "" {
				t.Fatalf("decision without login or text: %+v", d)
			}
			if tt.kind == kindReviewComment && (!strings.Contains(d.text, "diff") || d.ref.CommentID == 0 || d.ref.ReviewID == 0 || d.group == "") {
				t.Fatalf("review comment decision lacks its hunk, ids or group: %+v", d)
			}
		})
	}
}

func set(m map[string]any, v any, path ...string) {
	for _, p := range path[:len(path)-1] {
		m = m[p].(map[string]any)
	}
	m[path[len(path)-1]] = v
}

func TestDecodeRejects(t *testing.T) {
	tests := []struct {
		event, body string
		invalid     bool
	}{
		{"issue_comment", `{`, true},
		{"issue_comment", `[]`, true},
		{"push", `{`, false}, // not handled: not decoded at all
		{"star", `{}`, false},
	}
	for _, tt := range tests {
		_, err := Decode(tt.event, []byte(tt.body))
		if got := errors.Is(err, core.ErrInvalid); got != tt.invalid {
			t.Errorf("Decode(%s, %s) = %v, want invalid %v", tt.event, tt.body, err, tt.invalid)
		}
	}
}
