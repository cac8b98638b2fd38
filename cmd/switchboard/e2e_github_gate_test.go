package main_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// TestGitHubPermissionGate is acceptance 3: a commenter without write
// access gets one polite reply and no session, even when the delivery is
// repeated; the app's own comment mentioning itself does nothing.
func TestGitHubPermissionGate(t *testing.T) {
	w := startGitHub(t, nil)
	w.fake.SetPermission("mallory", "read")
	c := w.fake.AddComment("acme/widgets", 10, false, "mallory", "x")
	payload := issueComment(10, false, c, "mallory", "@sb-agent delete everything")
	for range 2 {
		if code := w.deliver("issue_comment", "d-refused", payload, githubSecret); code != 200 {
			t.Fatalf("deliver: %d", code)
		}
	}
	w.fake.WaitFor(t, patience, "the refusal", func() bool { return len(w.botComments("acme/widgets", 10)) == 1 })
	if got := w.botComments("acme/widgets", 10)[0].Body; !strings.Contains(got, "write access") {
		t.Fatalf("refusal %q", got)
	}

	// The intake decides before its 200.
	own := issueComment(11, false, 0, "sb-agent[bot]", "I am @sb-agent and I mention myself")
	if code := w.deliver("issue_comment", "", own, githubSecret); code != 200 {
		t.Fatalf("deliver own: %d", code)
	}
	for _, key := range []string{"github:acme/widgets#10", "github:acme/widgets#11"} {
		if n := len(w.sessionsFor(key)); n != 0 {
			t.Fatalf("%d sessions for %s", n, key)
		}
	}
	// A refusal is posted after the 200; serve's clean stop waits for
	// that work, so a second refusal would be there now.
	if err := w.srv.term(); err != nil {
		t.Fatalf("serve stopped with %v", err)
	}
	if n := len(w.botComments("acme/widgets", 10)); n != 1 {
		t.Fatalf("%d refusals", n)
	}
	if n := len(w.botComments("acme/widgets", 11)); n != 0 {
		t.Fatalf("%d answers to the app's own comment", n)
	}
	if n := len(w.ms.Requests()); n != 0 {
		t.Fatalf("%d model requests", n)
	}
}

// TestGitHubDeliveries is acceptance 5 (intake): a bad signature is 401
// and stores nothing; a redelivered delivery id appends nothing; a
// review and its review comments, delivered apart, make one turn.
func TestGitHubDeliveries(t *testing.T) {
	const sha = "89abcdef0123456789abcdef0123456789abcdef"
	w := startGitHub(t, nil)
	w.fake.SetPermission("alice", "admin")

	if code := w.deliver("issue_comment", "", issueComment(20, false, 1, "alice", "@sb-agent hi"), "wrong-secret"); code != 401 {
		t.Fatalf("bad signature: %d, want 401", code)
	}
	if code := w.deliver("push", "", map[string]any{"ref": "refs/heads/main"}, githubSecret); code != 200 {
		t.Fatalf("unhandled event: %d, want 200", code)
	}
	if code := w.deliver("ping", "", map[string]any{"zen": "Keep it logically awesome.", "hook_id": 1}, githubSecret); code != 200 {
		t.Fatalf("ping: %d, want 200", code)
	}
	if n := len(w.sessionsFor("github:acme/widgets#20")); n != 0 {
		t.Fatalf("%d sessions after a bad signature", n)
	}

	w.ms.Push(modelserver.Step{Text: "first answer"}, modelserver.Step{Text: "review answer"})
	c := w.fake.AddComment("acme/widgets", 21, false, "alice", "x")
	payload := issueComment(21, false, c, "alice", "@sb-agent once please")
	for range 3 {
		if code := w.deliver("issue_comment", "d-same", payload, githubSecret); code != 200 {
			t.Fatalf("deliver: %d", code)
		}
	}
	id := w.session("github:acme/widgets#21")
	_, evs := w.srv.waitIdle(id)
	inputs := 0 // the issue's context, logged before the first turn, is the gateway's (actor system)
	for _, e := range evs {
		if e.Type == "user.message" && e.Actor == "human" {
			inputs++
		}
	}
	if inputs != 1 {
		t.Fatalf("%d inputs for one delivery sent 3 times: %v", inputs, types(evs))
	}

	// A review with two comments: three deliveries, one turn.
	rc1 := w.fake.AddComment("acme/widgets", 22, true, "alice", "a")
	rc2 := w.fake.AddComment("acme/widgets", 22, true, "alice", "b")
	codes := []int{
		w.deliver("pull_request_review", "", review(22, sha, 9100, "alice", "@sb-agent see my comments"), githubSecret),
		w.deliver("pull_request_review_comment", "", reviewComment(22, sha, rc1, 9100, "alice", "@sb-agent this one"), githubSecret),
		w.deliver("pull_request_review_comment", "", reviewComment(22, sha, rc2, 9100, "alice", "@sb-agent and this"), githubSecret),
	}
	for _, code := range codes {
		if code != 200 {
			t.Fatalf("review deliveries: %v", codes)
		}
	}
	rid := w.session("github:acme/widgets#22")
	_, evs = w.srv.waitIdle(rid)
	if n := count(evs, "turn.started"); n != 1 {
		t.Fatalf("%d turns for one review: %v", n, types(evs))
	}
}

