package github_test

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/fixtures/fakegithub"
	"github.com/switchboardhq/switchboard/providers"
	"github.com/switchboardhq/switchboard/providers/github"
	"github.com/switchboardhq/switchboard/providers/providertest"
)

func TestConformance(t *testing.T) {
	providertest.Run(t, newConformance)
}

const (
	conformanceSecret = "conformance-webhook-secret"
	conformanceRepo   = "acme/widgets"
	conformancePR     = 7
	conformanceHead   = "0123456789abcdef0123456789abcdef01234567"
	conformanceWriter = "alice"
)

// conformance is GitHub for the suite: the conversation is a pull
// request (whose check run carries Stop, Retry, Allow and Deny), the
// people commenting have write access.
type conformance struct {
	fake   *fakegithub.Server
	clicks int // deliveries made for clicks
}

func newConformance(t *testing.T) providertest.Platform {
	fake := fakegithub.Start(t)
	fake.SetPermission(conformanceWriter, "write")
	// The App writes to the repository too: only the loop guard keeps
	// its own comments from being taken, not the permission gate.
	fake.SetPermission(fake.Slug+"[bot]", "write")
	fake.SetHead(conformanceRepo, conformancePR, conformanceHead)
	return &conformance{fake: fake}
}

func (c *conformance) Describe() providers.Platform { return github.Module().Platform }

func (c *conformance) Build(d providers.Deps) (providers.Provider, error) {
	return github.New(github.Config{AppID: c.fake.AppID, PrivateKey: c.fake.KeyPEM, WebhookSecret: conformanceSecret, Slug: c.fake.Slug,
		APIURL: c.fake.APIURL(), WebURL: c.fake.URL, Sessions: d.Store, Installations: d.Store, Intake: d.Intake, Logger: d.Logger})
}

// Install: the provider records an installation from its first delivery.
func (c *conformance) Install(*testing.T, providers.Deps) {}

func (c *conformance) Earlier(_ *testing.T, text string) {
	c.fake.AddComment(conformanceRepo, conformancePR, false, "carol", text)
}

func (c *conformance) Mention(t *testing.T, delivery, text string) providertest.Webhook {
	return c.comment(t, delivery, conformanceWriter, "@"+c.fake.Slug+" "+text)
}

// comment is a comment by login on the pull request, as made and then
// delivered.
func (c *conformance) comment(t *testing.T, delivery, login, body string) providertest.Webhook {
	id := c.fake.AddComment(conformanceRepo, conformancePR, false, login, body)
	p := fakegithub.IssueCommentEvent(conformancePR, true, id, login, body)
	if strings.HasSuffix(login, "[bot]") {
		bot := map[string]any{"login": login, "id": 2, "type": "Bot"}
		p["sender"] = bot
		p["comment"].(map[string]any)["user"] = bot
	}
	return c.deliver(t, "issue_comment", delivery, p)
}

// Redeliver: X-GitHub-Delivery is not signed.
func (c *conformance) Redeliver(_ *testing.T, w providertest.Webhook, delivery string) providertest.Webhook {
	w = w.Clone()
	w.Header.Set("X-GitHub-Delivery", delivery)
	return w
}

// Own is a comment of the App's bot that mentions the App, as its
// questions do ("reply @app allow").
func (c *conformance) Own(t *testing.T, delivery, text string) providertest.Webhook {
	return c.comment(t, delivery, c.fake.Slug+"[bot]", text+" Reply `@"+c.fake.Slug+" allow`.")
}

func (c *conformance) Stop(t *testing.T) providertest.Webhook  { return c.click(t, "stop") }
func (c *conformance) Retry(t *testing.T) providertest.Webhook { return c.click(t, "retry") }

// Answer is the Allow or Deny button of the run asking about the call.
func (c *conformance) Answer(t *testing.T, result string) providertest.Webhook {
	return c.click(t, result)
}

// click waits for the pull request's check run showing the button, and
// clicks it.
func (c *conformance) click(t *testing.T, action string) providertest.Webhook {
	t.Helper()
	var run fakegithub.CheckRun
	c.fake.WaitFor(t, time.Minute, "a check run with "+action, func() bool {
		for _, cr := range c.runs() {
			if slices.Contains(cr.ActionIDs(), action) {
				run = cr
			}
		}
		return run.ID != 0
	})
	c.clicks++
	return c.deliver(t, "check_run", "conformance-click-"+strconv.Itoa(c.clicks), c.fake.RequestedActionEvent(run, conformanceWriter, action))
}

func (c *conformance) deliver(t *testing.T, event, delivery string, payload map[string]any) providertest.Webhook {
	body, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	return providertest.FromRequest(t, fakegithub.SignedRequest("/webhooks/github", conformanceSecret, event, delivery, body))
}

// runs are the App's check runs of the pull request's session.
func (c *conformance) runs() []fakegithub.CheckRun {
	var out []fakegithub.CheckRun
	for _, cr := range c.fake.CheckRuns() {
		if strings.HasPrefix(cr.ExternalID, "github:"+conformanceRepo+"#"+strconv.Itoa(conformancePR)+"@") {
			out = append(out, cr)
		}
	}
	return out
}

// Posts are the App's comments on the pull request.
func (c *conformance) Posts(*testing.T) []string {
	var out []string
	for _, cm := range c.fake.Comments(conformanceRepo, conformancePR) {
		if cm.User == c.fake.Slug+"[bot]" {
			out = append(out, cm.Body)
		}
	}
	return out
}

// Status is the session's check runs, their output as last set.
func (c *conformance) Status(*testing.T) []string {
	var out []string
	for _, cr := range c.runs() {
		out = append(out, cr.Title+"\n"+cr.Summary)
	}
	return out
}

func (c *conformance) WaitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	c.fake.WaitFor(t, d, what, cond)
}

func (c *conformance) Lacks(providertest.Ability) string { return "" }
