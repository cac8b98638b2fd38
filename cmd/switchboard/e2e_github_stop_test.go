package main_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/fixtures/fakegithub"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// TestGitHubStopButtonInterrupts: the check run's Stop, clicked on GitHub
// while the agent works on a PR, reaches the running turn: it yields
// canceled, the model's held answer is never logged, and the check run
// completes.
func TestGitHubStopButtonInterrupts(t *testing.T) {
	const sha = "0123456789abcdef0123456789abcdef01234567"
	w := startGitHub(t, nil)
	w.fake.SetPermission("alice", "write")
	release := holdAnswer(t, w.ms) // the model thinks until the Stop is clicked
	w.ms.Push(modelserver.Step{Text: "An answer nobody should see."})
	kind, payload := labeled(7, true, sha, "alice", "sb-agent")
	if code := w.deliver(kind, "", payload, githubSecret); code != 200 {
		t.Fatalf("deliver: %d", code)
	}
	key := "github:acme/widgets#7"
	id := w.session(key)
	var run fakegithub.CheckRun
	w.fake.WaitFor(t, patience, "the check run in progress", func() bool {
		for _, cr := range w.fake.CheckRuns() {
			if strings.HasPrefix(cr.ExternalID, key+"@") && cr.Status == "in_progress" {
				run = cr
				return true
			}
		}
		return false
	})
	waitRequests(t, w.ms, 1)
	stop := map[string]any{"action": "requested_action", "installation": map[string]any{"id": installationID},
		"repository": ghRepo(), "sender": ghUser("alice"),
		"requested_action": map[string]any{"identifier": "stop"},
		"check_run": map[string]any{"id": run.ID, "external_id": run.ExternalID, "head_sha": sha,
			"app": map[string]any{"slug": w.fake.Slug}}}
	if code := w.deliver("check_run", "", stop, githubSecret); code != 200 {
		t.Fatalf("deliver the Stop: %d", code)
	}
	_, evs := w.srv.waitFor(id, "the turn canceled", func(st sessionState, evs []event) bool {
		return st.StopReason != nil && *st.StopReason == "canceled" && st.Status == "idle"
	})
	release()
	for _, e := range evs {
		if strings.Contains(string(e.Body), "An answer nobody should see.") {
			t.Fatalf("the held answer was logged after the Stop: %+v", e)
		}
	}
	var done fakegithub.CheckRun
	w.fake.WaitFor(t, patience, "the check run completed", func() bool {
		for _, cr := range w.fake.CheckRuns() {
			if cr.ID == run.ID && cr.Status == "completed" {
				done = cr
				return true
			}
		}
		return false
	})
	// A stopped turn can be retried: Retry replaces Stop.
	if done.Conclusion != "cancelled" || len(done.Actions) != 1 || !strings.Contains(fmt.Sprint(done.Actions), "identifier:retry") {
		t.Fatalf("the stopped turn's check run: %+v", done)
	}
}

// TestGitHubRetryButton: a turn that fails on a PR completes its check
// run as a failure with a Retry action; clicking it (a requested_action
// from someone with write access) runs the turn again, whose answer is
// posted once. The same click delivered again queues nothing.
func TestGitHubRetryButton(t *testing.T) {
	const sha = "0123456789abcdef0123456789abcdef01234567"
	w := startGitHub(t, nil)
	w.fake.SetPermission("alice", "write")
	w.ms.Push(modelserver.Step{Status: 401, ErrorMessage: "invalid x-api-key"})
	kind, payload := labeled(8, true, sha, "alice", "sb-agent")
	if code := w.deliver(kind, "", payload, githubSecret); code != 200 {
		t.Fatalf("deliver: %d", code)
	}
	key := "github:acme/widgets#8"
	id := w.session(key)
	var run fakegithub.CheckRun
	w.fake.WaitFor(t, patience, "the check run failed with a Retry action", func() bool {
		for _, cr := range w.fake.CheckRuns() {
			if strings.HasPrefix(cr.ExternalID, key+"@") && cr.Status == "completed" {
				run = cr
				return true
			}
		}
		return false
	})
	if run.Conclusion != "failure" || !strings.Contains(fmt.Sprint(run.Actions), "identifier:retry") {
		t.Fatalf("the failed turn's check run: %+v", run)
	}

	w.ms.Push(modelserver.Step{Text: "Fixed the flaky test."})
	retry := map[string]any{"action": "requested_action", "installation": map[string]any{"id": installationID},
		"repository": ghRepo(), "sender": ghUser("alice"),
		"requested_action": map[string]any{"identifier": "retry"},
		"check_run": map[string]any{"id": run.ID, "external_id": run.ExternalID, "head_sha": sha,
			"app": map[string]any{"slug": w.fake.Slug}}}
	for range 2 { // a click, and the same click delivered again
		if code := w.deliver("check_run", "", retry, githubSecret); code != 200 {
			t.Fatalf("deliver the Retry: %d", code)
		}
	}
	_, evs := w.srv.waitFor(id, "the retried turn", func(st sessionState, evs []event) bool {
		return st.StopReason != nil && *st.StopReason == "completed" && st.Status == "idle"
	})
	if n := count(evs, "user.retry"); n != 1 {
		t.Fatalf("%d retries logged, want 1: %v", n, types(evs))
	}
	// The retried turn completed: its run has no button left.
	w.fake.WaitFor(t, patience, "the retried turn's check run completed without buttons", func() bool {
		for _, cr := range w.fake.CheckRuns() {
			if cr.ID != run.ID && strings.HasPrefix(cr.ExternalID, key+"@") && cr.Status == "completed" {
				return cr.Conclusion == "success" && len(cr.Actions) == 0
			}
		}
		return false
	})
	w.fake.WaitFor(t, patience, "the answer on the PR", func() bool {
		n := 0
		for _, c := range w.fake.Comments("acme/widgets", 8) {
			if strings.Contains(c.Body, "Fixed the flaky test.") {
				n++
			}
		}
		return n == 1
	})
}
