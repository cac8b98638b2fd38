package main_test

import (
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
	w.fake.WaitFor(t, patience, "the check run completed", func() bool {
		for _, cr := range w.fake.CheckRuns() {
			if cr.ID == run.ID && cr.Status == "completed" {
				return true
			}
		}
		return false
	})
}
