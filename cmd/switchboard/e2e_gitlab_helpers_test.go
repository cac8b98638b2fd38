package main_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/fixtures/fakegitlab"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

const (
	gitlabSecret  = "gl-webhook-secret-test"
	gitlabToken   = "glpat-e2e-project-token"
	gitlabApp     = "sb-agent"
	gitlabProject = "acme/platform/widgets"
	gitlabHead    = "89abcdef0123456789abcdef0123456789abcdef"
)

// gitlabWorld is a serve child in single-project mode wired to a fake
// GitLab and the scripted model: a merge request !1 of a project in a
// nested group, a Developer (alice), a Guest (gus) and a stranger (sam).
type gitlabWorld struct {
	t       testing.TB
	ms      *modelserver.Server
	fake    *fakegitlab.Server
	srv     *server
	env     map[string]string
	app     *fakegitlab.User
	dev     *fakegitlab.User
	guest   *fakegitlab.User
	other   *fakegitlab.User
	project *fakegitlab.Project
	mr      *fakegitlab.Thread
}

func startGitLab(t *testing.T, extra map[string]string) *gitlabWorld {
	t.Helper()
	ms, hs := modelserver.Start(t)
	fake := fakegitlab.Start(t)
	w := &gitlabWorld{t: t, ms: ms, fake: fake}
	w.app = fake.AddUser(gitlabApp, gitlabToken)
	w.dev, w.guest, w.other = fake.AddUser("alice", ""), fake.AddUser("gus", ""), fake.AddUser("sam", "")
	// Public: anyone may comment, so only the role decides.
	w.project = fake.AddProject(gitlabProject, "public")
	fake.SetAccess(w.project.ID, w.app.ID, fakegitlab.Maintainer)
	fake.SetAccess(w.project.ID, w.dev.ID, fakegitlab.Developer)
	fake.SetAccess(w.project.ID, w.guest.ID, fakegitlab.Guest)
	w.mr = fake.AddMergeRequest(w.project.ID, 1, "Fix the widgets", "The gears slip on Mondays.", w.dev.ID, gitlabHead)
	w.env = modelEnv(hs.URL, modelserver.FormatAnthropic)
	// The app's username is left out: serve learns it from the token.
	w.env["SWITCHBOARD_GITLAB_URL"] = fake.URL
	w.env["SWITCHBOARD_GITLAB_WEBHOOK_SECRET"] = gitlabSecret
	w.env["SWITCHBOARD_GITLAB_TOKEN"] = gitlabToken
	w.env["SWITCHBOARD_GITLAB_PROJECT"] = gitlabProject
	for k, v := range extra {
		w.env[k] = v
	}
	w.srv = startServer(t, t.TempDir(), w.env)
	fake.SetHook(w.srv.url+"/webhooks/gitlab", gitlabSecret)
	return w
}

// restart starts serve again on the same data dir; the webhooks follow.
func (w *gitlabWorld) restart() {
	w.srv = w.srv.restart()
	w.fake.SetHook(w.srv.url+"/webhooks/gitlab", gitlabSecret)
}

// send delivers a webhook and returns the status.
func (w *gitlabWorld) send(d fakegitlab.Delivery) int {
	w.t.Helper()
	code, err := w.fake.Send(d)
	if err != nil {
		w.t.Fatal(err)
	}
	return code
}

// comment is a person's note on the merge request (in discussion, or a
// new thread when ""), as written and then delivered; it fails the test
// unless the delivery is answered with want.
func (w *gitlabWorld) comment(author *fakegitlab.User, body, discussion string, want int) (*fakegitlab.Note, fakegitlab.Delivery) {
	w.t.Helper()
	n := w.fake.AddNote(w.mr, author.ID, body, discussion, true)
	d := w.fake.NoteHook(n, "create")
	if code := w.send(d); code != want {
		w.t.Fatalf("deliver %q by %s: %d, want %d", body, author.Username, code, want)
	}
	return n, d
}

// appNotes are the app's notes on the merge request.
func (w *gitlabWorld) appNotes() []fakegitlab.Note { return w.fake.NotesBy(w.mr, w.app.ID) }

// appSaid waits for the app's note holding text and returns it.
func (w *gitlabWorld) appSaid(what, text string) fakegitlab.Note {
	w.t.Helper()
	var got fakegitlab.Note
	w.fake.WaitFor(w.t, patience, what, func() bool {
		i := slices.IndexFunc(w.appNotes(), func(n fakegitlab.Note) bool { return strings.Contains(n.Body, text) })
		if i >= 0 {
			got = w.appNotes()[i]
		}
		return i >= 0
	})
	return got
}

// said counts the app's notes holding text.
func (w *gitlabWorld) said(text string) int {
	n := 0
	for _, note := range w.appNotes() {
		if strings.Contains(note.Body, text) {
			n++
		}
	}
	return n
}

// status waits for the app's commit status on the head to be in state.
func (w *gitlabWorld) status(state string) fakegitlab.Status {
	w.t.Helper()
	var got fakegitlab.Status
	w.fake.WaitFor(w.t, patience, "the commit status "+state, func() bool {
		for _, s := range w.fake.Statuses(w.project.ID, gitlabHead) {
			if s.Name == "switchboard" && s.State == state {
				got = s
				return true
			}
		}
		return false
	})
	return got
}
