package gitlab_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/fixtures/fakegitlab"
	"github.com/switchboardhq/switchboard/providers"
	"github.com/switchboardhq/switchboard/providers/gitlab"
	"github.com/switchboardhq/switchboard/providers/providertest"
)

func TestConformance(t *testing.T) {
	providertest.Run(t, newConformance)
}

const (
	conformanceSecret  = "conformance-webhook-secret"
	conformanceProject = "acme/platform/widgets"
	conformanceHead    = "0123456789abcdef0123456789abcdef01234567"
	conformanceApp     = "sb-agent"
	conformanceToken   = "glpat-conformance"
	conformanceSigning = "whsec_c2lnbmluZyB0b2tlbiBvZiB0aGUgY29uZm9ybWFuY2Ugc3VpdGU="
)

// conformance is GitLab for the suite: the conversation is a merge
// request in a nested group (its commit status shows the turn), the
// person mentioning the app a Developer, the answers in the mention's
// discussion.
type conformance struct {
	fake       *fakegitlab.Server
	project    *fakegitlab.Project
	mr         *fakegitlab.Thread
	app        *fakegitlab.User
	dev        *fakegitlab.User
	discussion string
}

func newConformance(t *testing.T) providertest.Platform {
	fake := fakegitlab.Start(t)
	c := &conformance{fake: fake}
	c.app = fake.AddUser(conformanceApp, conformanceToken)
	c.dev = fake.AddUser("alice", "")
	c.project = fake.AddProject(conformanceProject, "private")
	// The app's project token is a Maintainer of the project: only the
	// loop guard keeps its own notes from being taken, not the role.
	fake.SetAccess(c.project.ID, c.app.ID, fakegitlab.Maintainer)
	fake.SetAccess(c.project.ID, c.dev.ID, fakegitlab.Developer)
	c.mr = fake.AddMergeRequest(c.project.ID, 7, "Fix the widgets", "The gears slip.", c.dev.ID, conformanceHead)
	fake.SetHook("", conformanceSecret)
	// GitLab's token proves the sender, not the body: the suite's
	// tampered bodies are caught by the signing token's signature.
	if err := fake.SetSigningToken(conformanceSigning); err != nil {
		t.Fatal(err)
	}
	return c
}

func (c *conformance) Describe() providers.Platform { return gitlab.Module().Platform }

func (c *conformance) Build(d providers.Deps) (providers.Provider, error) {
	return gitlab.New(gitlab.Config{URL: c.fake.URL, WebhookSecret: conformanceSecret, SigningToken: conformanceSigning, Token: conformanceToken, Project: conformanceProject,
		PublicURL: d.PublicURL, Sessions: d.Store, Installations: d.Store, Intake: d.Intake, Logger: d.Logger})
}

// Install: the provider records its project's installation at start.
func (c *conformance) Install(*testing.T, providers.Deps) {}

func (c *conformance) Earlier(_ *testing.T, text string) {
	c.fake.AddNote(c.mr, c.fake.AddUser("carol", "").ID, text, "", false)
}

// Mention: the first starts a thread on the merge request, later ones
// reply in it.
func (c *conformance) Mention(t *testing.T, delivery, text string) providertest.Webhook {
	return c.note(t, delivery, c.dev.ID, "@"+conformanceApp+" "+text)
}

func (c *conformance) note(t *testing.T, delivery string, author int64, body string) providertest.Webhook {
	n := c.fake.AddNote(c.mr, author, body, c.discussion, true)
	if c.discussion == "" {
		c.discussion = n.DiscussionID
	}
	d := c.fake.NoteHook(n, "create")
	d.Header.Set("Idempotency-Key", delivery)
	return webhook(d)
}

func webhook(d fakegitlab.Delivery) providertest.Webhook {
	return providertest.Webhook{Path: "/webhooks/gitlab", Header: d.Header, Body: bytes.Clone(d.Body)}
}

// Redeliver: the same note told under another Idempotency-Key (and event
// UUID), as a replay with a stolen token may be.
func (c *conformance) Redeliver(_ *testing.T, w providertest.Webhook, delivery string) providertest.Webhook {
	d := fakegitlab.Delivery{Header: w.Header, Body: w.Body}.Retry()
	d.Header.Set("Idempotency-Key", delivery)
	return webhook(d)
}

// Own is a note of the app's user that mentions it, as its questions do
// ("reply @app allow").
func (c *conformance) Own(t *testing.T, delivery, text string) providertest.Webhook {
	return c.note(t, delivery, c.app.ID, text+" Reply `@"+conformanceApp+" allow`.")
}

// Stop is "@app stop" once the commit status shows the turn running.
func (c *conformance) Stop(t *testing.T) providertest.Webhook {
	c.WaitFor(t, time.Minute, "a running commit status", func() bool {
		return slices.ContainsFunc(c.fake.Statuses(c.project.ID, conformanceHead), func(s fakegitlab.Status) bool { return s.State == "running" })
	})
	return c.note(t, "conformance-stop", c.dev.ID, "@"+conformanceApp+" stop")
}

// Retry is "@app retry" once the failure is told.
func (c *conformance) Retry(t *testing.T) providertest.Webhook {
	c.waitPost(t, "retry")
	return c.note(t, "conformance-retry", c.dev.ID, "@"+conformanceApp+" retry")
}

// Answer is "@app allow|deny" once the question is asked.
func (c *conformance) Answer(t *testing.T, result string) providertest.Webhook {
	c.waitPost(t, "allow")
	return c.note(t, "conformance-"+result, c.dev.ID, "@"+conformanceApp+" "+result)
}

func (c *conformance) waitPost(t *testing.T, text string) {
	t.Helper()
	c.WaitFor(t, time.Minute, "a note saying "+text, func() bool {
		return slices.ContainsFunc(c.Posts(t), func(p string) bool { return strings.Contains(p, text) })
	})
}

// Posts are the app's notes on the merge request.
func (c *conformance) Posts(*testing.T) []string {
	var out []string
	for _, n := range c.fake.NotesBy(c.mr, c.app.ID) {
		out = append(out, n.Body)
	}
	return out
}

// Status is the commit statuses on the merge request's head.
func (c *conformance) Status(*testing.T) []string {
	var out []string
	for _, s := range c.fake.Statuses(c.project.ID, conformanceHead) {
		out = append(out, s.Name+" "+s.State+": "+s.Description)
	}
	return out
}

func (c *conformance) WaitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	c.fake.WaitFor(t, d, what, cond)
}

// Lacks: GitLab refuses to set a running commit status running again
// (and keeps its description), and an answer is a note, not a place
// to show progress.
func (c *conformance) Lacks(a providertest.Ability) string {
	if a == providertest.LivePlan {
		return "GitLab refuses running → running on a commit status (\"Cannot transition status via :run from :running\"): its description stays the turn's first until the turn ends"
	}
	return ""
}
