package github

import (
	"strconv"
	"strings"
	"testing"

	gh "github.com/google/go-github/v62/github"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakegithub"
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
	// Lists name the session by its issue.
	if s.Origin == nil || s.Origin.Title != "Widgets" {
		t.Fatalf("origin %+v, want the issue's title", s.Origin)
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

// TestPrimeEarlierConversation: a first mention on an issue or pull
// request with comments before it gives the first turn the newest of
// them (HistoryLimit), review comments with their file and line, the
// app's own as "you" without their hidden markers, marked as the earlier
// conversation; the mention itself and what came after it are left out,
// and an issue with nothing before the mention gets nothing.
func TestPrimeEarlierConversation(t *testing.T) {
	tests := []struct {
		name    string
		pr      bool
		before  func(f *fakegithub.Server, n int)
		limit   int
		want    []string // in this order
		notWant []string
	}{
		{"an issue, the newest kept", false, func(f *fakegithub.Server, n int) {
			f.AddComment("acme/widgets", n, false, "carol", "the oldest, dropped")
			f.AddComment("acme/widgets", n, false, "carol", "It breaks on Mondays.")
			f.AddComment("acme/widgets", n, false, "sb-agent[bot]", "I looked at it.\n\n<!-- switchboard:ses_x:4 -->")
			f.AddComment("acme/widgets", n, false, "bob", "Only in UTC+2.")
		}, 3, []string{"Earlier conversation on this issue, before you were mentioned", "1 older comments are not shown",
			"@carol: It breaks on Mondays.", "you: I looked at it.", "@bob: Only in UTC+2."},
			[]string{"the oldest, dropped", "switchboard:ses_x", "@sb-agent look", "after the mention"}},
		{"a pull request's review comments", true, func(f *fakegithub.Server, n int) {
			f.AddComment("acme/widgets", n, false, "carol", "Please look at the clock.")
			f.AddReviewComment("acme/widgets", n, "bob", "clock.go", 12, "This reads time.Now.")
		}, 20, []string{"Earlier conversation on this pull request", "@carol: Please look at the clock.", "@bob on clock.go line 12: This reads time.Now."},
			[]string{"not shown", "@sb-agent look", "after the mention"}},
		{"nothing before the mention", false, func(*fakegithub.Server, int) {}, 20, nil, []string{"Earlier conversation"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newInstallRig(t, nil)
			r.p.cfg.HistoryLimit = tt.limit
			r.fake.SetPermission("alice", "write")
			n := 60 + i
			tt.before(r.fake, n)
			trigger := r.fake.AddComment("acme/widgets", n, false, "alice", "@sb-agent look")
			r.fake.AddComment("acme/widgets", n, false, "dave", "after the mention")
			p := mention(900, n, trigger, "@sb-agent look")
			if tt.pr {
				p["issue"].(map[string]any)["pull_request"] = map[string]any{"url": "https://api.github.com/repos/acme/widgets/pulls/" + strconv.Itoa(n)}
			}
			if code := r.deliver("issue_comment", p); code != 200 {
				t.Fatalf("mention: %d", code)
			}
			s, err := r.store.SessionByKey(t.Context(), sessionKey("acme", "widgets", n))
			if err != nil {
				t.Fatal(err)
			}
			evs, err := r.p.Prime(t.Context(), s)
			if err != nil {
				t.Fatal(err)
			}
			var all string
			for _, e := range evs {
				var m core.MessageBody
				if err := e.Decode(&m); err != nil || e.Level != core.LevelInternal || e.Actor != core.ActorSystem {
					t.Fatalf("primed %+v %v", e, err)
				}
				all += m.Text + "\n"
			}
			at := 0
			for _, w := range tt.want {
				i := strings.Index(all[at:], w)
				if i < 0 {
					t.Fatalf("%q missing (or out of order) in:\n%s", w, all)
				}
				at += i + len(w)
			}
			for _, w := range tt.notWant {
				if strings.Contains(all, w) {
					t.Fatalf("%q should not be in:\n%s", w, all)
				}
			}
		})
	}
}
