package main_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/fixtures/mcpservers"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

const gitlabKey = "gitlab:" + gitlabProject + "!1"

// TestGitLabMergeRequestNotes is GitLab's acceptance 3 and 4 on one merge
// request: a Guest's mention and a stranger's are ignored; a bad token is
// 401 and stores nothing; a Developer's mention starts one session whose
// answer is a reply in the mention's discussion, with 👀 on the mention
// and the turn as a commit status linking to the session's page; the same
// delivery sent again (same Idempotency-Key, new event UUID) and the
// app's own note add nothing; a reply in the thread without a mention
// steers the session; an ask-first tool call waits for "@app allow",
// which a Guest cannot give and a Developer can, logged with who
// answered.
func TestGitLabMergeRequestNotes(t *testing.T) {
	mcpSrv := mcpservers.NewMCPGoHTTP()
	t.Cleanup(mcpSrv.Close)
	w := startGitLab(t, map[string]string{"SWITCHBOARD_SANDBOX": "none"})
	if code, raw := w.srv.do("POST", "/v1/agents/default", map[string]any{
		"mcp_servers": []map[string]any{{"name": "docs", "url": mcpSrv.URL, "tool_policies": map[string]string{"echo": "always_ask"}}},
	}); code != 200 {
		t.Fatalf("give the default agent an ask-first tool: %d %s", code, raw)
	}

	// The intake decides before the 200: nothing stored by then is
	// nothing stored.
	w.comment(w.guest, "@"+gitlabApp+" please merge this", "", 200)
	w.comment(w.other, "@"+gitlabApp+" please merge this", "", 200)
	n := w.fake.AddNote(w.mr, w.dev.ID, "@"+gitlabApp+" forged", "", true)
	if code := w.send(w.fake.NoteHook(n, "create").WithToken("not-the-secret")); code != 401 {
		t.Fatalf("a bad token: %d, want 401", code)
	}
	if got := w.srv.sessionsByKey(gitlabKey); len(got) != 0 {
		t.Fatalf("a Guest's mention, a stranger's and a forged one made sessions: %+v", got)
	}

	w.ms.Push(modelserver.Step{Text: "The gear is loose."})
	mention, delivery := w.comment(w.dev, "@"+gitlabApp+" why do the widgets break?", "", 200)
	id := w.srv.sessionByKey(gitlabKey)
	if st := w.srv.session(id); st.Tenant != "gitlab:"+gitlabProject || st.Origin.Title != "Fix the widgets" {
		t.Fatalf("tenant %q, origin title %q: want the project's, and the merge request's title", st.Tenant, st.Origin.Title)
	}
	answer := w.appSaid("the answer", "The gear is loose.")
	if answer.DiscussionID != mention.DiscussionID {
		t.Fatalf("the answer is in discussion %s, want the mention's %s", answer.DiscussionID, mention.DiscussionID)
	}
	w.fake.WaitFor(t, patience, "👀 on the mention", func() bool {
		for _, n := range w.fake.Notes(w.mr) {
			if n.ID == mention.ID {
				return len(n.Awards) == 1 && n.Awards[0] == "eyes:"+gitlabApp
			}
		}
		return false
	})
	done := w.status("success")
	if !strings.HasSuffix(done.TargetURL, "/sessions/"+id) || done.States[0] != "running" {
		t.Fatalf("the commit status %+v: want running then success, linking to the session's page", done)
	}
	_, evs := w.srv.waitIdle(id)
	checkLog(t, evs)
	if !modelSaw(w.ms, "why do the widgets break?") || !modelSaw(w.ms, "The gears slip on Mondays.") {
		t.Fatal("the model did not see the mention and the merge request's description")
	}

	// GitLab retries with the same Idempotency-Key and a new event UUID.
	if code := w.send(delivery.Retry()); code != 200 {
		t.Fatalf("the retry: %d", code)
	}
	// Another note under the same Idempotency-Key: only that key can
	// dedupe it (its note id and text are new).
	replay := w.fake.NoteHook(w.fake.AddNote(w.mr, w.dev.ID, "@"+gitlabApp+" a replay under the first key", mention.DiscussionID, true), "create")
	replay.Header.Set("Idempotency-Key", delivery.Header.Get("Idempotency-Key"))
	if code := w.send(replay); code != 200 {
		t.Fatalf("the replay under the first key: %d", code)
	}
	// The intake stores before the 200: a replay taken would be queued
	// now, or already in the log.
	if code, raw := w.srv.do("GET", "/v1/sessions/"+id+"/pending", nil); code != 200 || strings.Contains(string(raw), "a replay under the first key") {
		t.Fatalf("the replay under the first key was queued: %d %s", code, raw)
	}
	w.comment(w.app, "Done. Reply `@"+gitlabApp+" allow` to go on.", mention.DiscussionID, 200)
	if got := w.srv.sessionsByKey(gitlabKey); len(got) != 1 {
		t.Fatalf("%d sessions for one merge request", len(got))
	}
	if n := humanMessages(w.srv.events(id)); n != 1 {
		t.Fatalf("%d people's messages after a retried delivery and the app's own note, want 1", n)
	}

	// A reply in the thread, without a mention, steers the session.
	w.ms.Push(modelserver.Step{Text: "Then tighten the blue gear."})
	w.comment(w.dev, "it is the blue one", mention.DiscussionID, 200)
	steered := w.appSaid("the steered answer", "Then tighten the blue gear.")
	if steered.DiscussionID != mention.DiscussionID || !modelSaw(w.ms, "it is the blue one") {
		t.Fatalf("the steered answer %+v: want it in the mention's discussion", steered)
	}
	w.srv.waitIdle(id)

	// Approval: a Guest's allow answers nothing, a Developer's does.
	w.ms.Push(call("tu_echo", "mcp_docs_echo", map[string]any{"text": "allowed"}), modelserver.Step{Text: "Echoed it."})
	w.comment(w.dev, "@"+gitlabApp+" echo something", mention.DiscussionID, 200)
	w.srv.waitFor(id, "requires_action", func(st sessionState, _ []event) bool {
		return st.Status == "awaiting_input" && st.StopReason != nil && *st.StopReason == "requires_action"
	})
	if q := w.appSaid("the question", "waits for approval"); !strings.Contains(q.Body, "mcp_docs_echo") || !strings.Contains(q.Body, `"allowed"`) {
		t.Fatalf("the question %q does not name the tool and its arguments", q.Body)
	}
	w.comment(w.guest, "@"+gitlabApp+" allow", mention.DiscussionID, 200)
	w.appSaid("the Guest told", "only members with the Developer role or above")
	if st := w.srv.session(id); st.Status != "awaiting_input" {
		t.Fatalf("a Guest's allow moved the session to %s", st.Status)
	}
	w.comment(w.dev, "@"+gitlabApp+" allow", mention.DiscussionID, 200)
	w.appSaid("the answer after the approval", "Echoed it.")
	_, evs = w.srv.waitIdle(id)
	var confirmations []string
	for _, e := range evs {
		if e.Type == "user.tool_confirmation" {
			var b struct{ Result, Message string }
			_ = json.Unmarshal(e.Body, &b)
			confirmations = append(confirmations, b.Result+" "+b.Message)
		}
	}
	if len(confirmations) != 1 || confirmations[0] != "allow by GitLab user alice" {
		t.Fatalf("confirmations %q, want alice's allow only", confirmations)
	}
	// GitLab refuses running → running (the fake as well): the turns ran
	// a tool and waited for approval, and no status update was refused.
	for _, c := range w.fake.CallsTo("POST", "/statuses/") {
		if c.Status != 201 {
			t.Fatalf("a commit status update was answered %d: %+v", c.Status, c.Body)
		}
	}
}

