package github

import (
	"testing"

	gh "github.com/google/go-github/v62/github"
)

func TestMentions(t *testing.T) {
	tests := []struct {
		text string
		want bool
	}{
		{"@sb-agent hi", true},
		{"hi @sb-agent.", true},
		{"hi @SB-Agent, please", true},
		{"(@sb-agent)", true},
		{"@sb-agent[bot] look", true},
		{"@sb-agent-two hi", false},
		{"mail me@sb-agent.example", false},
		{"sb-agent", false},
		{"`@sb-agentx`", false},
	}
	for _, tt := range tests {
		if got := mentions(tt.text, "sb-agent"); got != tt.want {
			t.Errorf("mentions(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}

func TestParseKey(t *testing.T) {
	tests := []struct {
		key    string
		owner  string
		repo   string
		number int
		ok     bool
	}{
		{"github:o/r#1", "o", "r", 1, true},
		{"github:o/r.go#12", "o", "r.go", 12, true},
		{"github:o/r#0", "", "", 0, false},
		{"github:o#1", "", "", 0, false},
		{"slack:o/r#1", "", "", 0, false},
		{"github:/r#1", "", "", 0, false},
	}
	for _, tt := range tests {
		o, r, n, err := parseKey(tt.key)
		if (err == nil) != tt.ok || o != tt.owner || r != tt.repo || n != tt.number {
			t.Errorf("parseKey(%q) = %q %q %d %v", tt.key, o, r, n, err)
		}
		if tt.ok && sessionKey(o, r, n) != tt.key {
			t.Errorf("sessionKey round trip of %q", tt.key)
		}
	}
}

// TestBotsNeverTrigger: another App's comment, review or label does not
// trigger the agent even when it mentions it. Two Apps would otherwise
// answer each other for ever: a refusal mentions whom it refuses.
func TestBotsNeverTrigger(t *testing.T) {
	id := identity{slug: "sb-agent", label: "sb-agent"}
	other := &gh.User{Login: gh.String("other-app[bot]"), Type: gh.String("Bot")}
	person := &gh.User{Login: gh.String("alice"), Type: gh.String("User")}
	in, repo := &gh.Installation{ID: gh.Int64(900)}, &gh.Repository{Name: gh.String("widgets"), Owner: &gh.User{Login: gh.String("acme")}}
	refusal := "Sorry @sb-agent[bot], I only take requests from people with write access to this repository."
	pr := &gh.PullRequest{Number: gh.Int(6), Head: &gh.PullRequestBranch{SHA: gh.String("abc")}}
	events := map[string]func(u *gh.User) any{
		"issue comment": func(u *gh.User) any {
			return &gh.IssueCommentEvent{Action: gh.String("created"), Installation: in, Repo: repo, Sender: u,
				Issue: &gh.Issue{Number: gh.Int(5)}, Comment: &gh.IssueComment{ID: gh.Int64(1), Body: gh.String(refusal), User: u}}
		},
		"review comment": func(u *gh.User) any {
			return &gh.PullRequestReviewCommentEvent{Action: gh.String("created"), Installation: in, Repo: repo, Sender: u, PullRequest: pr,
				Comment: &gh.PullRequestComment{ID: gh.Int64(2), Body: gh.String(refusal), User: u}}
		},
		"review": func(u *gh.User) any {
			return &gh.PullRequestReviewEvent{Action: gh.String("submitted"), Installation: in, Repo: repo, Sender: u, PullRequest: pr,
				Review: &gh.PullRequestReview{ID: gh.Int64(3), Body: gh.String(refusal), User: u}}
		},
		"issue label": func(u *gh.User) any {
			return &gh.IssuesEvent{Action: gh.String("labeled"), Installation: in, Repo: repo, Sender: u,
				Issue: &gh.Issue{Number: gh.Int(5)}, Label: &gh.Label{Name: gh.String("sb-agent")}}
		},
		"pull request label": func(u *gh.User) any {
			return &gh.PullRequestEvent{Action: gh.String("labeled"), Installation: in, Repo: repo, Sender: u, PullRequest: pr,
				Label: &gh.Label{Name: gh.String("sb-agent")}}
		},
	}
	for name, ev := range events {
		t.Run(name, func(t *testing.T) {
			if d := decide(ev(person), id); d.act != actTrigger {
				t.Fatalf("a person's %s did not trigger: %s", name, d.why)
			}
			if d := decide(ev(other), id); d.act != actIgnore {
				t.Fatalf("another app's %s triggered %s", name, d.key)
			}
		})
	}
}
