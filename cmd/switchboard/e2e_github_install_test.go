package main_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/fixtures/fakegithub"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

type githubInstallationView struct {
	ID         string            `json:"id"`
	Provider   string            `json:"provider"`
	ExternalID string            `json:"external_id"`
	Name       string            `json:"name"`
	Agent      string            `json:"agent"`
	Metadata   map[string]string `json:"metadata"`
}

// githubInstallations are the GitHub installations /v1/installations
// lists, by external id.
func (w *githubWorld) installations() map[string]githubInstallationView {
	w.t.Helper()
	code, raw := w.srv.do("GET", "/v1/installations?provider=github", nil)
	if code != 200 {
		w.t.Fatalf("list installations: %d %s", code, raw)
	}
	var page struct {
		Data []githubInstallationView `json:"data"`
	}
	mustJSON(w.t, raw, &page)
	out := map[string]githubInstallationView{}
	for _, in := range page.Data {
		out[in.ExternalID] = in
	}
	return out
}

// installState follows the gateway's install link and returns the state
// GitHub would carry back to the Setup URL.
func (w *githubWorld) installState() string {
	w.t.Helper()
	resp, err := noFollow.Get(w.srv.url + "/oauth/github/install")
	if err != nil {
		w.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		w.t.Fatalf("install: %d", resp.StatusCode)
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		w.t.Fatal(err)
	}
	if got, want := loc.Scheme+"://"+loc.Host+loc.Path, w.fake.URL+"/apps/"+w.fake.Slug+"/installations/new"; got != want {
		w.t.Fatalf("install sent the browser to %s, want %s", got, want)
	}
	s := loc.Query().Get("state")
	if s == "" {
		w.t.Fatalf("no state in %s", loc)
	}
	return s
}

