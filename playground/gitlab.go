package playground

import (
	"bytes"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakegitlab"
	"github.com/switchboardhq/switchboard/fixtures/tb"
)

// The simulated GitLab project, its merge request, and the person the
// page speaks for there.
const (
	gitlabProject = "acme/platform/widgets"
	gitlabMR      = 1
	gitlabHead    = "9c1d3e5f7a9b1c3d5e7f9a1b3c5d7e9f1a3b5c7d"
	gitlabUser    = "you"
	gitlabApp     = "sb-agent"
)

// gitlabWorld is the simulated GitLab: a project access token of the
// app's user, a Developer (the person) and the merge request.
type gitlabWorld struct {
	fake    *fakegitlab.Server
	token   string // the project access token
	hook    string // the webhook's secret token
	app     *fakegitlab.User
	person  *fakegitlab.User
	project *fakegitlab.Project
	mr      *fakegitlab.Thread
}

func newGitLab(t tb.TB) *gitlabWorld {
	g := &gitlabWorld{fake: fakegitlab.Start(t), token: "glpat-" + secret(), hook: secret()}
	g.app = g.fake.AddUser(gitlabApp, g.token)
	g.person = g.fake.AddUser(gitlabUser, "")
	carol := g.fake.AddUser("carol", "")
	g.project = g.fake.AddProject(gitlabProject, "private")
	g.fake.SetAccess(g.project.ID, g.app.ID, fakegitlab.Developer)
	g.fake.SetAccess(g.project.ID, g.person.ID, fakegitlab.Developer)
	g.fake.SetAccess(g.project.ID, carol.ID, fakegitlab.Developer)
	g.mr = g.fake.AddMergeRequest(g.project.ID, gitlabMR, "Widgets break on Mondays", "Steps: run it on a Monday.", carol.ID, gitlabHead)
	g.fake.SetDiffs(g.mr, []fakegitlab.Diff{{OldPath: "widget.go", NewPath: "widget.go", Diff: widgetPatch}})
	g.fake.AddFile(g.project.ID, gitlabHead, "widget.go", widgetFile)
	return g
}

// env is the gateway's variables for the simulated GitLab: the
// single-project mode.
func (g *gitlabWorld) env() map[string]string {
	return map[string]string{
		"SWITCHBOARD_GITLAB_URL":            g.fake.URL,
		"SWITCHBOARD_GITLAB_WEBHOOK_SECRET": g.hook,
		"SWITCHBOARD_GITLAB_TOKEN":          g.token,
		"SWITCHBOARD_GITLAB_PROJECT":        gitlabProject,
		"SWITCHBOARD_GITLAB_USERNAME":       gitlabApp,
	}
}

// gitlabMention is how a person names the bot on the page.
var gitlabMention = regexp.MustCompile(`(?i)@switchboard\b`)

// gitlabNote writes a note on the merge request as the person: a new
// thread, or a reply in discussion; GitLab then delivers its Note Hook.
func (w *world) gitlabNote(body, discussion string) error {
	g := w.gitlab
	if discussion != "" && !slices.ContainsFunc(g.fake.Notes(g.mr), func(n fakegitlab.Note) bool { return n.DiscussionID == discussion }) {
		return fmt.Errorf("no discussion %q on !%d: %w", discussion, gitlabMR, core.ErrNotFound)
	}
	body = gitlabMention.ReplaceAllString(body, "@"+gitlabApp)
	g.fake.SetHook(w.gateway+"/webhooks/gitlab", g.hook)
	n := g.fake.AddNote(g.mr, g.person.ID, body, discussion, true)
	d := g.fake.NoteHook(n, "create")
	req, err := http.NewRequest(http.MethodPost, w.gateway+"/webhooks/gitlab", bytes.NewReader(d.Body))
	if err != nil {
		return err
	}
	req.Header = d.Header
	return w.deliver(req)
}

// gitlabView is the merge request as GitLab shows it: its discussions
// and the commit statuses of its head.
type gitlabView struct {
	Project     string             `json:"project"`
	IID         int                `json:"iid"`
	Title       string             `json:"title"`
	App         string             `json:"app"`
	Discussions []gitlabDiscussion `json:"discussions"`
	Statuses    []gitlabStatus     `json:"statuses"`
}

type gitlabDiscussion struct {
	ID    string       `json:"id"`
	Notes []gitlabNote `json:"notes"`
}

type gitlabNote struct {
	Author string   `json:"author"`
	Bot    bool     `json:"bot"`
	Body   string   `json:"body"`
	Edited bool     `json:"edited,omitempty"`
	Awards []string `json:"awards,omitempty"`
}

type gitlabStatus struct {
	Name        string `json:"name"`
	State       string `json:"state"`
	Description string `json:"description,omitempty"`
}

func (w *world) gitlabView() gitlabView {
	g := w.gitlab
	v := gitlabView{Project: gitlabProject, IID: gitlabMR, Title: g.mr.Title, App: gitlabApp, Discussions: []gitlabDiscussion{}, Statuses: []gitlabStatus{}}
	index := map[string]int{}
	for _, n := range g.fake.Notes(g.mr) {
		if n.System {
			continue
		}
		i, ok := index[n.DiscussionID]
		if !ok {
			i = len(v.Discussions)
			index[n.DiscussionID] = i
			v.Discussions = append(v.Discussions, gitlabDiscussion{ID: n.DiscussionID, Notes: []gitlabNote{}})
		}
		author := "user " + strconv.FormatInt(n.AuthorID, 10)
		switch n.AuthorID {
		case g.app.ID:
			author = gitlabApp
		case g.person.ID:
			author = gitlabUser
		}
		v.Discussions[i].Notes = append(v.Discussions[i].Notes, gitlabNote{Author: author, Bot: n.AuthorID == g.app.ID,
			Body: htmlComment.ReplaceAllString(n.Body, ""), Edited: n.Edits > 0, Awards: awardNames(n.Awards)})
	}
	for _, s := range g.fake.Statuses(g.project.ID, gitlabHead) {
		v.Statuses = append(v.Statuses, gitlabStatus{Name: s.Name, State: s.State, Description: s.Description})
	}
	return v
}

// awardNames are the emoji of a note's awards ("name:username").
func awardNames(awards []string) []string {
	var out []string
	for _, a := range awards {
		name, _, _ := strings.Cut(a, ":")
		out = append(out, name)
	}
	return out
}