// TestGitLabStopByNote: "@app stop" from a Developer interrupts the
// running turn; the commit status ends canceled and the held answer is
// never posted.
func TestGitLabStopByNote(t *testing.T) {
	w := startGitLab(t, nil)
	release := holdAnswer(t, w.ms) // the model thinks until the stop
	w.ms.Push(modelserver.Step{Text: "An answer nobody should see."})
	mention, _ := w.comment(w.dev, "@"+gitlabApp+" think hard", "", 200)
	id := w.srv.sessionByKey(gitlabKey)
	running := w.status("running")
	if !strings.Contains(running.Description, "stop") {
		t.Fatalf("the running status %+v does not say how to stop", running)
	}
	waitRequests(t, w.ms, 1)
	w.comment(w.dev, "@"+gitlabApp+" stop", mention.DiscussionID, 200)
	_, evs := w.srv.waitFor(id, "the turn canceled", func(st sessionState, _ []event) bool {
		return st.StopReason != nil && *st.StopReason == "canceled" && st.Status == "idle"
	})
	release()
	for _, e := range evs {
		if strings.Contains(string(e.Body), "An answer nobody should see.") {
			t.Fatalf("the held answer was logged after the stop: %+v", e)
		}
	}
	w.status("canceled")
}

// TestGitLabAnswerOnceAcrossSIGKILL: serve is killed after the model
// answered and before (or after) the note was posted; after the restart
// the answer is in the discussion exactly once.
func TestGitLabAnswerOnceAcrossSIGKILL(t *testing.T) {
	for _, park := range []string{"before_post", "after_post"} {
		t.Run(park, func(t *testing.T) {
			w := startGitLab(t, map[string]string{"SWITCHBOARD_TEST_GITLAB_PARK": park})
			w.ms.Push(modelserver.Step{Text: "the one and only answer"})
			mention, _ := w.comment(w.dev, "@"+gitlabApp+" answer once", "", 200)
			id := w.srv.sessionByKey(gitlabKey)
			w.srv.waitFor(id, "the answer logged", func(_ sessionState, evs []event) bool { return count(evs, "agent.message") == 1 })
			if park == "after_post" {
				w.appSaid("the answer", "the one and only answer")
			}
			w.srv.waitParked("gitlab " + park)
			if n := w.said("the one and only answer"); park == "before_post" && n != 0 {
				t.Fatalf("posted before the park point: %d", n)
			}
			w.srv.kill()
			delete(w.env, "SWITCHBOARD_TEST_GITLAB_PARK")
			w.restart()
			note := w.appSaid("the answer after the restart", "the one and only answer")
			w.srv.waitIdle(id)
			// The sink renders a session's log in order: once the status
			// shows the turn's end, a second post would have been made.
			w.status("success")
			if n := w.said("the one and only answer"); n != 1 || note.DiscussionID != mention.DiscussionID {
				t.Fatalf("the answer was posted %d times (in discussion %s, want %s)", n, note.DiscussionID, mention.DiscussionID)
			}
		})
	}
}

// TestGitLabAnswerRunsNoQuickAction: GitLab runs a note's quick actions
// as its author; an answer whose line reads "/label ~sb-agent" (the
// model's, or quoted from anyone) is posted so that it labels nothing.
func TestGitLabAnswerRunsNoQuickAction(t *testing.T) {
	w := startGitLab(t, map[string]string{"SWITCHBOARD_SANDBOX": "none"})
	w.ms.Push(modelserver.Step{Text: "Labelled it.\n/label ~" + gitlabApp + "\n/close"})
	w.comment(w.dev, "@"+gitlabApp+" label this", "", 200)
	answer := w.appSaid("the answer", "Labelled it.")
	if !strings.Contains(answer.Body, "label ~"+gitlabApp) {
		t.Fatalf("the answer %q lost the line", answer.Body)
	}
	w.srv.waitIdle(w.srv.sessionByKey(gitlabKey))
	if got := w.fake.LabelsOf(w.mr); len(got) != 0 {
		t.Fatalf("the answer labelled the merge request %q", got)
	}
}
