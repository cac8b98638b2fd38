package github

import (
	"strings"
	"testing"

	gh "github.com/google/go-github/v62/github"
	"github.com/switchboardhq/switchboard/core"
)

// TestPrimeFirstTurnOnly: the title and body ride on the input
// that starts the session and reach the model once, through Prime; a
// later mention carries only what is new (for a review comment, its
// file, line and hunk).
func TestPrimeFirstTurnOnly(t *testing.T) {
	r := newInstallRig(t, nil)
	r.fake.SetPermission("alice", "write")
	const body = "They break on Mondays, every time."
	first := mention(950, 5, 21, "@sb-agent why?")
	first["issue"].(map[string]any)["body"] = body
	if code := r.deliver("issue_comment", first); code != 200 {
		t.Fatalf("first mention: %d", code)
	}
	s, err := r.store.SessionByKey(t.Context(), sessionKey("acme", "widgets", 5))
	if err != nil {
		t.Fatal(err)
	}
	evs, err := r.p.Prime(t.Context(), s)
	if err != nil || len(evs) != 1 {
		t.Fatalf("prime: %v %v", evs, err)
	}
	var m core.MessageBody
	if err := evs[0].Decode(&m); err != nil {
		t.Fatal(err)
	}
	if evs[0].Type != core.TypeUserMessage || evs[0].Level != core.LevelInternal || !strings.Contains(m.Text, "Widgets") || !strings.Contains(m.Text, body) ||
		!strings.Contains(m.Text, r.fake.URL+"/acme/widgets.git") {
		t.Fatalf("primed %+v: %q", evs[0], m.Text)
	}

	second := mention(950, 5, 22, "@sb-agent and now?")
	second["issue"].(map[string]any)["body"] = body
	if code := r.deliver("issue_comment", second); code != 200 {
		t.Fatalf("second mention: %d", code)
	}
	pending, err := r.store.Pending(t.Context(), s.ID)
	if err != nil || len(pending) != 2 {
		t.Fatalf("pending %d %v", len(pending), err)
	}
	var b inputBody
	if err := pending[1].Decode(&b); err != nil {
		t.Fatal(err)
	}
	if b.Context != nil || strings.Contains(b.Text, body) || !strings.Contains(b.Text, "and now?") {
		t.Fatalf("the second input repeats the context: %+v", b)
	}

	ran := *s
	ran.LastSeq = 4
	if evs, err := r.p.Prime(t.Context(), &ran); err != nil || len(evs) != 0 {
		t.Fatalf("a session that ran was primed again: %v %v", evs, err)
	}
}

// TestReviewCommentKeepsItsHunk: a review comment's text keeps its file,
// line and hunk (new on every comment) but not the PR's body.
func TestReviewCommentKeepsItsHunk(t *testing.T) {
	ev := reviewCommentEvent("@sb-agent this line?")
	d := decide(ev, identity{slug: "sb-agent", label: "sb-agent"})
	if d.act != actTrigger {
		t.Fatalf("decision %+v", d)
	}
	for _, want := range []string{"widget.go", "line 42", "@@ -40,3 +40,3 @@", "this line?"} {
		if !strings.Contains(d.text, want) {
			t.Errorf("text lacks %q: %q", want, d.text)
		}
	}
	if strings.Contains(d.text, "This fixes Mondays.") || d.context.Body != "This fixes Mondays." || d.context.Title != "Fix Mondays" {
		t.Errorf("text %q, context %+v", d.text, d.context)
	}
}

func reviewCommentEvent(text string) *gh.PullRequestReviewCommentEvent {
	return &gh.PullRequestReviewCommentEvent{
		Action:       gh.String("created"),
		Installation: &gh.Installation{ID: gh.Int64(950)},
		Repo:         &gh.Repository{Name: gh.String("widgets"), Owner: &gh.User{Login: gh.String("acme")}},
		Sender:       &gh.User{Login: gh.String("alice")},
		PullRequest: &gh.PullRequest{Number: gh.Int(6), Title: gh.String("Fix Mondays"), Body: gh.String("This fixes Mondays."),
			Head: &gh.PullRequestBranch{SHA: gh.String("abc")}},
		Comment: &gh.PullRequestComment{ID: gh.Int64(31), PullRequestReviewID: gh.Int64(32), Body: gh.String(text),
			User: &gh.User{Login: gh.String("alice")}, Path: gh.String("widget.go"), Line: gh.Int(42),
			DiffHunk: gh.String("@@ -40,3 +40,3 @@\n-if day == Monday {")},
	}
}