func (w *githubWorld) callback(q url.Values) (int, string) {
	w.t.Helper()
	resp, err := http.Get(w.srv.url + "/oauth/github/callback?" + q.Encode())
	if err != nil {
		w.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func installationPayload(action string, id int64, repos ...string) map[string]any {
	list := []any{}
	for _, r := range repos {
		list = append(list, map[string]any{"id": 1, "name": r[strings.Index(r, "/")+1:], "full_name": r})
	}
	return map[string]any{"action": action, "sender": ghUser("acme-admin"), "repositories": list,
		"installation": map[string]any{"id": id, "app_id": 4242, "repository_selection": "selected",
			"account": map[string]any{"login": "acme", "type": "Organization"}}}
}

// TestGitHubInstall: the install link carries a state to the App's
// install page; the callback verifies the installation with the App JWT
// and records it; a replayed state or an installation the App cannot see
// records nothing; installation events track its repositories, and once
// it is deleted its mentions are ignored until it is installed again.
func TestGitHubInstall(t *testing.T) {
	w := startGitHub(t, nil)
	// The install page is on the web host, which only now is known.
	w.srv.term()
	w.env["GITHUB_WEB_URL"] = w.fake.URL
	w.srv = w.srv.restart()
	w.fake.SetPermission("alice", "write")
	w.fake.PutInstallation(fakegithub.Installation{ID: installationID, Account: "acme", AccountType: "Organization"})
	ext := strconv.Itoa(installationID)

	ok := url.Values{"installation_id": {ext}, "setup_action": {"install"}, "state": {w.installState()}}
	code, page := w.callback(ok)
	if code != 200 || !strings.Contains(page, "acme") {
		t.Fatalf("callback: %d %s", code, page)
	}
	in, found := w.installations()[ext]
	if !found || in.Name != "acme" || in.Agent != "" || in.Metadata["account_type"] != "Organization" || in.Metadata["status"] != "active" {
		t.Fatalf("installation %+v (found %v)", in, found)
	}
	verified := false
	for _, c := range w.fake.Calls() {
		verified = verified || (c.Method == "GET" && c.Path == "/app/installations/"+ext && c.Status == 200)
	}
	if !verified {
		t.Fatal("the callback did not verify the installation with GitHub")
	}

	t.Run("refused callbacks store nothing", func(t *testing.T) {
		for name, q := range map[string]url.Values{
			"replayed state": ok,
			"no state":       {"installation_id": {"778"}, "setup_action": {"install"}},
			"unknown installation": {"installation_id": {"778"}, "setup_action": {"install"},
				"state": {w.installState()}},
		} {
			if code, page := w.callback(q); code != 400 || !strings.Contains(page, "Install failed") {
				t.Fatalf("%s: %d %s", name, code, page)
			}
		}
		if list := w.installations(); len(list) != 1 {
			t.Fatalf("installations after refused callbacks: %+v", list)
		}
	})

	t.Run("events track repositories and the deletion", func(t *testing.T) {
		added := map[string]any{"action": "added", "repository_selection": "selected", "sender": ghUser("acme-admin"),
			"installation":         installationPayload("", installationID)["installation"],
			"repositories_added":   []any{map[string]any{"id": 2, "name": "widgets", "full_name": "acme/widgets"}},
			"repositories_removed": []any{}}
		if code := w.deliver("installation_repositories", "", added, githubSecret); code != 200 {
			t.Fatalf("installation_repositories: %d", code)
		}
		if got := w.installations()[ext].Metadata["repositories"]; got != "acme/widgets" {
			t.Fatalf("repositories %q", got)
		}
		if code := w.deliver("installation", "", installationPayload("deleted", installationID, "acme/widgets"), githubSecret); code != 200 {
			t.Fatalf("installation deleted: %d", code)
		}
		if got := w.installations()[ext].Metadata["status"]; got != "deleted" {
			t.Fatalf("status after deleted: %q", got)
		}
		c := w.fake.AddComment("acme/widgets", 70, false, "alice", "x")
		// The intake decides before its 200: nothing is left to happen.
		if code := w.deliver("issue_comment", "", issueComment(70, false, c, "alice", "@sb-agent are you there?"), githubSecret); code != 200 {
			t.Fatalf("mention after deletion: %d", code)
		}
		if list := w.sessionsFor("github:acme/widgets#70"); len(list) != 0 {
			t.Fatalf("a deleted installation's mention started %d sessions", len(list))
		}

		if code := w.deliver("installation", "", installationPayload("created", installationID, "acme/widgets"), githubSecret); code != 200 {
			t.Fatalf("installation created: %d", code)
		}
		w.ms.Push(modelserver.Step{Text: "back again"})
		c = w.fake.AddComment("acme/widgets", 70, false, "alice", "x")
		if code := w.deliver("issue_comment", "", issueComment(70, false, c, "alice", "@sb-agent now?"), githubSecret); code != 200 {
			t.Fatalf("mention after reinstall: %d", code)
		}
		w.session("github:acme/widgets#70")
		w.fake.WaitFor(t, patience, "the answer after the reinstall", func() bool {
			for _, c := range w.botComments("acme/widgets", 70) {
				if strings.Contains(c.Body, "back again") {
					return true
				}
			}
			return false
		})
	})
}

// TestGitHubCheckRunOnceAcrossSIGKILL: serve is killed after it created
// the PR's check run and before the sink recorded it; after the restart
// the run is found by its intent (external id) and carried through, and
// there is still exactly one.
func TestGitHubCheckRunOnceAcrossSIGKILL(t *testing.T) {
	const sha = "fedcba9876543210fedcba9876543210fedcba98"
	w := startGitHub(t, map[string]string{"SWITCHBOARD_TEST_GITHUB_PARK": "after_check_run"})
	w.fake.SetPermission("alice", "write")
	// The turn runs beside the parked sink: its model call hangs until the
	// SIGKILL, so the answer comes from the restarted process, whenever
	// the first one got to ask.
	w.ms.Push(modelserver.Step{Hang: true}, modelserver.Step{Text: "checked once"})
	event, payload := labeled(80, true, sha, "alice", "sb-agent")
	if code := w.deliver(event, "", payload, githubSecret); code != 200 {
		t.Fatalf("deliver: %d", code)
	}
	key := "github:acme/widgets#80"
	id := w.session(key)
	runs := func() []fakegithub.CheckRun {
		var out []fakegithub.CheckRun
		for _, cr := range w.fake.CheckRuns() {
			if strings.HasPrefix(cr.ExternalID, key+"@") {
				out = append(out, cr)
			}
		}
		return out
	}
	w.fake.WaitFor(t, patience, "the check run created", func() bool { return len(runs()) == 1 })
	w.srv.waitParked("github after_check_run")
	waitRequests(t, w.ms, 1)
	w.srv.kill()
	delete(w.env, "SWITCHBOARD_TEST_GITHUB_PARK")
	w.srv = w.srv.restart()
	w.srv.waitIdle(id)
	// The sink renders a session's log in order: once a run is completed
	// at the turn's end, a second run for the turn would have been made.
	w.fake.WaitFor(t, patience, "a check run completed", func() bool {
		for _, cr := range runs() {
			if cr.Status == "completed" {
				return true
			}
		}
		return false
	})
	list := runs()
	if len(list) != 1 || strings.Join(list[0].Statuses, ",") != "queued,in_progress,completed" {
		t.Fatalf("check runs after the restart: %+v", list)
	}
}

// TestGitHubContextFirstTurnOnly: the issue's body reaches the model on
// the session's first turn; a later mention steers with its comment only,
// so the second turn's request holds the body once (from the first turn's
// history), not twice.
func TestGitHubContextFirstTurnOnly(t *testing.T) {
	w := startGitHub(t, nil)
	w.fake.SetPermission("alice", "write")
	const body = "Steps: run it on a Monday." // the body of fakegithub's issue payload
	w.ms.Push(modelserver.Step{Text: "first answer"})
	c := w.fake.AddComment("acme/widgets", 90, false, "alice", "x")
	if code := w.deliver("issue_comment", "", issueComment(90, false, c, "alice", "@sb-agent first question"), githubSecret); code != 200 {
		t.Fatalf("deliver: %d", code)
	}
	id := w.session("github:acme/widgets#90")
	w.srv.waitFor(id, "the first answer", func(s sessionState, evs []event) bool {
		return count(evs, "turn.completed") == 1 && s.Status == "idle"
	})
	w.ms.Push(modelserver.Step{Text: "second answer"})
	c = w.fake.AddComment("acme/widgets", 90, false, "alice", "x")
	if code := w.deliver("issue_comment", "", issueComment(90, false, c, "alice", "@sb-agent second question"), githubSecret); code != 200 {
		t.Fatalf("deliver: %d", code)
	}
	w.srv.waitFor(id, "the second answer", func(s sessionState, evs []event) bool {
		return count(evs, "turn.completed") == 2 && s.Status == "idle"
	})
	reqs := w.ms.Requests()
	if len(reqs) < 2 {
		t.Fatalf("%d model requests", len(reqs))
	}
	occurrences := func(r modelserver.Request, s string) int {
		raw, _ := json.Marshal(r.Messages)
		return strings.Count(string(raw), s)
	}
	firstReq, last := reqs[0], reqs[len(reqs)-1]
	if occurrences(firstReq, body) != 1 || occurrences(firstReq, "Widgets break on Mondays") != 1 {
		t.Fatalf("the first turn lacks the issue: %+v", firstReq.Messages)
	}
	if n := occurrences(last, body); n != 1 {
		t.Fatalf("the second turn's request holds the body %d times", n)
	}
	if occurrences(last, "second question") != 1 {
		t.Fatal("the second turn lacks the new comment")
	}
}