// TestGitHubTokenRefresh is acceptance 5 (tokens): installation tokens
// near their expiry are renewed before use, and only those. ghinstallation
// renews a token within a minute of its expiry, so tokens issued for 30 s
// are renewed at every use and none is ever used expired, while a token
// issued for an hour is kept; no wall-clock expiry is waited for.
func TestGitHubTokenRefresh(t *testing.T) {
	w := startGitHub(t, nil)
	w.fake.SetPermission("alice", "write")
	turn := func(n int, text string) int {
		t.Helper()
		w.ms.Push(modelserver.Step{Text: text})
		c := w.fake.AddComment("acme/widgets", n, false, "alice", "x")
		if code := w.deliver("issue_comment", "", issueComment(n, false, c, "alice", "@sb-agent go"), githubSecret); code != 200 {
			t.Fatalf("deliver: %d", code)
		}
		w.fake.WaitFor(t, patience, "the answer and the status comment done", func() bool {
			answered, done := false, false
			for _, c := range w.botComments("acme/widgets", n) {
				answered = answered || strings.Contains(c.Body, text)
				done = done || strings.Contains(c.Body, "Done")
			}
			return answered && done
		})
		w.srv.waitIdle(w.session(fmt.Sprintf("github:acme/widgets#%d", n)))
		return w.fake.TokensIssued()
	}
	w.fake.SetTokenTTL(30 * time.Second)
	a := turn(30, "answer A")
	b := turn(31, "answer B")
	if a == 0 || b <= a {
		t.Fatalf("tokens issued: %d after the first turn, %d after the second: a token near its expiry was used again", a, b)
	}
	w.fake.SetTokenTTL(time.Hour)
	c := turn(32, "answer C")
	d := turn(33, "answer D")
	if c <= b || d != c {
		t.Fatalf("tokens issued: %d, then %d and %d with hour-long tokens: want one renewal of the 30 s token, then none", b, c, d)
	}
	t.Logf("tokens issued after each turn: %d, %d, %d, %d", a, b, c, d)
	for _, c := range w.fake.Calls() {
		if c.Status == 401 {
			t.Fatalf("a call with an expired token: %+v", c)
		}
	}
}

// TestGitHubAnswerExactlyOnceAcrossSIGKILL is acceptance 5 (crash):
// serve is killed after the model answered and before the sink recorded
// the post; after the restart the answer is on the issue exactly once.
func TestGitHubAnswerExactlyOnceAcrossSIGKILL(t *testing.T) {
	for _, park := range []string{"before_post", "after_post"} {
		t.Run(park, func(t *testing.T) {
			w := startGitHub(t, map[string]string{"SWITCHBOARD_TEST_GITHUB_PARK": park})
			w.fake.SetPermission("alice", "write")
			w.ms.Push(modelserver.Step{Text: "the one and only answer"})
			c := w.fake.AddComment("acme/widgets", 40, false, "alice", "x")
			if code := w.deliver("issue_comment", "", issueComment(40, false, c, "alice", "@sb-agent answer once"), githubSecret); code != 200 {
				t.Fatalf("deliver: %d", code)
			}
			id := w.session("github:acme/widgets#40")
			w.srv.waitFor(id, "the answer logged", func(_ sessionState, evs []event) bool { return count(evs, "agent.message") == 1 })
			answers := func() int {
				n := 0
				for _, c := range w.botComments("acme/widgets", 40) {
					if strings.Contains(c.Body, "the one and only answer") {
						n++
					}
				}
				return n
			}
			if park == "after_post" {
				w.fake.WaitFor(t, patience, "the answer", func() bool { return answers() == 1 })
			}
			w.srv.waitParked("github " + park)
			if n := answers(); park == "before_post" && n != 0 {
				t.Fatalf("posted before the park point: %d", n)
			}
			w.srv.kill()
			delete(w.env, "SWITCHBOARD_TEST_GITHUB_PARK")
			w.srv = w.srv.restart()
			w.fake.WaitFor(t, patience, "the answer after the restart", func() bool { return answers() >= 1 })
			w.srv.waitIdle(id)
			// The sink renders a session's log in order: once it edited the
			// status comment at the turn's end, a second post of the
			// answer would have been made.
			w.fake.WaitFor(t, patience, "the status comment edited", func() bool {
				for _, c := range w.botComments("acme/widgets", 40) {
					if strings.Contains(c.Body, "Done") {
						return true
					}
				}
				return false
			})
			if n := answers(); n != 1 {
				t.Fatalf("the answer was posted %d times", n)
			}
		})
	}
}

// TestGitHubSecondaryRateLimit: a 403 secondary rate limit delays the
// answer; it is never dropped.
func TestGitHubSecondaryRateLimit(t *testing.T) {
	w := startGitHub(t, nil)
	w.fake.SetPermission("alice", "write")
	w.ms.Push(modelserver.Step{Text: "worth the wait"})
	c := w.fake.AddComment("acme/widgets", 50, false, "alice", "x")
	if code := w.deliver("issue_comment", "", issueComment(50, false, c, "alice", "@sb-agent slowly"), githubSecret); code != 200 {
		t.Fatalf("deliver: %d", code)
	}
	w.session("github:acme/widgets#50")
	w.fake.SecondaryRateLimit(3)
	w.fake.WaitFor(t, patience, "the answer", func() bool {
		for _, c := range w.botComments("acme/widgets", 50) {
			if strings.Contains(c.Body, "worth the wait") {
				return true
			}
		}
		return false
	})
}
