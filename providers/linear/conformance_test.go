package linear_test

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakelinear"
	"github.com/switchboardhq/switchboard/oauth"
	"github.com/switchboardhq/switchboard/providers"
	"github.com/switchboardhq/switchboard/providers/linear"
	"github.com/switchboardhq/switchboard/providers/providertest"
)

func TestConformance(t *testing.T) {
	providertest.Run(t, newConformance)
}

// conformance is Linear for the suite: an organization that installed
// the app, the conversation one agent session on an issue, the person
// the fake's member.
type conformance struct {
	fake    *fakelinear.Server
	issue   fakelinear.Issue
	session string // the agent session
	started bool
	earlier []fakelinear.Comment
	clicks  int // deliveries made for a person's click
}

func newConformance(t *testing.T) providertest.Platform {
	fake := fakelinear.New(t)
	issue := fake.SeedIssue(fakelinear.Issue{Title: "Widgets break on Mondays", Desc: "Steps: run it on a Monday."})
	return &conformance{fake: fake, issue: issue, session: "agent-session-conformance"}
}

func (c *conformance) Describe() providers.Platform { return linear.Module().Platform }

func (c *conformance) Build(d providers.Deps) (providers.Provider, error) {
	return linear.New(linear.Config{ClientID: c.fake.ClientID, ClientSecret: c.fake.ClientSecret, WebhookSecret: c.fake.WebhookSecret,
		APIURL: c.fake.URL(), PublicURL: d.PublicURL, Sessions: d.Store, Installations: d.Store, Sealer: d.Sealer, Intake: d.Intake,
		Logger: d.Logger, RequestsPerHour: 3_600_000, Burst: 1000})
}

// Install records the organization's installation with tokens the fake
// issued, as the OAuth install leaves it.
func (c *conformance) Install(t *testing.T, d providers.Deps) {
	c.fake.Token()
	grants := c.fake.TokensIssued()
	g := grants[len(grants)-1]
	in := &core.Installation{Provider: linear.Name, ExternalID: c.fake.Org.ID, Name: c.fake.Org.Name,
		Metadata: map[string]string{"app_user_id": c.fake.AppUserID, "organization_id": c.fake.Org.ID}}
	sealed, exp, err := (&oauth.Tokens{Sealer: d.Sealer}).Seal(in, oauth.TokenSet{AccessToken: g.Access, RefreshToken: g.Refresh, Expiry: g.ExpiresAt})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Store.SaveInstallation(t.Context(), in, sealed, exp); err != nil {
		t.Fatal(err)
	}
}

// Earlier: the comments before the mention, which Linear sends with the
// new agent session.
func (c *conformance) Earlier(_ *testing.T, text string) {
	c.earlier = append(c.earlier, fakelinear.Comment{Body: text, UserID: c.fake.HumanUserID})
}

// Mention: the first creates the agent session, the next are prompts in
// it.
func (c *conformance) Mention(t *testing.T, delivery, text string) providertest.Webhook {
	if !c.started {
		c.started = true
		return c.deliver(t, delivery, c.fake.CreatedEvent(fakelinear.SessionEvent{SessionID: c.session, Issue: c.issue,
			Comment: &fakelinear.Comment{Body: "@switchboard " + text}, PreviousComments: c.earlier}))
	}
	return c.prompt(t, delivery, text, "")
}

func (c *conformance) prompt(t *testing.T, delivery, text, signal string) providertest.Webhook {
	return c.deliver(t, delivery, c.fake.PromptedEvent(fakelinear.SessionEvent{SessionID: c.session, Issue: c.issue, Prompt: text, Signal: signal}))
}

// Redeliver: Linear-Delivery is not signed.
func (c *conformance) Redeliver(_ *testing.T, w providertest.Webhook, delivery string) providertest.Webhook {
	w = w.Clone()
	w.Header.Set("Linear-Delivery", delivery)
	return w
}

func (c *conformance) Own(t *testing.T, _, _ string) providertest.Webhook {
	t.Fatal("Linear delivers none of the agent's own activities")
	return providertest.Webhook{}
}

// Lacks: the gateway takes only AgentSessionEvents (a person creating an
// agent session or prompting in one) and Linear sends none for the
// activities the agent posts, so nothing of its own comes back.
func (c *conformance) Lacks(a providertest.Ability) string {
	if a == providertest.OwnMessages {
		return "Linear sends no webhook for the agent's own activities: only a person's prompt or new agent session is delivered"
	}
	return ""
}

// Stop is the stop signal, as Linear's Stop button sends it.
func (c *conformance) Stop(t *testing.T) providertest.Webhook {
	return c.prompt(t, c.click(), "Stop", "stop")
}

// Retry is the prompt "retry".
func (c *conformance) Retry(t *testing.T) providertest.Webhook {
	return c.prompt(t, c.click(), "retry", "")
}

// Answer is the prompt "allow" or "deny", as the elicitation's options
// send it.
func (c *conformance) Answer(t *testing.T, result string) providertest.Webhook {
	return c.prompt(t, c.click(), result, "")
}

// click is a fresh delivery id for a person's click.
func (c *conformance) click() string {
	c.clicks++
	return "conformance-click-" + strconv.Itoa(c.clicks)
}

func (c *conformance) deliver(t *testing.T, delivery string, body []byte) providertest.Webhook {
	w := providertest.FromRequest(t, c.fake.WebhookRequest("/webhooks/linear", body))
	w.Header.Set("Linear-Delivery", delivery)
	return w
}

// Posts are the agent session's activities, as "type: text".
func (c *conformance) Posts(*testing.T) []string {
	var out []string
	for _, a := range c.fake.Activities() {
		if a.SessionID != c.session {
			continue
		}
		text := a.Body
		if a.Type == "action" {
			text = a.Action + " → " + a.Result
		}
		out = append(out, a.Type+": "+text)
	}
	return out
}

// Status is the agent session's plan.
func (c *conformance) Status(t *testing.T) []string {
	s, ok := c.fake.Session(c.session)
	if !ok || s.Plan == nil {
		return nil
	}
	plan, err := json.Marshal(s.Plan)
	if err != nil {
		t.Fatal(err)
	}
	return []string{string(plan)}
}

func (c *conformance) WaitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	c.fake.WaitFor(t, d, what, cond)
}
